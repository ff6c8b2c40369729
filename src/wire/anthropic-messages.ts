/**
 * Anthropic's Messages API (anthropic-version 2023-06-01), once, for everyone: the door of
 * `POST /v1/messages` validates requests with these schemas, the translation to and from OpenAI
 * chat (src/operations/messages/) and the Anthropic adapter (src/providers/anthropic/) speak their
 * static types.
 *
 * Requests are validated as the door needs them: a block, a source, a tool, a tool choice and a
 * thinking setting are each one flat object with `if/then` rules per `type` (as ContentPartSchema
 * in openai-chat.ts is), so that a bad one gets an error naming its field. Objects admit fields not
 * named here, and blocks and tools of types not named here pass loosely (server tools and their
 * results, blocks added later): a request routed to an Anthropic upstream goes on as sent.
 *
 * Responses and stream events are what the gateway writes when it translates a chat answer: every
 * field the official SDK's types require is present, and those only server tools, cache
 * diagnostics or refusal classifiers fill are null.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { CacheControlSchema } from './openai-chat.ts';

const OPEN = { additionalProperties: true } as const;
const OrNull = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Literals = <const T extends string>(values: readonly T[]) => Type.Union(values.map((value) => Type.Literal(value)));
const Count = () => Type.Integer({ minimum: 0 });

/** `{"if": {type: one of values}, "then": {...}}`: what a block of those types must have. */
function whenType(values: string[], then: { required?: string[]; properties?: Record<string, unknown> }) {
  return { if: { properties: { type: { enum: values } }, required: ['type'] }, then };
}

/** The prompt-caching marker, as sent (`{type:'ephemeral', ttl?}`); null means none. */
const CacheControlParam = Type.Optional(OrNull(CacheControlSchema));

/**
 * Where an image or document comes from: `base64` (media_type, data), `url`, `text` (a plain-text
 * document's data), `content` (a document made of blocks) or `file` (an id of Anthropic's Files API).
 */
export const SourceSchema = Type.Object(
  {
    type: Type.String({ minLength: 1 }),
    media_type: Type.Optional(Type.String()),
    data: Type.Optional(Type.String()),
    url: Type.Optional(Type.String({ minLength: 1 })),
    file_id: Type.Optional(Type.String()),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(Type.Object({ type: Type.String() }, OPEN))])),
  },
  {
    ...OPEN,
    allOf: [
      whenType(['base64'], { required: ['media_type', 'data'] }),
      whenType(['text'], { required: ['data'] }),
      whenType(['url'], { required: ['url'] }),
      whenType(['file'], { required: ['file_id'] }),
      whenType(['content'], { required: ['content'] }),
    ],
  },
);

// The fields of the blocks that may also sit inside a tool result. A search_result's `source` is a
// string, an image's or a document's an object.
const MEDIA_FIELDS = {
  type: Type.String({ minLength: 1 }),
  text: Type.Optional(Type.String()),
  source: Type.Optional(Type.Union([SourceSchema, Type.String()])),
  title: Type.Optional(OrNull(Type.String())),
  cache_control: CacheControlParam,
};
const MEDIA_RULES = [
  whenType(['text'], { required: ['text'] }),
  whenType(['image', 'document'], { required: ['source'], properties: { source: { type: 'object' } } }),
];

/** A block inside a tool result: text, image, document, or a type passed on loosely (search_result, tool_reference…). */
export const NestedBlockSchema = Type.Object(MEDIA_FIELDS, { ...OPEN, allOf: MEDIA_RULES });

/**
 * One block of a message's content: `text`, `image`, `document`, `tool_use`, `tool_result`,
 * `thinking`, `redacted_thinking`, or any other type (server_tool_use, web_search_tool_result…),
 * admitted loosely. A server tool result's `content` may be an object, a tool result's only text
 * or blocks.
 */
export const ContentBlockParamSchema = Type.Object(
  {
    ...MEDIA_FIELDS,
    id: Type.Optional(Type.String({ minLength: 1 })),
    name: Type.Optional(Type.String({ minLength: 1 })),
    input: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    tool_use_id: Type.Optional(Type.String({ minLength: 1 })),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(NestedBlockSchema), Type.Record(Type.String(), Type.Unknown())])),
    is_error: Type.Optional(Type.Boolean()),
    thinking: Type.Optional(Type.String()),
    signature: Type.Optional(Type.String()),
    data: Type.Optional(Type.String()),
  },
  {
    ...OPEN,
    allOf: [
      ...MEDIA_RULES,
      whenType(['tool_use'], { required: ['id', 'name', 'input'] }),
      whenType(['tool_result'], { required: ['tool_use_id'], properties: { content: { anyOf: [{ type: 'string' }, { type: 'array' }] } } }),
      whenType(['thinking'], { required: ['thinking', 'signature'] }),
      whenType(['redacted_thinking'], { required: ['data'] }),
    ],
  },
);

/** A text block of the top-level `system`. */
export const TextBlockParamSchema = Type.Object({ type: Type.Literal('text'), text: Type.String(), cache_control: CacheControlParam }, OPEN);

/** Roles of a turn; a `system` turn places a system prompt among the others (the SDK's SystemMessageParam). */
export const MESSAGE_ROLES = ['user', 'assistant', 'system'] as const;

/** One turn of `messages`: a string is one text block. */
export const MessageParamSchema = Type.Object(
  { role: Literals(MESSAGE_ROLES), content: Type.Union([Type.String(), Type.Array(ContentBlockParamSchema)]) },
  OPEN,
);

/**
 * A tool: a client tool (`type` absent, null or `custom`) has `input_schema`; any other `type`
 * names a server tool (`web_search_20250305`, `bash_20250124`…), admitted with its own fields.
 */
export const ToolParamSchema = Type.Object(
  {
    type: Type.Optional(OrNull(Type.String({ minLength: 1 }))),
    name: Type.String({ minLength: 1, maxLength: 128 }),
    description: Type.Optional(Type.String()),
    input_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    cache_control: CacheControlParam,
    strict: Type.Optional(Type.Boolean()),
  },
  {
    ...OPEN,
    allOf: [{ if: { anyOf: [{ not: { required: ['type'] } }, { properties: { type: { enum: ['custom', null] } } }] }, then: { required: ['input_schema'] } }],
  },
);

/** How the model must use tools: `auto`, `any`, one named `tool`, or `none`. */
export const ToolChoiceParamSchema = Type.Object(
  {
    type: Literals(['auto', 'any', 'tool', 'none']),
    name: Type.Optional(Type.String({ minLength: 1 })),
    disable_parallel_tool_use: Type.Optional(Type.Boolean()),
  },
  { ...OPEN, allOf: [whenType(['tool'], { required: ['name'] })] },
);

/** Thinking display: summarized text, or only the signature. */
const ThinkingDisplay = Type.Optional(OrNull(Literals(['summarized', 'omitted'])));

/**
 * Extended thinking: `enabled` with a `budget_tokens` of at least 1024, `adaptive` (the model
 * decides, guided by `output_config.effort`), `between_tools`, or `disabled`.
 */
export const ThinkingConfigSchema = Type.Object(
  {
    type: Literals(['enabled', 'disabled', 'adaptive', 'between_tools']),
    budget_tokens: Type.Optional(Type.Integer({ minimum: 1024 })),
    display: ThinkingDisplay,
  },
  { ...OPEN, allOf: [whenType(['enabled'], { required: ['budget_tokens'] })] },
);

/** Effort levels of `output_config.effort`. */
export const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;

/** Output settings: effort, and structured output (a JSON schema the answer follows). */
export const OutputConfigSchema = Type.Object(
  {
    effort: Type.Optional(OrNull(Literals(EFFORTS))),
    format: Type.Optional(OrNull(Type.Object({ type: Type.Literal('json_schema'), schema: Type.Record(Type.String(), Type.Unknown()) }, OPEN))),
  },
  OPEN,
);

/**
 * The `anthropic-version` header: the API version a client speaks. It has been 2023-06-01 since,
 * and any date is taken.
 */
export const ANTHROPIC_VERSION = /^\d{4}-\d{2}-\d{2}$/;

/** The body of POST /v1/messages. */
export const MessagesRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    max_tokens: Type.Integer({ minimum: 1 }),
    messages: Type.Array(MessageParamSchema, { minItems: 1 }),
    system: Type.Optional(Type.Union([Type.String(), Type.Array(TextBlockParamSchema)])),
    metadata: Type.Optional(Type.Object({ user_id: Type.Optional(OrNull(Type.String())) }, OPEN)),
    stop_sequences: Type.Optional(Type.Array(Type.String())),
    stream: Type.Optional(Type.Boolean()),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0 })),
    tools: Type.Optional(Type.Array(ToolParamSchema)),
    tool_choice: Type.Optional(ToolChoiceParamSchema),
    thinking: Type.Optional(ThinkingConfigSchema),
    output_config: Type.Optional(OutputConfigSchema),
    service_tier: Type.Optional(Literals(['auto', 'standard_only'])),
  },
  OPEN,
);

/** The body of POST /v1/messages/count_tokens: the request without what only generation reads. */
export const CountTokensRequestSchema = Type.Omit(
  MessagesRequestSchema,
  ['max_tokens', 'stream', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'metadata', 'service_tier'],
  OPEN,
);

/** The answer of POST /v1/messages/count_tokens. */
export const TokenCountSchema = Type.Object({ input_tokens: Count() });

/** Why the model stopped. */
export const StopReasonSchema = Literals(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded']);

/** Answer text; a chat answer has no citations. */
export const TextBlockSchema = Type.Object({ type: Type.Literal('text'), text: Type.String(), citations: Type.Null() });

/** Extended thinking with its signature (empty when the model that thought signs nothing). */
export const ThinkingBlockSchema = Type.Object({ type: Type.Literal('thinking'), thinking: Type.String(), signature: Type.String() });

/** Thinking the upstream encrypted, to be sent back as it came. */
export const RedactedThinkingBlockSchema = Type.Object({ type: Type.Literal('redacted_thinking'), data: Type.String() });

/** A call of a client tool; the model called it itself (`caller` direct), not from server-run code. */
export const ToolUseBlockSchema = Type.Object({
  type: Type.Literal('tool_use'),
  id: Type.String(),
  name: Type.String(),
  input: Type.Record(Type.String(), Type.Unknown()),
  caller: Type.Object({ type: Type.Literal('direct') }),
});

/** A block of an answer. */
export const ContentBlockSchema = Type.Union([TextBlockSchema, ThinkingBlockSchema, RedactedThinkingBlockSchema, ToolUseBlockSchema]);

/** Output tokens spent thinking (OpenAI's reasoning_tokens). */
const OutputTokensDetails = OrNull(Type.Object({ thinking_tokens: Count() }));

/**
 * Token counts. Unlike OpenAI's prompt_tokens, `input_tokens` excludes the tokens read from and
 * written to the cache: the three together are the prompt.
 */
export const UsageSchema = Type.Object({
  input_tokens: Count(),
  output_tokens: Count(),
  cache_creation_input_tokens: OrNull(Count()),
  cache_read_input_tokens: OrNull(Count()),
  // The split of cache writes by TTL, which a chat answer does not report.
  cache_creation: OrNull(Type.Object({ ephemeral_5m_input_tokens: Count(), ephemeral_1h_input_tokens: Count() })),
  output_tokens_details: OutputTokensDetails,
  server_tool_use: OrNull(Type.Object({ web_search_requests: Count(), web_fetch_requests: Count() })),
  service_tier: OrNull(Literals(['standard', 'priority', 'batch'])),
  inference_geo: OrNull(Type.String()),
  speed: OrNull(Literals(['standard', 'fast'])),
});

/** The answer of POST /v1/messages. `stop_reason` is null only in message_start. */
export const MessageSchema = Type.Object({
  id: Type.String(),
  type: Type.Literal('message'),
  role: Type.Literal('assistant'),
  model: Type.String(),
  content: Type.Array(ContentBlockSchema),
  stop_reason: OrNull(StopReasonSchema),
  stop_sequence: OrNull(Type.String()),
  // Refusal classifiers' detail, server tools' container, prompt-cache diagnostics: never from a chat answer.
  stop_details: Type.Null(),
  container: Type.Null(),
  diagnostics: Type.Null(),
  usage: UsageSchema,
});

/** The error body, in HTTP answers and as `event: error` in streams. */
export const ErrorBodySchema = Type.Object({
  type: Type.Literal('error'),
  error: Type.Object({ type: Type.String(), message: Type.String() }, OPEN),
  request_id: Type.Optional(OrNull(Type.String())),
});

/** The first event: the message with empty content, stop_reason null and the input side of usage. */
export const MessageStartEventSchema = Type.Object({ type: Type.Literal('message_start'), message: MessageSchema });

/** A block opens at `index` (0, 1, 2… in order), empty. */
export const ContentBlockStartEventSchema = Type.Object({ type: Type.Literal('content_block_start'), index: Count(), content_block: ContentBlockSchema });

/** What a delta adds to the open block: text, tool input JSON text, thinking text, or the thinking's signature. */
export const BlockDeltaSchema = Type.Union([
  Type.Object({ type: Type.Literal('text_delta'), text: Type.String() }),
  Type.Object({ type: Type.Literal('input_json_delta'), partial_json: Type.String() }),
  Type.Object({ type: Type.Literal('thinking_delta'), thinking: Type.String() }),
  Type.Object({ type: Type.Literal('signature_delta'), signature: Type.String() }),
]);

/** A piece of the block at `index`. */
export const ContentBlockDeltaEventSchema = Type.Object({ type: Type.Literal('content_block_delta'), index: Count(), delta: BlockDeltaSchema });

/** The block at `index` is complete. */
export const ContentBlockStopEventSchema = Type.Object({ type: Type.Literal('content_block_stop'), index: Count() });

/** Cumulative counts at the end of a stream; where a count is present, clients take it over message_start's. */
export const MessageDeltaUsageSchema = Type.Object({
  input_tokens: OrNull(Count()),
  output_tokens: Count(),
  cache_creation_input_tokens: OrNull(Count()),
  cache_read_input_tokens: OrNull(Count()),
  output_tokens_details: OutputTokensDetails,
  server_tool_use: Type.Null(),
});

/** The stop reason and the final usage. */
export const MessageDeltaEventSchema = Type.Object({
  type: Type.Literal('message_delta'),
  delta: Type.Object({ stop_reason: OrNull(StopReasonSchema), stop_sequence: OrNull(Type.String()), stop_details: Type.Null(), container: Type.Null() }),
  usage: MessageDeltaUsageSchema,
});

/** The last event. */
export const MessageStopEventSchema = Type.Object({ type: Type.Literal('message_stop') });

/** A keep-alive; clients skip it. */
export const PingEventSchema = Type.Object({ type: Type.Literal('ping') });

/** The events that build a message, in the order message_start, blocks (start, deltas, stop), message_delta, message_stop. */
export const MessageStreamEventSchema = Type.Union([
  MessageStartEventSchema,
  ContentBlockStartEventSchema,
  ContentBlockDeltaEventSchema,
  ContentBlockStopEventSchema,
  MessageDeltaEventSchema,
  MessageStopEventSchema,
]);

/** A turn's content block as sent. */
export type ContentBlockParam = Static<typeof ContentBlockParamSchema>;
/** A block inside a tool result. */
export type NestedBlock = Static<typeof NestedBlockSchema>;
/** An image's or document's source. */
export type Source = Static<typeof SourceSchema>;
/** A system text block. */
export type TextBlockParam = Static<typeof TextBlockParamSchema>;
/** A turn. */
export type MessageParam = Static<typeof MessageParamSchema>;
/** A tool definition. */
export type ToolParam = Static<typeof ToolParamSchema>;
/** A tool choice. */
export type ToolChoiceParam = Static<typeof ToolChoiceParamSchema>;
/** A thinking setting. */
export type ThinkingConfig = Static<typeof ThinkingConfigSchema>;
/** An effort level. */
export type Effort = (typeof EFFORTS)[number];
/** Output settings. */
export type OutputConfig = Static<typeof OutputConfigSchema>;
/** The body of POST /v1/messages. */
export type MessagesRequest = Static<typeof MessagesRequestSchema>;
/** The body of POST /v1/messages/count_tokens. */
export type CountTokensRequest = Static<typeof CountTokensRequestSchema>;
/** The answer of count_tokens. */
export type TokenCount = Static<typeof TokenCountSchema>;
/** A stop reason. */
export type StopReason = Static<typeof StopReasonSchema>;
/** A text block of an answer. */
export type TextBlock = Static<typeof TextBlockSchema>;
/** A thinking block of an answer. */
export type ThinkingBlock = Static<typeof ThinkingBlockSchema>;
/** A redacted thinking block of an answer. */
export type RedactedThinkingBlock = Static<typeof RedactedThinkingBlockSchema>;
/** A tool call of an answer. */
export type ToolUseBlock = Static<typeof ToolUseBlockSchema>;
/** A block of an answer. */
export type ContentBlock = Static<typeof ContentBlockSchema>;
/** Token counts. */
export type Usage = Static<typeof UsageSchema>;
/** The answer. */
export type Message = Static<typeof MessageSchema>;
/** An error body. */
export type ErrorBody = Static<typeof ErrorBodySchema>;
/** A block delta. */
export type BlockDelta = Static<typeof BlockDeltaSchema>;
/** The usage of message_delta. */
export type MessageDeltaUsage = Static<typeof MessageDeltaUsageSchema>;
/** An event that builds a message. */
export type MessageStreamEvent = Static<typeof MessageStreamEventSchema>;
/** A ping event. */
export type PingEvent = Static<typeof PingEventSchema>;
