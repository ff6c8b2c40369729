import { Type, type Static } from '@sinclair/typebox';
import type { SimulatorOptions } from '../catalog/schema.ts';

/** Token counts in OpenAI's shape. */
export const UsageSchema = Type.Object({
  prompt_tokens: Type.Integer({ minimum: 0 }),
  completion_tokens: Type.Integer({ minimum: 0 }),
  total_tokens: Type.Integer({ minimum: 0 }),
});

/** A non-streamed chat completion in OpenAI's wire shape (extra provider fields pass through). */
export const ChatCompletionSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('chat.completion'),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(
    Type.Object({
      index: Type.Integer(),
      message: Type.Object({ role: Type.String(), content: Type.Union([Type.String(), Type.Null()]) }),
      finish_reason: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
  usage: Type.Optional(Type.Union([UsageSchema, Type.Null()])),
});

/** One streamed chunk in OpenAI's wire shape; the usage-only chunk has `choices: []`. */
export const ChatCompletionChunkSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('chat.completion.chunk'),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(
    Type.Object({
      index: Type.Integer(),
      delta: Type.Object({ role: Type.Optional(Type.String()), content: Type.Optional(Type.Union([Type.String(), Type.Null()])) }),
      finish_reason: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
  usage: Type.Optional(Type.Union([UsageSchema, Type.Null()])),
});

/** Token counts. */
export type Usage = Static<typeof UsageSchema>;
/** A non-streamed completion. */
export type ChatCompletion = Static<typeof ChatCompletionSchema>;
/** A streamed chunk. */
export type ChatCompletionChunk = Static<typeof ChatCompletionChunkSchema>;

/** Where and how to reach one upstream model, resolved from the catalog at startup. */
export interface ProviderTarget {
  /** The catalog alias the target serves. */
  alias: string;
  provider: 'openai-compatible' | 'simulator';
  upstreamModel: string;
  baseUrl: string | null;
  apiKey: string | null;
  simulator: SimulatorOptions | null;
}

/** One call to an upstream model. */
export interface ProviderRequest {
  target: ProviderTarget;
  /**
   * The OpenAI chat body as the client sent it, minus `model`, `stream` and `stream_options`
   * (the adapter sets those) and minus the gateway's own fields.
   */
  body: Record<string, unknown>;
  signal: AbortSignal;
}

/** One provider; the worker holds one instance per kind, built once at startup. */
export interface ProviderAdapter {
  /** A non-streamed completion. Throws UpstreamError on any failure. */
  complete(request: ProviderRequest): Promise<ChatCompletion>;
  /**
   * A streamed completion, always with the provider's usage chunk when it reports one
   * (the worker strips it when the client did not ask). Throws UpstreamError on any failure,
   * including a stream that ends without its terminator.
   */
  stream(request: ProviderRequest): AsyncIterable<ChatCompletionChunk>;
}
