/** POST /v1/responses: OpenAI's Responses API; the kept responses' own routes are the web tier's (src/web/routes/v1/responses.ts). */
import { MODEL_ROLES } from '../../domain/access/roles.ts';
import { ResponsesRequestSchema } from '../../wire/openai-responses.ts';
import { defineOperation } from '../operation.ts';
import { responsesDoc } from './docs.ts';
import { responsesWeb } from './operation.ts';
import { ResponsesPayloadSchema } from './payload.ts';
import { responsesRunner } from './run.ts';

/** The Responses operation. */
export const responses = defineOperation({
  name: 'responses',
  method: 'POST',
  path: '/v1/responses',
  body: ResponsesRequestSchema,
  doc: responsesDoc,
  permission: { name: 'responses.create', roles: MODEL_ROLES, describe: 'create responses' },
  dialect: 'openai',
  web: responsesWeb,
  payload: ResponsesPayloadSchema,
  runner: responsesRunner,
  // OpenAI's Responses are chats in the GenAI conventions' terms.
  genAiOperation: 'chat',
});
