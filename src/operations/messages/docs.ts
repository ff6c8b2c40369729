/** What the OpenAPI document says of POST /v1/messages and its token count: errors in Anthropic's shape. */
import { Type } from '@sinclair/typebox';
import { ANTHROPIC_VERSION, TokenCountSchema } from '../../wire/anthropic-messages.ts';
import { ADMITTED, AUTHENTICATED, STREAMING_ADMISSION_HEADERS, errors, json, jsonOrEvents, type RouteDoc } from '../../wire/route-doc.ts';

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
    content: Type.Array(
      Type.Object({ type: Type.String({ description: "`text`, `thinking`, `redacted_thinking`, `tool_use`, or a server tool's block." }) }, OPEN),
    ),
    stop_reason: Type.Union([Type.String(), Type.Null()]),
    stop_sequence: Type.Union([Type.String(), Type.Null()]),
    usage: Type.Object({ input_tokens: Type.Integer({ minimum: 0 }), output_tokens: Type.Integer({ minimum: 0 }) }, OPEN),
  },
  OPEN,
);

const VERSION_HEADERS = {
  'anthropic-version': Type.Optional(Type.String({ pattern: ANTHROPIC_VERSION.source, description: 'Any date is taken.' })),
  'anthropic-beta': Type.Optional(Type.String({ description: 'Beta flags, passed to an Anthropic upstream.' })),
};

/** The OpenAPI document's word on POST /v1/messages. */
export const messagesDoc: RouteDoc = {
  operationId: 'createMessage',
  summary: 'Create a message (Anthropic Messages API)',
  description: "Anthropic's Messages API, for any chat alias or tier. The key may come in `x-api-key`, as Anthropic's SDK sends it.",
  tags: ['Anthropic Messages'],
  credentials: 'bearer-or-x-api-key',
  headers: Type.Object({ ...VERSION_HEADERS, ...STREAMING_ADMISSION_HEADERS }),
  responses: {
    200: jsonOrEvents("The message; with `stream: true`, Anthropic's named events.", MessageResponseSchema, {
      description:
        "`event: <type>` and `data: <event>` pairs: message_start, content_block_start / _delta / _stop per block, message_delta, message_stop. A failure after the first event is `event: error` with Anthropic's error body.",
      data: Type.Object({ type: Type.String() }, OPEN),
    }),
    ...errors('anthropic', ADMITTED, { 404: 'The model alias is unknown (`model_not_found`).' }),
  },
};

/** The OpenAPI document's word on POST /v1/messages/count_tokens. */
export const countTokensDoc: RouteDoc = {
  operationId: 'countMessageTokens',
  summary: 'Count the tokens of a message request',
  description: "Counted by the gateway's tokenizer (an estimate of Anthropic's count); costs no upstream call, budget or usage record.",
  tags: ['Anthropic Messages'],
  credentials: 'bearer-or-x-api-key',
  headers: Type.Object({ 'anthropic-version': VERSION_HEADERS['anthropic-version'] }),
  responses: {
    200: json('The estimated input tokens.', TokenCountSchema),
    ...errors('anthropic', [...AUTHENTICATED, 404, 413, 415], { 404: 'The model alias is unknown (`model_not_found`).' }),
  },
};
