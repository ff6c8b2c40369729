/**
 * An API key's own limits end to end: set with the key (`POST /internal/v1/keys`) or changed
 * (`PATCH /internal/v1/keys/{id}`), enforced by two web processes and a worker against real Redis
 * and PostgreSQL and a loopback upstream. KEY_CACHE_TTL_MS is the maximum (10 s), so a change
 * enforced within a second on the other web process proves the invalidation, not the cache expiring.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually, type JsonResponse } from '../helpers/http.ts';
import OpenAI, { toFile } from 'openai';

const TENANT = 'limited';
const AT_ONCE_MS = 1_000;
const CHAT = { model: 'fake-gpt', messages: [{ role: 'user', content: 'hi' }] };

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let admin: { id: string; secret: string };

const web = (i: 0 | 1) => gateway.webs[i]?.origin as string;

function complete(origin: string, secret: string, body: Record<string, unknown> = CHAT): Promise<JsonResponse> {
  return call(origin, secret, 'POST', '/v1/chat/completions', body);
}

async function createKey(body: Record<string, unknown>): Promise<{ id: string; secret: string; body: JsonResponse['body'] }> {
  const created = await call(web(0), admin.secret, 'POST', '/internal/v1/keys', { role: 'app', ...body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.id, secret: created.body.secret, body: created.body };
}

/** The 429's envelope and message; Retry-After is `retryAfter` when given, else a whole number of seconds the message repeats. */
/** A streamed completion, read to its end (or until `signal` aborts it). */
async function stream(origin: string, secret: string, signal?: AbortSignal): Promise<{ status: number; text: string }> {
  const response = await fetch(`${origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...CHAT, stream: true }),
    signal: signal ?? null,
  });
  return { status: response.status, text: await response.text() };
}

function expectRateLimited(response: JsonResponse, retryAfter?: string): string {
  expect(response.status, JSON.stringify(response.body)).toBe(429);
  const header = response.headers.get('retry-after') ?? '';
  expect(header).toMatch(/^[1-9]\d*$/);
  if (retryAfter !== undefined) expect(header).toBe(retryAfter);
  expect(response.body.error.message).toContain(`Retry after ${header} seconds.`);
  expect(response.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null, request_id: expect.any(String) });
  return response.body.error.message as string;
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({ catalog: testCatalog(upstream.url), webs: 2, env: { KEY_CACHE_TTL_MS: '10000', BATCH_SUPERVISE_INTERVAL_MS: '200' } });
  admin = await gateway.issueKey(TENANT, 'admin');
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

beforeEach(() => upstream.reset());

describe('requests per minute', () => {
  it('a key with rpm=2 gets 429 on its third request, with Retry-After and a message naming the key, never its secret', async () => {
    const key = await createKey({ name: 'two a minute', rpm: 2 });
    expect(key.body).toMatchObject({ rpm: 2, tpm: null, max_concurrent: null });
    expect((await complete(web(0), key.secret)).status).toBe(200);
    expect((await complete(web(1), key.secret)).status).toBe(200);
    const refused = await complete(web(0), key.secret);
    const message = expectRateLimited(refused);
    expect(message).toMatch(new RegExp(`^Rate limit exceeded: 2 requests per minute for API key ${key.id}\\. Retry after \\d+ seconds\\.$`));
    expect(message).not.toContain(key.secret);
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('2');
    // The key's limit is its own: the admin's key of the same tenant is not held back.
    expect((await complete(web(0), admin.secret)).status).toBe(200);
  });

  it('a key with a tpm limit is refused a request larger than it allows', async () => {
    const key = await createKey({ tpm: 50 });
    const refused = await complete(web(0), key.secret, { ...CHAT, max_tokens: 100 });
    expect(expectRateLimited(refused, '60')).toContain(`50 tokens per minute for API key ${key.id}`);
    expect((await complete(web(0), key.secret, { ...CHAT, max_tokens: 10 })).status).toBe(200);
  });
});

describe('concurrent requests', () => {
  it('max_concurrent=1: a second request while the first runs gets 429 on every operation; once it ended a new one is admitted', async () => {
    const key = await createKey({ max_concurrent: 1 });
    upstream.script([{ kind: 'slow-stream', chunkDelayMs: 150, chunks: 10 }]);
    const first = stream(web(0), key.secret);
    await eventually(async () => upstream.requests.length === 1, 5_000, 'the first request reached the upstream');
    const refusals = await Promise.all([
      complete(web(1), key.secret),
      complete(web(0), key.secret, { ...CHAT, stream: true }),
      call(web(1), key.secret, 'POST', '/v1/embeddings', { model: 'sim-embed', input: 'hi' }),
      call(web(0), key.secret, 'POST', '/v1/responses', { model: 'fake-gpt', input: 'hi' }),
    ]);
    for (const refused of refusals) {
      expect(expectRateLimited(refused, '1')).toBe(
        `Rate limit exceeded: 1 concurrent requests for API key ${key.id} (1 queued or running). Retry after 1 seconds.`,
      );
    }
    const messages = await call(web(1), key.secret, 'POST', '/v1/messages', { model: 'fake-gpt', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(messages.status).toBe(429);
    expect(messages.headers.get('retry-after')).toBe('1');
    expect(upstream.requests).toHaveLength(1);
    expect(await first).toMatchObject({ status: 200, text: expect.stringContaining('data: [DONE]') });
    await eventually(async () => (await complete(web(1), key.secret)).status === 200, 5_000, 'the slot freed');
  });

  it('a request that fails upstream frees its slot too', async () => {
    const key = await createKey({ max_concurrent: 1 });
    upstream.script([{ kind: 'status', status: 400 }]);
    expect((await complete(web(0), key.secret)).status).toBe(400);
    expect((await complete(web(1), key.secret)).status).toBe(200);
  });

  it('a streaming client that goes away frees the slot of its cancelled request', async () => {
    const key = await createKey({ max_concurrent: 1 });
    upstream.script([{ kind: 'slow-stream', chunkDelayMs: 500, chunks: 20 }]);
    const abort = new AbortController();
    const response = await fetch(`${web(0)}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...CHAT, stream: true }),
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    expect((await complete(web(1), key.secret)).status).toBe(429);
    abort.abort();
    await eventually(async () => (await complete(web(1), key.secret)).status === 200, 5_000, 'the cancelled request freed its slot');
  });
});

describe('batch lines', () => {
  it("run while the key's one concurrent slot is held: the lane paces them, not the key's concurrency limit", async () => {
    const key = await createKey({ max_concurrent: 1 });
    upstream.script([{ kind: 'slow-stream', chunkDelayMs: 500, chunks: 40 }]);
    let held = true;
    const abort = new AbortController();
    const live = stream(web(0), key.secret, abort.signal).finally(() => (held = false));
    await eventually(async () => upstream.requests.length === 1, 5_000, 'the live request holds the slot');
    const client = new OpenAI({ baseURL: gateway.webs[1]?.baseURL, apiKey: key.secret, maxRetries: 0 });
    const lines = ['a', 'b', 'c'].map((id) =>
      JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'sim', messages: [{ role: 'user', content: id }] } }),
    );
    const file = await client.files.create({ file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'input.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await eventually(async () => (await client.batches.retrieve(batch.id)).status === 'completed', 15_000, 'the batch to complete');
    expect((await client.batches.retrieve(batch.id)).request_counts).toMatchObject({ total: 3, completed: 3, failed: 0 });
    expect(held).toBe(true);
    abort.abort();
    await live.catch(() => undefined);
  });
});

describe('PATCH /internal/v1/keys/{id}', () => {
  it('changes a limit, which the other web process enforces at once; null clears it back to the plan', async () => {
    const key = await createKey({ name: 'patched' });
    for (const i of [0, 1] as const) expect((await complete(web(i), key.secret)).status).toBe(200);
    const patched = await call(web(0), admin.secret, 'PATCH', `/internal/v1/keys/${key.id}`, { rpm: 1, max_concurrent: 5 });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ id: key.id, name: 'patched', rpm: 1, tpm: null, max_concurrent: 5 });
    expect(patched.body).not.toHaveProperty('secret');
    await eventually(async () => (await complete(web(1), key.secret)).status === 429, AT_ONCE_MS, 'rpm=1 on the second web process');
    expect(expectRateLimited(await complete(web(1), key.secret))).toContain(`1 requests per minute for API key ${key.id}`);

    const cleared = await call(web(0), admin.secret, 'PATCH', `/internal/v1/keys/${key.id}`, { rpm: null });
    expect(cleared.body).toMatchObject({ rpm: null, tpm: null, max_concurrent: 5 });
    await eventually(async () => (await complete(web(1), key.secret)).status === 200, AT_ONCE_MS, 'rpm cleared on the second web process');

    const listed = await call(web(1), admin.secret, 'GET', '/internal/v1/keys');
    expect(listed.body.data.find((k: { id: string }) => k.id === key.id)).toMatchObject({ rpm: null, tpm: null, max_concurrent: 5 });
  });

  it.each([
    ['rpm', 0],
    ['rpm', -1],
    ['tpm', 'x'],
    ['max_concurrent', 1.5],
    ['max_concurrent', 0],
    ['tpm', 2_147_483_648],
  ])('%s=%j is 400 naming the field, on PATCH and POST', async (field, value) => {
    const key = await createKey({});
    for (const response of [
      await call(web(0), admin.secret, 'PATCH', `/internal/v1/keys/${key.id}`, { [field]: value }),
      await call(web(0), admin.secret, 'POST', '/internal/v1/keys', { role: 'app', [field]: value }),
    ]) {
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(Object.keys(response.body)).toEqual(['error']);
      expect(response.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_value', param: field });
    }
  });

  it('an empty change is 400, an unknown field is 400, and another tenant’s or an unknown key is 404', async () => {
    const key = await createKey({});
    const empty = await call(web(0), admin.secret, 'PATCH', `/internal/v1/keys/${key.id}`, {});
    expect(empty.body.error).toMatchObject({ code: 'missing_required_field', param: 'rpm' });
    const unknownField = await call(web(0), admin.secret, 'PATCH', `/internal/v1/keys/${key.id}`, { role: 'admin' });
    expect(unknownField.body.error).toMatchObject({ code: 'invalid_value', param: 'role' });
    const other = await gateway.issueKey('elsewhere', 'admin');
    expect((await call(web(0), other.secret, 'PATCH', `/internal/v1/keys/${key.id}`, { rpm: 1 })).status).toBe(404);
    expect((await call(web(0), admin.secret, 'PATCH', '/internal/v1/keys/key_missing', { rpm: 1 })).status).toBe(404);
  });

  it('is audited as key.updated with the fields sent and the acting key', async () => {
    const key = await createKey({ rpm: 3 });
    expect((await call(web(0), admin.secret, 'PATCH', `/internal/v1/keys/${key.id}`, { tpm: 1000, rpm: null })).status).toBe(200);
    type Event = { actor: string; action: string; target: string; details: Record<string, unknown> };
    const events = async (): Promise<Event[]> => (await call(web(0), admin.secret, 'GET', '/v1/audit?limit=1000')).body.data;
    await eventually(async () => (await events()).some((e) => e.action === 'key.updated' && e.target === key.id), 5_000, 'audit drained');
    const log = await events();
    expect(log.find((e) => e.action === 'key.updated' && e.target === key.id)).toMatchObject({ actor: admin.id, details: { tpm: 1000, rpm: null } });
    expect(log.find((e) => e.action === 'key.created' && e.target === key.id)?.details).toMatchObject({ role: 'app', rpm: 3 });
  });
});
