/**
 * GET /v1/models and POST /v1/embeddings with the official `openai` SDK against web and worker
 * processes, routed to a fake OpenAI-compatible upstream, a fake Gemini and the simulator:
 * the list and its extra fields, vectors in both encodings, usage records, budgets, idempotent
 * replay, the PII policy, and the refusals.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { NotFoundError } from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGeminiUpstream, type FakeGemini } from '../helpers/fake-gemini.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { apiFailure, usageRecordOf } from '../helpers/sdk-calls.ts';
import { call, eventually } from '../helpers/http.ts';
import type { WrittenCatalog } from '../../src/domain/catalog/schema.ts';

let upstream: FakeUpstream;
let gemini: FakeGemini;
let gateway: GatewayUnderTest;
let admin: string;
let client: OpenAI;

function catalog(): WrittenCatalog {
  const base = testCatalog(upstream.url);
  const embedding = { mode: 'embeddings' as const, context_window: 8192, input_price_per_mtok: 1 };
  base.models['fake-embed'] = { provider: 'openai-compatible', base_url: upstream.url, upstream_model: 'text-embedding-fake', ...embedding };
  base.models['fake-embed-fixed'] = {
    provider: 'openai-compatible',
    base_url: upstream.url,
    upstream_model: 'ada-fake',
    ...embedding,
    context_window: 16,
    rejected_params: ['dimensions'],
  };
  base.models['gemini-embed'] = { provider: 'gemini', base_url: gemini.url, upstream_model: 'gemini-embedding-fake', ...embedding };
  base.models['sim-embed'] = { provider: 'simulator', upstream_model: 'sim-embed-1', ...embedding, simulator: { dimensions: 8 } };
  base.models['org/fake-slash'] = { ...(base.models['fake-gpt'] as WrittenCatalog['models'][string]) };
  return base;
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gemini = await startGeminiUpstream();
  gateway = await startGateway({ catalog: catalog(), env: { SETTINGS_CACHE_TTL_MS: '100' } });
  admin = (await gateway.issueKey('acme', 'admin')).secret;
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('acme', 'app')).secret, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await gemini?.close();
});

beforeEach(() => {
  upstream.reset();
  gemini.reset();
});

describe('GET /v1/models', () => {
  it('lists every tier and alias in OpenAI’s shape, with the gateway’s details under `gateway`', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) {
      ids.push(model.id);
      expect(model).toMatchObject({ object: 'model', created: expect.any(Number), owned_by: expect.any(String) });
    }
    expect(ids).toEqual(['svc-flash', 'svc-standard', 'svc-pro', ...Object.keys(catalog().models)]);
    const tier = await client.models.retrieve('svc-standard');
    expect(tier).toMatchObject({
      id: 'svc-standard',
      owned_by: 'gateway',
      gateway: { kind: 'tier', mode: 'chat', candidates: ['fake-gpt', 'fake-backup'], context_window: 8192 },
    });
    const embed = await client.models.retrieve('fake-embed');
    expect(embed).toMatchObject({
      owned_by: 'openai-compatible',
      gateway: { kind: 'model', mode: 'embeddings', context_window: 8192, pricing: { input_per_mtok: 1 } },
    });
    expect(JSON.stringify(embed)).not.toContain('text-embedding-fake');
  });

  it('finds an alias with a slash, sent encoded (as the SDK does) or not', async () => {
    expect((await client.models.retrieve('org/fake-slash')).id).toBe('org/fake-slash');
    const raw = await call(gateway.origin, admin, 'GET', '/v1/models/org/fake-slash');
    expect([raw.status, raw.body.id]).toEqual([200, 'org/fake-slash']);
  });

  it('answers an unknown model 404 model_not_found', async () => {
    const error = await apiFailure(client.models.retrieve('gpt-7'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.error).toMatchObject({ code: 'model_not_found', param: 'model' });
  });
});

describe('POST /v1/embeddings', () => {
  it('returns the vectors in order through the SDK (which asks for base64 and decodes it), with the usage', async () => {
    const { data, response } = await client.embeddings.create({ model: 'fake-embed', input: ['one', 'two words', 'and three words'] }).withResponse();
    expect(data.model).toBe('fake-embed');
    expect(data.data.map((item) => [item.index, item.embedding])).toEqual([
      [0, [1, 1, 0]],
      [1, [2, 2, 0]],
      [2, [3, 3, 0]],
    ]);
    expect(data.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
    expect(upstream.requests[0]?.path).toBe('/v1/embeddings');
    expect(upstream.requests[0]?.body).toEqual({ model: 'text-embedding-fake', input: ['one', 'two words', 'and three words'], encoding_format: 'base64' });
    const record = await usageRecordOf(gateway, admin, response.headers.get('x-request-id') as string);
    expect(record).toMatchObject({
      operation: 'embeddings',
      model: 'fake-embed',
      prompt_tokens: 6,
      completion_tokens: 0,
      cost_micros: 6,
      usage_source: 'provider',
      status: 'succeeded',
      stream: false,
    });
  });

  it('forwards dimensions, float encoding and token arrays as sent', async () => {
    const data = await client.embeddings.create({ model: 'fake-embed', input: [[1, 2, 3]], dimensions: 5, encoding_format: 'float' });
    expect(data.data[0]?.embedding).toEqual([1, 3, 0, 0, 0]);
    expect(upstream.requests[0]?.body).toMatchObject({ input: [[1, 2, 3]], dimensions: 5, encoding_format: 'float' });
  });

  it('embeds through Gemini’s batchEmbedContents, counting the tokens itself (Gemini reports none)', async () => {
    const { data, response } = await client.embeddings.create({ model: 'gemini-embed', input: ['hello world', 'bye'], dimensions: 3 }).withResponse();
    expect(data.data.map((item) => item.embedding)).toEqual([
      [1, 2, 0],
      [2, 1, 0],
    ]);
    expect(data.usage.prompt_tokens).toBeGreaterThan(0);
    expect(gemini.requests[0]?.path).toBe('/v1beta/models/gemini-embedding-fake:batchEmbedContents');
    const record = await usageRecordOf(gateway, admin, response.headers.get('x-request-id') as string);
    expect(record).toMatchObject({ operation: 'embeddings', provider: 'gemini', usage_source: 'estimated', prompt_tokens: data.usage.prompt_tokens });
  });

  it('embeds with the simulator: deterministic unit vectors of the catalog’s length', async () => {
    const first = await client.embeddings.create({ model: 'sim-embed', input: 'the same text', encoding_format: 'float' });
    const again = await client.embeddings.create({ model: 'sim-embed', input: 'the same text', encoding_format: 'float' });
    const other = await client.embeddings.create({ model: 'sim-embed', input: 'another text', encoding_format: 'float' });
    const vector = first.data[0]?.embedding as number[];
    expect(vector).toHaveLength(8);
    expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
    expect(again.data[0]?.embedding).toEqual(vector);
    expect(other.data[0]?.embedding).not.toEqual(vector);
  });

  it('refuses a chat model, and an embeddings model for chat, with 400 naming model', async () => {
    for (const model of ['fake-gpt', 'svc-flash']) {
      const error = await apiFailure(client.embeddings.create({ model, input: 'x' }));
      expect([error.status, error.error]).toMatchObject([400, { code: 'unsupported_model', param: 'model' }]);
      expect(error.message).toContain(`'${model}' is a chat model`);
    }
    const error = await apiFailure(client.chat.completions.create({ model: 'fake-embed', messages: [{ role: 'user', content: 'x' }] }));
    expect([error.status, error.error]).toMatchObject([400, { code: 'unsupported_model', param: 'model' }]);
    expect(upstream.requests).toHaveLength(0);
  });

  it('refuses what the model cannot take before anything is queued', async () => {
    const cases: Array<[OpenAI.EmbeddingCreateParams, number, string, string]> = [
      [{ model: 'gemini-embed', input: [[1, 2]] }, 422, 'unsupported_parameter', 'input'],
      [{ model: 'fake-embed-fixed', input: 'x', dimensions: 2 }, 422, 'unsupported_parameter', 'dimensions'],
      [{ model: 'fake-embed-fixed', input: ['short', 'far too long for sixteen tokens '.repeat(4)] }, 422, 'context_length_exceeded', 'input[1]'],
      [{ model: 'fake-embed', input: [] }, 400, 'invalid_value', 'input'],
      [{ model: 'fake-embed', input: ['fine', ''] }, 400, 'invalid_value', 'input[1]'],
      [{ model: 'fake-embed', input: 'x', encoding_format: 'hex' as 'float' }, 400, 'invalid_value', 'encoding_format'],
    ];
    for (const [body, status, code, param] of cases) {
      const error = await apiFailure(client.embeddings.create(body));
      expect([error.status, error.error], JSON.stringify(body)).toMatchObject([status, { code, param }]);
    }
    expect(upstream.requests).toHaveLength(0);
    expect(gemini.requests).toHaveLength(0);
  });

  it('replays an idempotent request without a second upstream call', async () => {
    const key = randomUUID();
    const first = await client.embeddings.create({ model: 'fake-embed', input: 'once' }, { headers: { 'Idempotency-Key': key } }).withResponse();
    const second = await client.embeddings.create({ model: 'fake-embed', input: 'once' }, { headers: { 'Idempotency-Key': key } }).withResponse();
    expect(second.data).toEqual(first.data);
    expect(second.response.headers.get('idempotent-replayed')).toBe('true');
    expect(upstream.requests).toHaveLength(1);
    const reused = await apiFailure(client.embeddings.create({ model: 'fake-embed', input: 'another body' }, { headers: { 'Idempotency-Key': key } }));
    expect([reused.status, reused.error]).toMatchObject([422, { code: 'idempotency_key_reused' }]);
  });

  it('blocks or masks PII in the inputs as the tenant’s policy says', async () => {
    const tenantAdmin = (await gateway.issueKey('pii-tenant', 'admin')).secret;
    const app = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('pii-tenant', 'app')).secret, maxRetries: 0 });
    const input = ['nothing here', 'write to jane.doe@example.com'];
    expect((await call(gateway.origin, tenantAdmin, 'PUT', '/internal/v1/pii-policy', { mode: 'block', critical: ['email'] })).status).toBe(200);
    await eventually(
      async () =>
        (await app.embeddings.create({ model: 'fake-embed', input }).then(
          () => 200,
          (e: { status: number }) => e.status,
        )) === 422,
      3000,
      'the block policy',
    );
    const blocked = await apiFailure(app.embeddings.create({ model: 'fake-embed', input }));
    expect(blocked.error).toMatchObject({ code: 'pii_detected', param: 'input[1]' });
    expect((await call(gateway.origin, tenantAdmin, 'PUT', '/internal/v1/pii-policy', { mode: 'mask', critical: ['email'] })).status).toBe(200);
    await eventually(
      async () =>
        await app.embeddings.create({ model: 'fake-embed', input }).then(
          () => true,
          () => false,
        ),
      3000,
      'the mask policy',
    );
    const sent = (upstream.requests.at(-1)?.body as { input: string[] }).input;
    expect(sent[0]).toBe('nothing here');
    expect(sent[1]).not.toContain('jane.doe@example.com');
  });

  it('is refused 402 once the tenant’s budget is spent, and charged its cost', async () => {
    const tenantAdmin = (await gateway.issueKey('thrifty', 'admin')).secret;
    const app = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('thrifty', 'app')).secret, maxRetries: 0 });
    // Each call reserves 19 micro-units (its 19 bytes bound its tokens, at 1 per token) and is charged 4 (the fake's 4
    // words): the second fits in 25 (4 spent + 19), the third does not (8 + 19).
    expect((await call(gateway.origin, tenantAdmin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 25 })).status).toBe(201);
    const results: number[] = [];
    for (let i = 0; i < 3; i++)
      results.push(
        await app.embeddings.create({ model: 'fake-embed', input: 'abcd efgh ijkl mnop' }).then(
          () => 200,
          (e: { status: number }) => e.status,
        ),
      );
    expect(results).toEqual([200, 200, 402]);
  });
});
