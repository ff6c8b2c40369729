/**
 * OpenAI's Responses API (`POST /v1/responses`) as the gateway serves it: the request body its door
 * validates, and the Response object and streaming events it answers with. The gateway translates
 * both ways to chat (src/operations/responses/), so only what that translation reads or writes is
 * named; the shapes follow the `openai` SDK's (resources/responses/responses.d.ts), and the tests
 * assign what the gateway produces to the SDK's types.
 *
 * Request objects admit fields not named here (OpenAI adds fields often). Items and content parts
 * are flat objects keyed by `type` with required-when rules, as ContentPartSchema in
 * openai-chat.ts, so that a bad one gets an error naming its field.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const OrNull = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Literals = <const T extends string>(values: readonly T[]) => Type.Union(values.map((value) => Type.Literal(value)));
const OPEN = { additionalProperties: true } as const;

/** `{"if": {type: <one of values>}, "then": {required: fields}}`. */
function requiredWhen(values: string[], fields: string[]) {
  return { if: { properties: { type: { enum: values } }, required: ['type'] }, then: { required: fields } };
}

/** Reasoning efforts the SDK names. */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;

/** Roles of a message item. */
export const INPUT_ROLES = ['user', 'assistant', 'system', 'developer'] as const;

/**
 * One content part of an input message or of a function call's output: `input_text`,
 * `input_image` (`image_url` or `file_id`), `input_file` (`file_data`, `file_url` or `file_id`),
 * and, in an assistant's earlier answer, `output_text` or `refusal`; a reasoning item's
 * `reasoning_text` takes this shape too. Which of the alternative sources is present is checked
 * by the translation, which can say why one is not served.
 */
export const InputContentPartSchema = Type.Object(
  {
    type: Type.String({ minLength: 1 }),
    text: Type.Optional(Type.String()),
    image_url: Nullable(Type.String()),
    detail: Nullable(Type.String()),
    file_id: Nullable(Type.String()),
    file_data: Nullable(Type.String()),
    file_url: Nullable(Type.String()),
    filename: Nullable(Type.String()),
    refusal: Type.Optional(Type.String()),
  },
  { ...OPEN, allOf: [requiredWhen(['input_text', 'output_text', 'reasoning_text'], ['text']), requiredWhen(['refusal'], ['refusal'])] },
);

/**
 * One item of `input`: a `message` (whose `type` may be left out), a `function_call` the model
 * made (with its `namespace` when the function is in one), a `function_call_output` answering it, a
 * `reasoning` item, a `compaction` item (what POST /v1/responses/compact made, its summary in
 * `encrypted_content`), or an `item_reference` (an item with only an `id`). Other item types pass the
 * door and are refused by the translation.
 */
export const InputItemSchema = Type.Object(
  {
    type: Type.Optional(Type.String({ minLength: 1 })),
    id: Nullable(Type.String()),
    role: Type.Optional(Literals(INPUT_ROLES)),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(InputContentPartSchema)])),
    status: Nullable(Type.String()),
    call_id: Type.Optional(Type.String({ minLength: 1 })),
    name: Type.Optional(Type.String({ minLength: 1 })),
    namespace: Nullable(Type.String({ minLength: 1 })),
    arguments: Type.Optional(Type.String()),
    output: Type.Optional(Type.Union([Type.String(), Type.Array(InputContentPartSchema)])),
    summary: Type.Optional(Type.Array(Type.Object({ type: Type.String(), text: Type.String() }, OPEN))),
    encrypted_content: Nullable(Type.String()),
  },
  {
    ...OPEN,
    allOf: [
      requiredWhen(['message'], ['role', 'content']),
      requiredWhen(['function_call'], ['call_id', 'name', 'arguments']),
      requiredWhen(['function_call_output'], ['call_id', 'output']),
      requiredWhen(['reasoning'], ['summary']),
      requiredWhen(['compaction'], ['encrypted_content']),
      requiredWhen(['item_reference'], ['id']),
      // Without a type, an item is a message (the SDK's EasyInputMessage) unless it is a bare reference.
      { if: { not: { anyOf: [{ required: ['type'] }, { required: ['id'] }] } }, then: { required: ['role', 'content'] } },
    ],
  },
);

/** A tool of a namespace: a `function`, or another kind the translation refuses (`custom`). */
export const NamespaceMemberSchema = Type.Object(
  {
    type: Type.String({ minLength: 1 }),
    name: Type.String({ minLength: 1, maxLength: 128 }),
    description: Nullable(Type.String()),
    parameters: Nullable(Type.Record(Type.String(), Type.Unknown())),
    strict: Nullable(Type.Boolean()),
  },
  OPEN,
);

/**
 * A tool the model may use: a `function` (with its `name`), a `namespace` (a named group of
 * functions in `tools`, as Codex sends its sub-agent tools), or another type, which the translation
 * drops (a hosted tool) or refuses.
 */
export const RequestToolSchema = Type.Object(
  {
    type: Type.String({ minLength: 1 }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    description: Nullable(Type.String()),
    parameters: Nullable(Type.Record(Type.String(), Type.Unknown())),
    strict: Nullable(Type.Boolean()),
    tools: Type.Optional(Type.Array(NamespaceMemberSchema)),
  },
  { ...OPEN, allOf: [requiredWhen(['function'], ['name']), requiredWhen(['namespace'], ['name', 'description', 'tools'])] },
);

/**
 * `none`, `auto`, `required`, or an object: `{type: 'function', name}` or a hosted tool's choice.
 * The object comes first: of equally deep errors the door reports the first, and a missing `name`
 * says more than "must be a string".
 */
export const RequestToolChoiceSchema = Type.Union([
  Type.Object(
    { type: Type.String({ minLength: 1 }), name: Type.Optional(Type.String({ minLength: 1 })) },
    { ...OPEN, allOf: [requiredWhen(['function'], ['name'])] },
  ),
  Literals(['none', 'auto', 'required']),
]);

/** `text.format`: `text`, `json_object`, or `json_schema` with its `name` and `schema`. */
export const RequestTextFormatSchema = Type.Object(
  {
    type: Literals(['text', 'json_object', 'json_schema']),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    description: Type.Optional(Type.String()),
    strict: Nullable(Type.Boolean()),
  },
  { ...OPEN, allOf: [requiredWhen(['json_schema'], ['name', 'schema'])] },
);

/** Text verbosity. */
const VerbositySchema = Literals(['low', 'medium', 'high']);

/** `reasoning`: the effort, and the kind of summary asked for. */
export const ReasoningConfigSchema = Type.Object(
  {
    effort: Nullable(Literals(REASONING_EFFORTS)),
    summary: Nullable(Literals(['auto', 'concise', 'detailed'])),
  },
  OPEN,
);

/** Up to 16 string pairs, as OpenAI bounds them. */
const MetadataSchema = Type.Record(Type.String(), Type.String({ maxLength: 512 }), { maxProperties: 16 });

/** The body of `POST /v1/responses` as the door validates it. */
export const ResponsesRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.Optional(Type.Union([Type.String(), Type.Array(InputItemSchema)])),
    instructions: Nullable(Type.String()),
    tools: Type.Optional(Type.Array(RequestToolSchema)),
    tool_choice: Type.Optional(RequestToolChoiceSchema),
    text: Type.Optional(Type.Object({ format: Type.Optional(RequestTextFormatSchema), verbosity: Nullable(VerbositySchema) }, OPEN)),
    max_output_tokens: Nullable(Type.Integer({ minimum: 1 })),
    temperature: Nullable(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
    reasoning: Nullable(ReasoningConfigSchema),
    parallel_tool_calls: Nullable(Type.Boolean()),
    stream: Nullable(Type.Boolean()),
    stream_options: Nullable(Type.Object({ include_obfuscation: Type.Optional(Type.Boolean()) }, OPEN)),
    store: Nullable(Type.Boolean()),
    previous_response_id: Nullable(Type.String()),
    conversation: Nullable(Type.Union([Type.String(), Type.Object({ id: Type.String() }, OPEN)])),
    background: Nullable(Type.Boolean()),
    metadata: Nullable(MetadataSchema),
    user: Type.Optional(Type.String()),
    safety_identifier: Nullable(Type.String({ maxLength: 64 })),
    prompt_cache_key: Nullable(Type.String()),
    include: Nullable(Type.Array(Type.String())),
    truncation: Nullable(Literals(['auto', 'disabled'])),
    service_tier: Nullable(Type.String()),
    prompt: Nullable(
      Type.Object({ id: Type.String(), version: Nullable(Type.String()), variables: Nullable(Type.Record(Type.String(), Type.Unknown())) }, OPEN),
    ),
    max_tool_calls: Nullable(Type.Integer({ minimum: 1 })),
    top_logprobs: Nullable(Type.Integer({ minimum: 0, maximum: 20 })),
  },
  OPEN,
);

// What the gateway answers. `type` comes first in every object: the web tier reads an event's
// SSE name from the start of its serialized JSON.

/** Chat answers carry no citations or log probabilities that the gateway translates: these lists are always empty. */
const EmptyListSchema = Type.Tuple([]);

/** Text of an answer. */
export const OutputTextSchema = Type.Object({
  type: Type.Literal('output_text'),
  text: Type.String(),
  annotations: EmptyListSchema,
  logprobs: EmptyListSchema,
});
/** A refusal of an answer. */
export const OutputRefusalSchema = Type.Object({ type: Type.Literal('refusal'), refusal: Type.String() });
/** Reasoning text of a reasoning item. */
export const ReasoningTextSchema = Type.Object({ type: Type.Literal('reasoning_text'), text: Type.String() });

/** Status of an output item. */
export const ItemStatusSchema = Literals(['in_progress', 'completed', 'incomplete']);

/** The assistant's message. */
export const OutputMessageSchema = Type.Object({
  type: Type.Literal('message'),
  id: Type.String(),
  status: ItemStatusSchema,
  role: Type.Literal('assistant'),
  content: Type.Array(Type.Union([OutputTextSchema, OutputRefusalSchema])),
});

/**
 * A call of a function tool; `call_id` is what the function_call_output answering it names. A
 * function of a namespace is named by its own `name` and its `namespace`, as OpenAI names it.
 */
export const FunctionCallItemSchema = Type.Object({
  type: Type.Literal('function_call'),
  id: Type.String(),
  status: ItemStatusSchema,
  call_id: Type.String(),
  name: Type.String(),
  namespace: Type.Optional(Type.String()),
  arguments: Type.String(),
});

/** The model's reasoning, as text (`content`); no summaries are made. */
export const ReasoningItemSchema = Type.Object({
  type: Type.Literal('reasoning'),
  id: Type.String(),
  status: ItemStatusSchema,
  summary: Type.Array(Type.Object({ type: Type.Literal('summary_text'), text: Type.String() })),
  content: Type.Array(ReasoningTextSchema),
  /** Reasoning the client sends back as it came: Anthropic's signed thinking blocks (operations/responses/carried-thinking.ts). */
  encrypted_content: Type.Optional(Type.String()),
});

/** An item of a response's `output`. */
export const OutputItemSchema = Type.Union([ReasoningItemSchema, OutputMessageSchema, FunctionCallItemSchema]);

/** Token counts: `input_tokens` includes the cached ones. */
export const ResponseUsageSchema = Type.Object({
  input_tokens: Type.Integer({ minimum: 0 }),
  input_tokens_details: Type.Object({ cached_tokens: Type.Integer({ minimum: 0 }), cache_write_tokens: Type.Integer({ minimum: 0 }) }),
  output_tokens: Type.Integer({ minimum: 0 }),
  output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer({ minimum: 0 }) }),
  total_tokens: Type.Integer({ minimum: 0 }),
});

/** `text.format` as a response echoes it. */
export const TextFormatSchema = Type.Union([
  Type.Object({ type: Type.Literal('text') }),
  Type.Object({ type: Type.Literal('json_object') }),
  Type.Object({
    type: Type.Literal('json_schema'),
    name: Type.String(),
    schema: Type.Record(Type.String(), Type.Unknown()),
    description: Type.Optional(Type.String()),
    strict: OrNull(Type.Boolean()),
  }),
]);

/** A function tool as a response echoes it. */
export const FunctionToolSchema = Type.Object({
  type: Type.Literal('function'),
  name: Type.String(),
  description: OrNull(Type.String()),
  parameters: OrNull(Type.Record(Type.String(), Type.Unknown())),
  strict: OrNull(Type.Boolean()),
});

/** A namespace tool as a response echoes it, with its functions. */
export const NamespaceToolSchema = Type.Object({
  type: Type.Literal('namespace'),
  name: Type.String(),
  description: Type.String(),
  tools: Type.Array(FunctionToolSchema),
});

/** Why a response is incomplete. */
export const IncompleteReasonSchema = Literals(['max_output_tokens', 'content_filter']);

/** Status of a response: `queued` (a background response not yet begun), `in_progress`, then how it ended. */
export const ResponseStatusSchema = Literals(['queued', 'in_progress', 'completed', 'failed', 'cancelled', 'incomplete']);

/** Why a response failed: a code of the gateway's error catalogue and its message. */
export const ResponseErrorSchema = Type.Object({ code: Type.String(), message: Type.String() });

/**
 * A Response object: every field OpenAI's has (and the Open Responses specification requires),
 * with the request's settings echoed, or the default that applied. What the gateway does not serve
 * is null (`conversation`, `prompt`, `moderation`, `prompt_cache_retention`) or the neutral value
 * the providers used (penalties 0, no log probabilities, the default service tier). `output_text`
 * is the SDK's convenience, sent so that any client finds it.
 */
export const ResponseSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('response'),
  created_at: Type.Integer(),
  status: ResponseStatusSchema,
  background: Type.Boolean(),
  /** Unix seconds of the end; only a completed response has one. */
  completed_at: OrNull(Type.Integer()),
  conversation: Type.Null(),
  error: OrNull(ResponseErrorSchema),
  incomplete_details: OrNull(Type.Object({ reason: IncompleteReasonSchema })),
  instructions: OrNull(Type.String()),
  max_output_tokens: OrNull(Type.Integer()),
  max_tool_calls: OrNull(Type.Integer()),
  model: Type.String(),
  moderation: Type.Null(),
  output: Type.Array(OutputItemSchema),
  output_text: Type.String(),
  parallel_tool_calls: Type.Boolean(),
  presence_penalty: Type.Number(),
  frequency_penalty: Type.Number(),
  previous_response_id: OrNull(Type.String()),
  prompt: Type.Null(),
  prompt_cache_key: OrNull(Type.String()),
  prompt_cache_retention: Type.Null(),
  reasoning: Type.Object({ effort: OrNull(Literals(REASONING_EFFORTS)), summary: OrNull(Literals(['auto', 'concise', 'detailed'])) }),
  safety_identifier: OrNull(Type.String()),
  service_tier: Type.Literal('default'),
  /** Whether the gateway keeps the response, to be retrieved or continued. */
  store: Type.Boolean(),
  temperature: Type.Number(),
  text: Type.Object({ format: TextFormatSchema, verbosity: VerbositySchema }),
  tool_choice: Type.Union([Literals(['none', 'auto', 'required']), Type.Object({ type: Type.Literal('function'), name: Type.String() })]),
  tools: Type.Array(Type.Union([FunctionToolSchema, NamespaceToolSchema])),
  top_logprobs: Type.Integer({ minimum: 0 }),
  top_p: Type.Number(),
  truncation: Literals(['auto', 'disabled']),
  /** Null until the answer ended, as OpenAI sends it. */
  usage: OrNull(ResponseUsageSchema),
  user: Type.Optional(Type.String()),
  metadata: MetadataSchema,
});

const lifecycleEvent = <T extends string>(type: T) =>
  Type.Object({ type: Type.Literal(type), sequence_number: Type.Integer({ minimum: 0 }), response: ResponseSchema });
const itemEvent = <T extends string>(type: T) =>
  Type.Object({ type: Type.Literal(type), sequence_number: Type.Integer({ minimum: 0 }), output_index: Type.Integer({ minimum: 0 }), item: OutputItemSchema });
/** An event about a piece of content: `fields` are its own (delta, text…). */
const contentEvent = <T extends string, P extends Record<string, TSchema>>(type: T, fields: P) =>
  Type.Object({
    type: Type.Literal(type),
    sequence_number: Type.Integer({ minimum: 0 }),
    item_id: Type.String(),
    output_index: Type.Integer({ minimum: 0 }),
    content_index: Type.Integer({ minimum: 0 }),
    ...fields,
  });
const partEvent = <T extends string>(type: T) => contentEvent(type, { part: Type.Union([OutputTextSchema, OutputRefusalSchema, ReasoningTextSchema]) });
const argumentsEvent = <T extends string, P extends Record<string, TSchema>>(type: T, fields: P) =>
  Type.Object({
    type: Type.Literal(type),
    sequence_number: Type.Integer({ minimum: 0 }),
    item_id: Type.String(),
    output_index: Type.Integer({ minimum: 0 }),
    ...fields,
  });

/**
 * The streaming events the gateway emits, as OpenAI names them; `sequence_number` counts from 0
 * across one stream (a background one begins with response.queued). Error events are the web tier's.
 */
export const ResponseStreamEventSchema = Type.Union([
  lifecycleEvent('response.queued'),
  lifecycleEvent('response.created'),
  lifecycleEvent('response.in_progress'),
  lifecycleEvent('response.completed'),
  lifecycleEvent('response.incomplete'),
  itemEvent('response.output_item.added'),
  itemEvent('response.output_item.done'),
  partEvent('response.content_part.added'),
  partEvent('response.content_part.done'),
  contentEvent('response.output_text.delta', { delta: Type.String(), logprobs: EmptyListSchema }),
  contentEvent('response.output_text.done', { text: Type.String(), logprobs: EmptyListSchema }),
  contentEvent('response.refusal.delta', { delta: Type.String() }),
  contentEvent('response.refusal.done', { refusal: Type.String() }),
  contentEvent('response.reasoning_text.delta', { delta: Type.String() }),
  contentEvent('response.reasoning_text.done', { text: Type.String() }),
  argumentsEvent('response.function_call_arguments.delta', { delta: Type.String() }),
  argumentsEvent('response.function_call_arguments.done', { name: Type.String(), arguments: Type.String() }),
]);

/** The request body. */
export type ResponsesRequest = Static<typeof ResponsesRequestSchema>;
/** An item of `input`. */
export type InputItem = Static<typeof InputItemSchema>;
/** A content part of an input message or function call output. */
export type InputContentPart = Static<typeof InputContentPartSchema>;
/** A tool of the request. */
export type RequestTool = Static<typeof RequestToolSchema>;
/** A tool of a namespace of the request. */
export type NamespaceMember = Static<typeof NamespaceMemberSchema>;
/** `tool_choice` of the request. */
export type RequestToolChoice = Static<typeof RequestToolChoiceSchema>;
/** `text.format` of the request. */
export type RequestTextFormat = Static<typeof RequestTextFormatSchema>;
/** Text of an answer. */
export type OutputText = Static<typeof OutputTextSchema>;
/** A refusal of an answer. */
export type OutputRefusal = Static<typeof OutputRefusalSchema>;
/** Reasoning text. */
export type ReasoningText = Static<typeof ReasoningTextSchema>;
/** Status of an output item. */
export type ItemStatus = Static<typeof ItemStatusSchema>;
/** The assistant's message item. */
export type OutputMessage = Static<typeof OutputMessageSchema>;
/** A function call item. */
export type FunctionCallItem = Static<typeof FunctionCallItemSchema>;
/** A reasoning item. */
export type ReasoningItem = Static<typeof ReasoningItemSchema>;
/** An output item. */
export type OutputItem = Static<typeof OutputItemSchema>;
/** Token counts of a response. */
export type ResponseUsage = Static<typeof ResponseUsageSchema>;
/** `text.format` as echoed. */
export type TextFormat = Static<typeof TextFormatSchema>;
/** A function tool as echoed. */
export type FunctionTool = Static<typeof FunctionToolSchema>;
/** Why a response is incomplete. */
export type IncompleteReason = Static<typeof IncompleteReasonSchema>;
/** Status of a response. */
export type ResponseStatus = Static<typeof ResponseStatusSchema>;
/** Why a response failed. */
export type ResponseError = Static<typeof ResponseErrorSchema>;
/** A Response object. */
export type Response = Static<typeof ResponseSchema>;
/** A streaming event. */
export type ResponseStreamEvent = Static<typeof ResponseStreamEventSchema>;
