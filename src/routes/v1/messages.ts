import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { CountTokensRequestSchema, MessagesRequestSchema } from '../../wire/anthropic-messages.ts';
import { messagesOperation } from '../../operations/messages/operation.ts';
import { countPromptTokens } from '../../operations/messages/prompt-text.ts';
import { chatCandidatesOf } from '../../operations/chat/resolve-model.ts';
import { handleRequest, type CompletionServices } from '../../admission/handle-request.ts';
import { InvalidValueError } from '../../errors/gateway-error.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

// Anthropic's clients name the API version they speak; it has been 2023-06-01 since, and any date is taken.
const VERSION = /^\d{4}-\d{2}-\d{2}$/;

/**
 * POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API at the gateway's door,
 * as its SDK and Claude Code call it (the key in `x-api-key` or `Authorization`, errors in
 * Anthropic's shape, its `request-id` header). Messages go through the admission chain; a token
 * count is made here, by the gateway's tokenizer, and costs nothing.
 */
export async function messagesRoutes(app: FastifyInstance, options: { services: CompletionServices; bodyLimit: number }): Promise<void> {
  const config = { operation: 'messages.create', errorDialect: 'anthropic', acceptsXApiKey: true, bodyTextToProvider: true } as const;
  app.addHook('onRequest', async (request, reply) => {
    reply.header('request-id', request.id);
    const version = request.headers['anthropic-version'];
    if (version !== undefined && (typeof version !== 'string' || !VERSION.test(version))) throw new InvalidValueError('anthropic-version', "The anthropic-version header must be a date such as '2023-06-01'.");
  });
  // The app's own onRequest hooks (authentication) run before this plugin's and answer their
  // refusals from there; the header must be on those answers too. A stream is hijacked and sends
  // the headers set above.
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('request-id', request.id);
    return payload;
  });
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.post('/v1/messages', { schema: { body: MessagesRequestSchema }, config, bodyLimit: options.bodyLimit }, (request, reply) =>
    handleRequest(options.services, messagesOperation, request, request.body, reply),
  );
  routes.post('/v1/messages/count_tokens', { schema: { body: CountTokensRequestSchema }, config, bodyLimit: options.bodyLimit }, async (request) => {
    chatCandidatesOf(options.services.catalog, request.body.model, '/v1/messages/count_tokens');
    return { input_tokens: countPromptTokens(request.body) };
  });
  rejectOtherMethods(app, '/v1/messages', ['POST']);
  rejectOtherMethods(app, '/v1/messages/count_tokens', ['POST']);
}
