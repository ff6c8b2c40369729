import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { CountTokensRequestSchema, MessagesRequestSchema, TokenCountSchema } from '../../../wire/anthropic-messages.ts';
import { ADMITTED, AUTHENTICATED, STREAMING_ADMISSION_HEADERS, errors, json, jsonOrEvents, type RouteDocs } from '../../openapi/route-doc.ts';
import { messagesOperation } from '../../../operations/messages/operation.ts';
import { countPromptTokens } from '../../../operations/messages/prompt-text.ts';
import { chatCandidatesOf } from '../../../operations/chat/resolve-model.ts';
import { handleRequest, type CompletionServices } from '../../admission/handle-request.ts';
import { InvalidValueError } from '../../../errors/gateway-error.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

// Anthropic's clients name the API version they speak; it has been 2023-06-01 since, and any date is taken.
const VERSION = /^\d{4}-\d{2}-\d{2}$/;

const OPEN = { additionalProperties: true } as const;

/**
 * Anthropic's Message as a client may rely on it. A translated answer is exactly MessageSchema
 * (src/wire/anthropic-messages.ts), but a native one is relayed as Anthropic sent it, with block
 * types and fields that schema does not name: the document promises only what both have.
 */
export const MessageResponseSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('message'),
    role: Type.Literal('assistant'),
    model: Type.String({ description: 'The catalog alias that answered.' }),
    content: Type.Array(Type.Object({ type: Type.String({ description: '`text`, `thinking`, `redacted_thinking`, `tool_use`, or a server tool\'s block.' }) }, OPEN)),
    stop_reason: Type.Union([Type.String(), Type.Null()]),
    stop_sequence: Type.Union([Type.String(), Type.Null()]),
    usage: Type.Object({ input_tokens: Type.Integer({ minimum: 0 }), output_tokens: Type.Integer({ minimum: 0 }) }, OPEN),
  },
  OPEN,
);

const VERSION_HEADERS = {
  'anthropic-version': Type.Optional(Type.String({ pattern: VERSION.source, description: 'Any date is taken.' })),
  'anthropic-beta': Type.Optional(Type.String({ description: 'Beta flags, passed to an Anthropic upstream.' })),
};

/** The OpenAPI document's word on the routes: errors in Anthropic's shape. */
export const messagesDocs: RouteDocs = {
  'POST /v1/messages': {
    operationId: 'createMessage',
    summary: 'Create a message (Anthropic Messages API)',
    description: 'Anthropic\'s Messages API, for any chat alias or tier. The key may come in `x-api-key`, as Anthropic\'s SDK sends it.',
    tags: ['Anthropic Messages'],
    credentials: 'bearer-or-x-api-key',
    headers: Type.Object({ ...VERSION_HEADERS, ...STREAMING_ADMISSION_HEADERS }),
    responses: {
      200: jsonOrEvents('The message; with `stream: true`, Anthropic\'s named events.', MessageResponseSchema, {
        description: '`event: <type>` and `data: <event>` pairs: message_start, content_block_start / _delta / _stop per block, message_delta, message_stop. A failure after the first event is `event: error` with Anthropic\'s error body.',
        data: Type.Object({ type: Type.String() }, OPEN),
      }),
      ...errors('anthropic', ADMITTED, { 404: 'The model alias is unknown (`model_not_found`).' }),
    },
  },
  'POST /v1/messages/count_tokens': {
    operationId: 'countMessageTokens',
    summary: 'Count the tokens of a message request',
    description: 'Counted by the gateway\'s tokenizer (an estimate of Anthropic\'s count); costs no upstream call, budget or usage record.',
    tags: ['Anthropic Messages'],
    credentials: 'bearer-or-x-api-key',
    headers: Type.Object({ 'anthropic-version': VERSION_HEADERS['anthropic-version'] }),
    responses: {
      200: json('The estimated input tokens.', TokenCountSchema),
      ...errors('anthropic', [...AUTHENTICATED, 404, 413, 415], { 404: 'The model alias is unknown (`model_not_found`).' }),
    },
  },
};

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
