import { Type, type Static, type TSchema } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

/** One chat message; unknown fields (tool_calls, name, …) pass through to the provider. */
export const ChatMessageSchema = Type.Object(
  {
    role: Type.Union(['system', 'developer', 'user', 'assistant', 'tool', 'function'].map((role) => Type.Literal(role))),
    content: Type.Union([Type.String(), Type.Null(), Type.Array(Type.Object({ type: Type.String() }))]),
  },
  { additionalProperties: true },
);

/**
 * The body of POST /v1/chat/completions. OpenAI's other parameters (top_p, stop, seed,
 * tools, response_format, user, …) are accepted and forwarded as they are.
 */
export const ChatCompletionRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    messages: Type.Array(ChatMessageSchema, { minItems: 1 }),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    stream_options: Type.Optional(Type.Union([Type.Object({ include_usage: Type.Optional(Type.Boolean()) }), Type.Null()])),
    max_tokens: Nullable(Type.Integer({ minimum: 1 })),
    max_completion_tokens: Nullable(Type.Integer({ minimum: 1 })),
    temperature: Nullable(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
    n: Nullable(Type.Integer({ minimum: 1, maximum: 1 })),
  },
  { additionalProperties: true },
);

/** A validated chat completion request. */
export type ChatCompletionRequest = Static<typeof ChatCompletionRequestSchema>;
/** A validated chat message. */
export type ChatMessage = Static<typeof ChatMessageSchema>;
