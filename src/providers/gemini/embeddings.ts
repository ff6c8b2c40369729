/** OpenAI embeddings ↔ Gemini's `batchEmbedContents`: one request per input text, one vector per request. */
import type { ModelOf } from '../model.ts';
import type { geminiDescriptor } from './descriptor.ts';
import type { EmbeddingsRequest, EmbeddingsResponse } from '../../wire/openai-embeddings.ts';
import { embeddingsResponse } from '../shared/embeddings.ts';
import { isRecord } from '../../wire/json.ts';
import type { UpstreamCall } from '../shared/send.ts';
import { invalidResponse } from '../shared/upstream-error.ts';
import type { ProviderTarget } from '../types.ts';
import { errorFromPayload, geminiErrorOf } from './errors.ts';
import { GEMINI_BASE_URL } from './descriptor.ts';

type Target = ProviderTarget<ModelOf<typeof geminiDescriptor>>;

/** The call; `texts` are the input's (the door refuses token arrays for Gemini). */
export function buildGeminiEmbedCall(target: Target, body: EmbeddingsRequest, texts: readonly string[]): UpstreamCall {
  const base = (target.model.base_url ?? GEMINI_BASE_URL).replace(/\/+$/, '');
  const model = `models/${target.upstreamModel}`;
  const key: Record<string, string> = target.apiKey !== null && target.apiKey !== '' ? { 'x-goog-api-key': target.apiKey } : {};
  const dimensions = body.dimensions === undefined ? {} : { outputDimensionality: body.dimensions };
  return {
    url: `${base}/v1beta/models/${encodeURIComponent(target.upstreamModel)}:batchEmbedContents`,
    headers: { 'content-type': 'application/json', ...key },
    body: JSON.stringify({ requests: texts.map((text) => ({ model, content: { parts: [{ text }] }, ...dimensions })) }),
  };
}

/** The vectors in OpenAI's shape; Gemini reports no token counts for embeddings, so `usage` is absent. */
export function parseGeminiEmbeddings(parsed: unknown, target: Target, body: EmbeddingsRequest, inputs: number): EmbeddingsResponse {
  const error = geminiErrorOf(parsed);
  if (error !== null) throw errorFromPayload(error);
  if (!isRecord(parsed) || !Array.isArray(parsed.embeddings)) throw invalidResponse('no embeddings array');
  const vectors = parsed.embeddings.map((embedding: unknown, i) => {
    const values = isRecord(embedding) ? embedding.values : undefined;
    if (!Array.isArray(values) || !values.every((value) => typeof value === 'number'))
      throw invalidResponse(`embeddings[${i}].values is not an array of numbers`);
    return values;
  });
  if (vectors.length !== inputs) throw invalidResponse(`${vectors.length} embeddings for ${inputs} inputs`);
  return embeddingsResponse(vectors, body, target.upstreamModel, null);
}
