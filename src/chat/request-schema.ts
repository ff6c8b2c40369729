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

/** Name of a registered prompt. */
export const PromptNameSchema = Type.String({ pattern: '^[a-z0-9][a-z0-9_.-]{0,127}$' });

/**
 * The body as it arrives: either `model` + `messages`, or a named `prompt` with its
 * `variables` (src/chat/request-shape.ts decides which, with errors that say why).
 */
export const ChatCompletionBodySchema = Type.Composite(
  [
    Type.Partial(Type.Pick(ChatCompletionRequestSchema, ['model', 'messages'])),
    Type.Omit(ChatCompletionRequestSchema, ['model', 'messages']),
    Type.Object({
      prompt: Type.Optional(PromptNameSchema),
      variables: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  ],
  { additionalProperties: true },
);

/** A chat completion request with its model and messages known (sent, or from a named prompt). */
export type ChatCompletionRequest = Static<typeof ChatCompletionRequestSchema>;
/** The body as validated at the door. */
export type ChatCompletionBody = Static<typeof ChatCompletionBodySchema>;
/** A validated chat message. */
export type ChatMessage = Static<typeof ChatMessageSchema>;
