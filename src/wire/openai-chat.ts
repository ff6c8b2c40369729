/**
 * OpenAI's chat completions wire format, once, for everyone: the web tier validates requests
 * with these schemas, the worker and every provider adapter speak their static types, the
 * OpenAI-compatible adapter validates upstream answers with them. Objects admit fields not
 * named here (OpenAI adds fields often), and they pass through untouched.
 *
 * Extensions of OpenAI's format that peers share, named as they name them:
 * - `reasoning_content` on messages and deltas: a model's reasoning text (vLLM, DeepSeek, LiteLLM);
 * - `thinking_blocks` on assistant messages: Anthropic's thinking blocks with their signatures,
 *   which must come back unchanged on the next turn (LiteLLM's name);
 * - `extra_content.google.thought_signature` on tool calls: Gemini's thought signature, as
 *   Google's own OpenAI-compatible endpoint returns it;
 * - `cache_control` on content parts: Anthropic's prompt-caching marker;
 * - `prompt_tokens_details.cache_write_tokens`: prompt tokens written to a provider's cache
 *   (OpenRouter's name).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const OPEN = { additionalProperties: true } as const;

/** `{"if": {type: <value>}, "then": {required: [field]}}`: a discriminated field is present. */
function requiredWhen(discriminator: string, values: string[], field: string) {
  return { if: { properties: { [discriminator]: { enum: values } }, required: [discriminator] }, then: { required: [field] } };
}

/** Anthropic's prompt-caching marker; `ttl` is `5m` or `1h`. */
export const CacheControlSchema = Type.Object({ type: Type.String(), ttl: Type.Optional(Type.String()) }, OPEN);

/**
 * One part of a message's content: `text`, `image_url` (an http(s) URL or a `data:` URL),
 * `input_audio`, `file`, or `refusal` (assistant only). One flat object rather than a union,
 * so that a bad part gets an error naming its field, not "must match a schema in anyOf".
 */
export const ContentPartSchema = Type.Object(
  {
    type: Type.String({ minLength: 1 }),
    text: Type.Optional(Type.String()),
    image_url: Type.Optional(Type.Object({ url: Type.String({ minLength: 1 }), detail: Type.Optional(Type.String()) }, OPEN)),
    input_audio: Type.Optional(Type.Object({ data: Type.String(), format: Type.String() }, OPEN)),
    file: Type.Optional(
      Type.Object({ file_data: Type.Optional(Type.String()), file_id: Type.Optional(Type.String()), filename: Type.Optional(Type.String()) }, OPEN),
    ),
    refusal: Type.Optional(Type.String()),
    cache_control: Type.Optional(CacheControlSchema),
  },
  {
    ...OPEN,
    allOf: [
      requiredWhen('type', ['text'], 'text'),
      requiredWhen('type', ['image_url'], 'image_url'),
      requiredWhen('type', ['input_audio'], 'input_audio'),
      requiredWhen('type', ['file'], 'file'),
    ],
  },
);

/** A call the model made: `arguments` is JSON text. */
export const ToolCallSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('function'),
    function: Type.Object({ name: Type.String({ minLength: 1 }), arguments: Type.String() }, OPEN),
    extra_content: Type.Optional(Type.Object({ google: Type.Optional(Type.Object({ thought_signature: Type.Optional(Type.String()) }, OPEN)) }, OPEN)),
  },
  OPEN,
);

/** An Anthropic thinking block carried on an assistant message: `thinking` with its `signature`, or `redacted_thinking` with its `data`. */
export const ThinkingBlockSchema = Type.Object(
  {
    type: Type.Union([Type.Literal('thinking'), Type.Literal('redacted_thinking')]),
    thinking: Type.Optional(Type.String()),
    signature: Type.Optional(Type.String()),
    data: Type.Optional(Type.String()),
  },
  OPEN,
);

/** Roles of a chat message (`function` is OpenAI's deprecated form of `tool`). */
export const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;

/**
 * One chat message. `content` is required except on an assistant message (one that only calls
 * tools may omit it); a `tool` message names the call it answers in `tool_call_id`.
 */
export const ChatMessageSchema = Type.Object(
  {
    role: Type.Union(CHAT_ROLES.map((role) => Type.Literal(role))),
    content: Type.Optional(Type.Union([Type.String(), Type.Null(), Type.Array(ContentPartSchema)])),
    name: Type.Optional(Type.String()),
    tool_calls: Type.Optional(Type.Array(ToolCallSchema)),
    tool_call_id: Type.Optional(Type.String()),
    refusal: Nullable(Type.String()),
    reasoning_content: Nullable(Type.String()),
    thinking_blocks: Type.Optional(Type.Array(ThinkingBlockSchema)),
  },
  {
    ...OPEN,
    allOf: [requiredWhen('role', ['system', 'developer', 'user', 'tool', 'function'], 'content'), requiredWhen('role', ['tool'], 'tool_call_id')],
  },
);

/** A function the model may call; `parameters` is a JSON Schema. */
export const ToolSchema = Type.Object(
  {
    type: Type.Literal('function'),
    function: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 128 }),
        description: Type.Optional(Type.String()),
        parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        strict: Nullable(Type.Boolean()),
      },
      OPEN,
    ),
    cache_control: Type.Optional(CacheControlSchema),
  },
  OPEN,
);

/** `none`, `auto`, `required`, or one named function. */
export const ToolChoiceSchema = Type.Union([
  Type.Union([Type.Literal('none'), Type.Literal('auto'), Type.Literal('required')]),
  Type.Object({ type: Type.Literal('function'), function: Type.Object({ name: Type.String({ minLength: 1 }) }, OPEN) }, OPEN),
]);

/** `text`, `json_object`, or `json_schema` with the schema the answer must follow. */
export const ResponseFormatSchema = Type.Object(
  {
    type: Type.Union([Type.Literal('text'), Type.Literal('json_object'), Type.Literal('json_schema')]),
    json_schema: Type.Optional(
      Type.Object(
        {
          name: Type.String({ minLength: 1 }),
          description: Type.Optional(Type.String()),
          schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          strict: Nullable(Type.Boolean()),
        },
        OPEN,
      ),
    ),
  },
  { ...OPEN, allOf: [requiredWhen('type', ['json_schema'], 'json_schema')] },
);

/**
 * The fields of a chat request that the gateway reads or translates; every other OpenAI
 * parameter is accepted as sent and forwarded to OpenAI-compatible upstreams. (`model`,
 * `stream` and `stream_options` are the door's: see src/operations/chat/request-schema.ts.)
 */
export const ChatRequestFields = {
  messages: Type.Array(ChatMessageSchema, { minItems: 1 }),
  max_tokens: Nullable(Type.Integer({ minimum: 1 })),
  max_completion_tokens: Nullable(Type.Integer({ minimum: 1 })),
  temperature: Nullable(Type.Number({ minimum: 0, maximum: 2 })),
  top_p: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
  // Not OpenAI's, but Anthropic's and Gemini's; clients of those models send it.
  top_k: Nullable(Type.Integer({ minimum: 0 })),
  n: Nullable(Type.Integer({ minimum: 1, maximum: 1 })),
  presence_penalty: Nullable(Type.Number({ minimum: -2, maximum: 2 })),
  frequency_penalty: Nullable(Type.Number({ minimum: -2, maximum: 2 })),
  stop: Nullable(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 16 })])),
  seed: Nullable(Type.Integer()),
  user: Type.Optional(Type.String()),
  tools: Type.Optional(Type.Array(ToolSchema)),
  tool_choice: Type.Optional(ToolChoiceSchema),
  parallel_tool_calls: Nullable(Type.Boolean()),
  response_format: Type.Optional(ResponseFormatSchema),
  reasoning_effort: Nullable(Type.String({ minLength: 1 })),
};

/** What a worker sends an upstream: the request without `model` and `stream`, which each call sets. */
export const ChatRequestSchema = Type.Object(ChatRequestFields, OPEN);

/** Token counts, with the details providers report (cached prompt tokens, reasoning tokens…). */
export const UsageSchema = Type.Object(
  {
    prompt_tokens: Type.Integer({ minimum: 0 }),
    completion_tokens: Type.Integer({ minimum: 0 }),
    total_tokens: Type.Integer({ minimum: 0 }),
    prompt_tokens_details: Nullable(
      Type.Object(
        {
          cached_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
          cache_write_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
          audio_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
        },
        OPEN,
      ),
    ),
    completion_tokens_details: Nullable(
      Type.Object(
        {
          reasoning_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
          audio_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
          accepted_prediction_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
          rejected_prediction_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
        },
        OPEN,
      ),
    ),
  },
  OPEN,
);

/** The assistant's answer in a completion. */
export const ResponseMessageSchema = Type.Object(
  {
    role: Type.String(),
    content: Type.Union([Type.String(), Type.Null()]),
    refusal: Nullable(Type.String()),
    tool_calls: Type.Optional(Type.Array(ToolCallSchema)),
    reasoning_content: Nullable(Type.String()),
    thinking_blocks: Type.Optional(Type.Array(ThinkingBlockSchema)),
  },
  OPEN,
);

/** Log probabilities of a choice, as the upstream sent them. */
const LogprobsSchema = Nullable(Type.Object({}, OPEN));

/** A non-streamed chat completion. */
export const ChatCompletionSchema = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion'),
    created: Type.Integer(),
    model: Type.String(),
    choices: Type.Array(
      Type.Object(
        { index: Type.Integer(), message: ResponseMessageSchema, finish_reason: Type.Union([Type.String(), Type.Null()]), logprobs: LogprobsSchema },
        OPEN,
      ),
    ),
    usage: Nullable(UsageSchema),
  },
  OPEN,
);

/** A piece of a tool call in a stream: `index` is stable per call; `id` and `name` come first, `arguments` in pieces. */
export const ToolCallDeltaSchema = Type.Object(
  {
    index: Type.Integer({ minimum: 0 }),
    id: Type.Optional(Type.String()),
    type: Type.Optional(Type.Literal('function')),
    function: Type.Optional(Type.Object({ name: Type.Optional(Type.String()), arguments: Type.Optional(Type.String()) }, OPEN)),
    extra_content: Type.Optional(Type.Object({}, OPEN)),
  },
  OPEN,
);

/** What one chunk adds to a choice. */
export const ChunkDeltaSchema = Type.Object(
  {
    role: Type.Optional(Type.String()),
    content: Nullable(Type.String()),
    refusal: Nullable(Type.String()),
    tool_calls: Type.Optional(Type.Array(ToolCallDeltaSchema)),
    reasoning_content: Nullable(Type.String()),
    thinking_blocks: Type.Optional(Type.Array(ThinkingBlockSchema)),
  },
  OPEN,
);

/** One streamed chunk; the usage-only chunk has `choices: []`. */
export const ChatCompletionChunkSchema = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion.chunk'),
    created: Type.Integer(),
    model: Type.String(),
    choices: Type.Array(
      Type.Object({ index: Type.Integer(), delta: ChunkDeltaSchema, finish_reason: Type.Union([Type.String(), Type.Null()]), logprobs: LogprobsSchema }, OPEN),
    ),
    usage: Nullable(UsageSchema),
  },
  OPEN,
);

/** A content part. */
export type ContentPart = Static<typeof ContentPartSchema>;
/** A tool call of an assistant message. */
export type ToolCall = Static<typeof ToolCallSchema>;
/** A thinking block of an assistant message. */
export type ThinkingBlock = Static<typeof ThinkingBlockSchema>;
/** A chat message. */
export type ChatMessage = Static<typeof ChatMessageSchema>;
/** A function tool. */
export type Tool = Static<typeof ToolSchema>;
/** A tool choice. */
export type ToolChoice = Static<typeof ToolChoiceSchema>;
/** A response format. */
export type ResponseFormat = Static<typeof ResponseFormatSchema>;
/** The request a worker hands a provider adapter. */
export type ChatRequest = Static<typeof ChatRequestSchema>;
/** Token counts with details. */
export type Usage = Static<typeof UsageSchema>;
/** The assistant message of a completion. */
export type ResponseMessage = Static<typeof ResponseMessageSchema>;
/** A non-streamed completion. */
export type ChatCompletion = Static<typeof ChatCompletionSchema>;
/** A tool call piece of a chunk. */
export type ToolCallDelta = Static<typeof ToolCallDeltaSchema>;
/** The delta of a chunk's choice. */
export type ChunkDelta = Static<typeof ChunkDeltaSchema>;
/** A streamed chunk. */
export type ChatCompletionChunk = Static<typeof ChatCompletionChunkSchema>;
/** The finish reasons OpenAI defines; translators produce only these. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';
