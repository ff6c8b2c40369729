/** POST /v1/responses/compact: OpenAI's compaction of a Responses conversation, summarized by the requested model. */
import { MODEL_ROLES } from '../../domain/access/roles.ts';
import { ResponsesCompactRequestSchema } from '../../wire/openai-responses-compact.ts';
import { defineOperation } from '../operation.ts';
import { compactDoc } from './docs.ts';
import { compactWeb } from './operation.ts';
import { COMPACT_PATH } from './param-names.ts';
import { CompactPayloadSchema } from './payload.ts';
import { compactRunner } from './run.ts';

/**
 * The compaction operation. Its kind, `responses_compact`, names its jobs and usage records: the
 * route's path as one identifier (`responses` and `responses_compact` sort together in a usage
 * report, and neither is taken for the other), in snake_case as the usage API's fields are.
 */
export const responsesCompact = defineOperation({
  name: 'responses_compact',
  method: 'POST',
  path: COMPACT_PATH,
  body: ResponsesCompactRequestSchema,
  doc: compactDoc,
  // The Responses API's own right: a client that may create responses compacts them too (Codex
  // needs both), as count_tokens takes Messages' right.
  permission: { name: 'responses.create', roles: MODEL_ROLES, describe: 'create responses' },
  dialect: 'openai',
  web: compactWeb,
  payload: CompactPayloadSchema,
  runner: compactRunner,
  // A summary is a chat in the GenAI conventions' terms.
  genAiOperation: 'chat',
});
