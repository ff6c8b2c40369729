/** The embeddings of each provider that has them, against loopback upstreams speaking their real formats. */
import { describe, it, expect, beforeAll, beforeEach, afterAll } from 'vitest';
import type { CatalogModel } from '../../../src/domain/catalog/schema.ts';
import type { ModelOf } from '../../../src/providers/model.ts';
import type { geminiDescriptor } from '../../../src/providers/gemini/descriptor.ts';
import type { openAiCompatibleDescriptor } from '../../../src/providers/openai-compatible/descriptor.ts';
import type { simulatorDescriptor } from '../../../src/providers/simulator/descriptor.ts';
import { createOpenAiCompatibleAdapter } from '../../../src/providers/openai-compatible/index.ts';
import { createGeminiAdapter } from '../../../src/providers/gemini/index.ts';
import { createSimulatorAdapter } from '../../../src/providers/simulator/index.ts';
import { createUpstreamHttp } from '../../../src/providers/shared/http.ts';
import type { EmbedRequest, ProviderAdapter } from '../../../src/providers/types.ts';
import type { EmbeddingsRequest } from '../../../src/wire/openai-embeddings.ts';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.ts';
import { startGeminiUpstream, type FakeGemini } from '../../helpers/fake-gemini.ts';
import { failure, targetFor } from '../../helpers/provider-calls.ts';

const EMBEDDING = { mode: 'embeddings', context_window: 8192, max_output_tokens: 0, input_price_per_mtok: 1, output_price_per_mtok: 0 } as const;

let openai: FakeUpstream;
let gemini: FakeGemini;
const http = createUpstreamHttp({ connectTimeoutMs: 1000, headersTimeoutMs: 2000, bodyTimeoutMs: 2000, connections: 4 });

function embed<M extends CatalogModel>(adapter: ProviderAdapter<M>, model: M, body: EmbeddingsRequest): ReturnType<NonNullable<ProviderAdapter<M>['embed']>> {
  const request: EmbedRequest<M> = { target: targetFor(model, 'key-1', 'embed-alias'), body, signal: new AbortController().signal, timeoutMs: 60_000 };
  if (!adapter.embed) throw new Error(`${model.provider} has no embeddings`);
  return adapter.embed(request);
}

/** A base64 embedding as the openai SDK decodes it: little-endian float32. */
function decode(base64: unknown): number[] {
  const bytes = Buffer.from(base64 as string, 'base64');
  return Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
}

beforeAll(async () => {
  openai = await startFakeUpstream();
  gemini = await startGeminiUpstream();
});

beforeEach(() => {
  openai.reset();
  gemini.reset();
});

afterAll(async () => {
  await http.close();
  await openai.close();
  await gemini.close();
});

describe('openai-compatible', () => {
  const adapter = createOpenAiCompatibleAdapter(http);
  const model = (overrides: Partial<ModelOf<typeof openAiCompatibleDescriptor>> = {}): ModelOf<typeof openAiCompatibleDescriptor> => ({
    provider: 'openai-compatible',
    upstream_model: 'text-embedding-x',
    base_url: openai.url,
    ...EMBEDDING,
    ...overrides,
  });

  it('posts the request as sent to {base_url}/embeddings with the upstream model, and answers its vectors and usage', async () => {
    const response = await embed(adapter, model(), { input: ['a b', 'c'], dimensions: 4, user: 'u1' });
    expect(openai.requests[0]).toMatchObject({ path: '/v1/embeddings', body: { model: 'text-embedding-x', input: ['a b', 'c'], dimensions: 4, user: 'u1' } });
    expect(openai.requests[0]?.headers.authorization).toBe('Bearer key-1');
    expect(response.data.map((item) => item.embedding)).toEqual([
      [1, 2, 0, 0],
      [2, 1, 0, 0],
    ]);
    expect(response.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
  });

  it("uses Azure OpenAI's deployment path and api-key header", async () => {
    await embed(adapter, model({ base_url: openai.origin, azure: { api_version: '2024-10-21', deployment: 'emb-prod' } }), { input: 'x' });
    expect(openai.requests[0]).toMatchObject({ path: '/openai/deployments/emb-prod/embeddings', query: { 'api-version': '2024-10-21' } });
    expect(openai.requests[0]?.headers['api-key']).toBe('key-1');
  });

  it('puts vectors an upstream sent out of order back in the order of the inputs', async () => {
    openai.script([
      {
        kind: 'status',
        status: 200,
        body: {
          data: [
            { index: 1, embedding: [2] },
            { index: 0, embedding: [1] },
          ],
          model: 'x',
        },
      },
    ]);
    const response = await embed(adapter, model(), { input: ['first', 'second'] });
    expect(response.data.map((item) => [item.index, item.embedding])).toEqual([
      [0, [1]],
      [1, [2]],
    ]);
    expect(response.usage).toBeUndefined();
  });

  it('refuses an answer with another number of vectors than inputs, or an error sent with 200', async () => {
    openai.script([
      { kind: 'status', status: 200, body: { data: [{ index: 0, embedding: [1] }] } },
      { kind: 'status', status: 200, body: { error: { message: 'overloaded', type: 'server_error' } } },
    ]);
    expect(await failure(embed(adapter, model(), { input: ['a', 'b'] }))).toMatchObject({
      kind: 'invalid_response',
      message: expect.stringContaining('1 embeddings for 2 inputs'),
    });
    expect(await failure(embed(adapter, model(), { input: 'a' }))).toMatchObject({ kind: 'server_error', retryable: true });
  });
});

describe('gemini', () => {
  const adapter = createGeminiAdapter(http);
  const model = (): ModelOf<typeof geminiDescriptor> => ({ provider: 'gemini', upstream_model: 'gemini-embedding-x', base_url: gemini.url, ...EMBEDDING });

  it('asks batchEmbedContents for one vector per text, in OpenAI’s encoding', async () => {
    const response = await embed(adapter, model(), { input: ['one two', 'three'], dimensions: 2, encoding_format: 'base64' });
    expect(gemini.requests[0]).toMatchObject({
      path: '/v1beta/models/gemini-embedding-x:batchEmbedContents',
      body: {
        requests: [
          { model: 'models/gemini-embedding-x', content: { parts: [{ text: 'one two' }] }, outputDimensionality: 2 },
          { model: 'models/gemini-embedding-x', content: { parts: [{ text: 'three' }] }, outputDimensionality: 2 },
        ],
      },
    });
    expect(gemini.requests[0]?.headers['x-goog-api-key']).toBe('key-1');
    expect(response.data.map((item) => decode(item.embedding))).toEqual([
      [1, 2],
      [2, 1],
    ]);
    expect(response.usage).toBeUndefined();
  });

  it('answers a Gemini error as the failure it is', async () => {
    gemini.script([{ kind: 'status', status: 429 }]);
    expect(await failure(embed(adapter, model(), { input: 'x' }))).toMatchObject({ kind: 'rate_limited', retryable: true });
  });
});

describe('simulator', () => {
  const adapter = createSimulatorAdapter();
  const model: ModelOf<typeof simulatorDescriptor> = { provider: 'simulator', upstream_model: 'sim-embed', ...EMBEDDING, simulator: { dimensions: 6 } };

  it('gives each input a deterministic unit vector, float or base64, and counts its tokens', async () => {
    const floats = await embed(adapter, model, { input: ['same', 'other', 'same'] });
    const [same, other, again] = floats.data.map((item) => item.embedding as number[]);
    expect(same).toHaveLength(6);
    expect(again).toEqual(same);
    expect(other).not.toEqual(same);
    expect(Math.hypot(...(same ?? []))).toBeCloseTo(1, 10);
    const base64 = await embed(adapter, model, { input: 'same', encoding_format: 'base64', dimensions: 6 });
    expect(decode(base64.data[0]?.embedding).map((value) => value.toFixed(5))).toEqual(same?.map((value) => value.toFixed(5)));
    expect(floats.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
  });
});
