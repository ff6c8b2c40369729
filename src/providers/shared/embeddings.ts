/** What every adapter's embeddings share: the vectors in the encoding the client asked for, and the answer's shape. */
import type { Embedding, EmbeddingsRequest, EmbeddingsResponse } from '../../wire/openai-embeddings.ts';
import { countTextTokens } from './tokens.ts';

/** OpenAI's `base64` encoding: the vector's little-endian float32 bytes (what the openai SDKs decode). */
export function encodeVector(vector: readonly number[], format: EmbeddingsRequest['encoding_format']): Embedding['embedding'] {
  if (format !== 'base64') return [...vector];
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}

/** The texts of an input; null for token arrays, which only OpenAI-compatible upstreams take. */
export function inputTexts(input: EmbeddingsRequest['input']): string[] | null {
  const items = inputItems(input);
  return items.every((item): item is string => typeof item === 'string') ? items : null;
}

/** The input's items: each text or token array is one vector. */
export function inputItems(input: EmbeddingsRequest['input']): Array<string | number[]> {
  if (typeof input === 'string' || typeof input[0] === 'number') return [input as string | number[]];
  return input as Array<string | number[]>;
}

/** The input's tokens: a text's by the tokenizer, a token array's by its length. */
export function inputTokens(items: ReadonlyArray<string | number[]>): number {
  return items.reduce((sum, item) => sum + (typeof item === 'string' ? countTextTokens(item) : item.length), 0);
}

/** OpenAI's answer for vectors made by the gateway or translated from another provider's. */
export function embeddingsResponse(
  vectors: ReadonlyArray<readonly number[]>,
  request: EmbeddingsRequest,
  model: string,
  promptTokens: number | null,
): EmbeddingsResponse {
  const response: EmbeddingsResponse = {
    object: 'list',
    data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encodeVector(vector, request.encoding_format) })),
    model,
  };
  if (promptTokens !== null) response.usage = { prompt_tokens: promptTokens, total_tokens: promptTokens };
  return response;
}
