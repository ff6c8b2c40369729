/** POST /v1/chat/completions: OpenAI's chat completions, or a named prompt. */
import { MODEL_ROLES } from '../../domain/access/roles.ts';
import { defineOperation } from '../operation.ts';
import { chatDoc } from './docs.ts';
import { chatWeb } from './operation.ts';
import { ChatPayloadSchema } from './payload.ts';
import { ChatCompletionBodySchema } from './request-schema.ts';
import { chatRunner } from './run.ts';
import { chatCache } from './cache.ts';

/** The chat completion operation. */
export const chat = defineOperation({
  name: 'chat',
  method: 'POST',
  path: '/v1/chat/completions',
  body: ChatCompletionBodySchema,
  doc: chatDoc,
  permission: { name: 'chat.create', roles: MODEL_ROLES, describe: 'create chat completions' },
  dialect: 'openai',
  web: chatWeb,
  payload: ChatPayloadSchema,
  runner: chatRunner,
  genAiOperation: 'chat',
  cache: chatCache,
});
