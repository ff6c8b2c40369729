/**
 * OpenAI's embeddings wire format (POST /v1/embeddings): the door validates requests with these
 * schemas, the worker and the adapters speak their static types.
 */
import { Type, type Static } from '@sinclair/typebox';

// OpenAI's own limits: at most 2048 inputs, none of them empty.
const MAX_INPUTS = 2048;
const Text = Type.String({ minLength: 1 });
const Tokens = Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1 });

/** What to embed: a text, texts, a token array, or token arrays. */
export const EmbeddingInputSchema = Type.Union([
  Text,
  Type.Array(Text, { minItems: 1, maxItems: MAX_INPUTS }),
  Tokens,
  Type.Array(Tokens, { minItems: 1, maxItems: MAX_INPUTS }),
]);

/** The fields of an embeddings request a worker forwards (every other field passes to OpenAI-compatible upstreams as sent). */
export const EmbeddingsRequestFields = {
  input: EmbeddingInputSchema,
  dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
  encoding_format: Type.Optional(Type.Union([Type.Literal('float'), Type.Literal('base64')])),
  user: Type.Optional(Type.String()),
};

/** The body of POST /v1/embeddings. */
export const EmbeddingsBodySchema = Type.Object(
  { model: Type.String({ minLength: 1, maxLength: 256 }), ...EmbeddingsRequestFields },
  { additionalProperties: true },
);

/** What a worker sends an upstream: the request without `model`, which each call sets. */
export const EmbeddingsRequestSchema = Type.Object(EmbeddingsRequestFields, { additionalProperties: true });

/** One vector: floats, or their little-endian float32 bytes in base64 (`encoding_format: base64`). */
export const EmbeddingSchema = Type.Object({
  object: Type.Literal('embedding'),
  index: Type.Integer({ minimum: 0 }),
  embedding: Type.Union([Type.Array(Type.Number()), Type.String()]),
});

/** An embeddings answer. */
export const EmbeddingsResponseSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(EmbeddingSchema),
    model: Type.String(),
    usage: Type.Optional(
      Type.Object({ prompt_tokens: Type.Integer({ minimum: 0 }), total_tokens: Type.Integer({ minimum: 0 }) }, { additionalProperties: true }),
    ),
  },
  { additionalProperties: true },
);

/** The request body at the door. */
export type EmbeddingsBody = Static<typeof EmbeddingsBodySchema>;
/** The request a worker hands an adapter. */
export type EmbeddingsRequest = Static<typeof EmbeddingsRequestSchema>;
/** One embedding. */
export type Embedding = Static<typeof EmbeddingSchema>;
/** An embeddings answer; `usage` is absent when the provider reports none. */
export type EmbeddingsResponse = Static<typeof EmbeddingsResponseSchema>;
