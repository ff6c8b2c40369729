import { Type, type Static } from '@sinclair/typebox';
import { ChatRequestFields } from '../../wire/openai-chat.ts';

/**
 * The body of POST /v1/chat/completions: OpenAI's chat request (src/wire/openai-chat.ts) with
 * the model and the delivery fields. OpenAI's other parameters (presence_penalty, logprobs,
 * metadata, …) are accepted and forwarded as they are.
 */
export const ChatCompletionRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    stream_options: Type.Optional(Type.Union([Type.Object({ include_usage: Type.Optional(Type.Boolean()) }), Type.Null()])),
    ...ChatRequestFields,
  },
  { additionalProperties: true },
);

/** Name of a registered prompt. */
export const PromptNameSchema = Type.String({ pattern: '^[a-z0-9][a-z0-9_.-]{0,127}$' });

/**
 * The body as it arrives: either `model` + `messages`, or a named `prompt` with its
 * `variables` (src/operations/chat/request-shape.ts decides which, with errors that say why).
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
