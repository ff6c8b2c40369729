/**
 * POST /v1/messages: Anthropic's Messages API at the gateway's door, as its SDK and Claude Code
 * call it (the key in `x-api-key` or `Authorization`, errors in Anthropic's shape), with its token
 * count beside it.
 */
import { MODEL_ROLES } from '../../domain/access/roles.ts';
import { MessagesRequestSchema } from '../../wire/anthropic-messages.ts';
import { defineOperation } from '../operation.ts';
import { countTokensRoute } from './count-tokens.ts';
import { messagesDoc } from './docs.ts';
import { messagesWeb } from './operation.ts';
import { MessagesPayloadSchema } from './payload.ts';
import { messagesRunner } from './run.ts';

/** The Messages operation. */
export const messages = defineOperation({
  name: 'messages',
  method: 'POST',
  path: '/v1/messages',
  body: MessagesRequestSchema,
  doc: messagesDoc,
  permission: { name: 'messages.create', roles: MODEL_ROLES, describe: 'create messages' },
  dialect: 'anthropic',
  web: messagesWeb,
  payload: MessagesPayloadSchema,
  runner: messagesRunner,
  // Anthropic's Messages are chats in the GenAI conventions' terms.
  genAiOperation: 'chat',
  sideRoutes: [countTokensRoute],
});
