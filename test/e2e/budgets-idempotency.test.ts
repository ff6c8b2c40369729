/**
 * Budgets, idempotency and rate limits under concurrency, across two web and two worker
 * processes, with real Redis and PostgreSQL and a loopback upstream.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { scanKeys, startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually, type JsonResponse } from '../helpers/http.ts';

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let operator: string;
const HUNDRED_WORDS = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');

function web(i: number): string {
  return (gateway.webs[i % gateway.webs.length] as { origin: string }).origin;
}

function complete(i: number, secret: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return call(web(i), secret, 'POST', '/v1/chat/completions', body, headers);
}

async function tenantAdmin(tenant: string): Promise<string> {
  return (await gateway.issueKey(tenant, 'admin')).secret;
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({ catalog: testCatalog(upstream.url), webs: 2, workers: 2, env: { SETTINGS_CACHE_TTL_MS: '100' } });
  operator = (await gateway.issueKey('operator', 'admin')).secret;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

beforeEach(() => upstream.reset());

describe('budgets', () => {
  it('200 concurrent requests against a budget covering 50: 50 run and a few more as settlements free what they did not cost, the rest get 402, spend stays within the limit', async () => {
    const admin = await tenantAdmin('spender');
    // Each request reserves its prompt's bound, 15 tokens (3 to prime the reply, 3 for the message, 4 bytes of role and
    // 5 of text) × 1 + 100 max_tokens × 2 = 215 micro-units, and costs 1 + 200 = 201: 50 fit at once, and each that
    // settles frees 14, so that up to 53 (53 × 201 ≤ 50 × 215) may run, as the settlements come.
    const limit = 50 * 215;
    const created = await call(gateway.origin, admin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: limit });
    expect(created.status).toBe(201);
    upstream.script(Array.from({ length: 200 }, () => ({ kind: 'ok' as const, text: HUNDRED_WORDS })));
    const body = { model: 'fake-gpt', max_tokens: 100, messages: [{ role: 'user', content: 'spend' }] };
    const responses = await Promise.all(Array.from({ length: 200 }, (_, i) => complete(i, admin, body)));
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 402);
    expect(ok.length).toBeGreaterThanOrEqual(50);
    expect(ok.length * 201).toBeLessThanOrEqual(limit);
    expect(refused).toHaveLength(200 - ok.length);
    expect(refused[0]?.body.error).toMatchObject({ type: 'invalid_request_error', code: 'insufficient_credits' });
    expect(refused[0]?.body.error.message).toMatch(/daily budget of 0\.01 is exhausted; it resets at \d{4}-\d{2}-\d{2}T00:00:00\.000Z/);
    expect(upstream.requests).toHaveLength(ok.length);
    await eventually(async () => (await call(gateway.origin, admin, 'GET', '/v1/budgets')).body.data[0].reserved_micros === 0, 5000, 'all settled');
    const budgets = (await call(gateway.origin, admin, 'GET', '/v1/budgets')).body;
    expect(budgets.data[0]).toMatchObject({
      window: 'day',
      scope: 'tenant',
      limit_micros: limit,
      spent_micros: ok.length * 201,
      reserved_micros: 0,
      remaining_micros: limit - ok.length * 201,
    });
  });

  it('a credit account is drawn down and refuses when short; a top-up lets requests through again', async () => {
    const admin = await tenantAdmin('prepaid');
    upstream.script(Array.from({ length: 3 }, () => ({ kind: 'ok' as const, text: HUNDRED_WORDS })));
    const body = { model: 'fake-gpt', max_tokens: 100, messages: [{ role: 'user', content: 'spend' }] };
    expect((await call(gateway.origin, operator, 'POST', '/internal/v1/tenants/prepaid/credits', { amount_micros: 500 })).status).toBe(201);
    expect((await call(gateway.origin, admin, 'POST', '/internal/v1/tenants/prepaid/credits', { amount_micros: 500 })).status).toBe(403);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await complete(0, admin, body)).status).toBe(200);
    expect((await complete(1, admin, body)).status).toBe(200);
    const short = await complete(0, admin, body);
    expect(short.status).toBe(402);
    expect(short.body.error.message).toMatch(/credit balance/);
    await call(gateway.origin, operator, 'POST', '/internal/v1/tenants/prepaid/credits', { amount_micros: 1000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await complete(1, admin, body)).status).toBe(200);
    await eventually(async () => (await call(gateway.origin, admin, 'GET', '/v1/budgets')).body.credit.reserved_micros === 0, 5000, 'settled');
    expect((await call(gateway.origin, admin, 'GET', '/v1/budgets')).body.credit).toEqual({ balance_micros: 1500 - 3 * 201, reserved_micros: 0 });
  });

  it('credits a top-up once when it is sent twice at once while other top-ups land, on either web process', async () => {
    const admin = await tenantAdmin('doubled');
    const credits = '/internal/v1/tenants/doubled/credits';
    expect((await call(gateway.origin, operator, 'POST', credits, { id: 'top_doubled_0', amount_micros: 1_000 })).status).toBe(201);
    await eventually(async () => (await call(gateway.origin, admin, 'GET', '/v1/budgets')).body.credit?.balance_micros === 1_000, 5000, 'the live balance');
    const origins = gateway.webs.map((web) => web.origin);
    for (let round = 1; round <= 4; round++) {
      const ids = Array.from({ length: 4 }, (_, i) => `top_doubled_${round}_${i}`);
      const sent = ids.flatMap((id, i) =>
        [0, 1].map((copy) => call(origins[(i + copy) % origins.length] as string, operator, 'POST', credits, { id, amount_micros: 1_000 })),
      );
      expect((await Promise.all(sent)).map((response) => response.status)).toEqual(Array(8).fill(201));
      expect((await call(gateway.origin, admin, 'GET', '/v1/budgets')).body.credit, `round ${round}`).toEqual({
        balance_micros: 1_000 + round * 4_000,
        reserved_micros: 0,
      });
    }
    expect(await gateway.repository.budgets.creditToppedUp('doubled')).toBe(17_000);
  });

  it('refuses numbers past what the store and the counters hold with 400 naming the field, and a refused top-up moves no balance', async () => {
    const admin = await tenantAdmin('huge');
    expect((await call(gateway.origin, operator, 'POST', '/internal/v1/tenants/huge/credits', { amount_micros: 700 })).status).toBe(201);
    await eventually(async () => (await call(gateway.origin, admin, 'GET', '/v1/budgets')).body.credit?.balance_micros === 700, 5000, 'the first top-up');
    const cases: Array<[string, string, string, Record<string, unknown>, string]> = [
      [operator, 'POST', '/internal/v1/tenants/huge/credits', { amount_micros: 1e308 }, 'amount_micros'],
      [operator, 'POST', '/internal/v1/tenants/huge/credits', { amount_micros: 2 ** 63 }, 'amount_micros'],
      [admin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 1e308 }, 'limit_micros'],
      [admin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 2 ** 63 }, 'limit_micros'],
      [operator, 'PUT', '/internal/v1/tenants/huge/plan', { requests_per_minute: 1e308 }, 'requests_per_minute'],
      [operator, 'PUT', '/internal/v1/tenants/huge/plan', { max_queued: 1e308 }, 'max_queued'],
      [operator, 'PUT', '/internal/v1/tenants/huge/plan', { tokens_per_minute: 2 ** 31 }, 'tokens_per_minute'],
    ];
    for (const [secret, method, path, body, param] of cases) {
      const response = await call(gateway.origin, secret, method, path, body);
      expect(response.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
      expect(response.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_value', param });
      expect(response.body.error.request_id).toMatch(/^req_/);
    }
    expect((await call(gateway.origin, admin, 'GET', '/v1/budgets')).body.credit).toEqual({ balance_micros: 700, reserved_micros: 0 });
    expect(await gateway.redis.hget(gateway.keys.credit('huge'), 'balance')).toBe('700');
    expect((await call(gateway.origin, admin, 'GET', '/v1/budgets')).body.data).toEqual([]);
  });

  it("a flushed Redis rebuilds the day's spend from the usage records; the budget still holds", async () => {
    const admin = await tenantAdmin('flushed');
    await call(gateway.origin, admin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 3 * 215 });
    upstream.script(Array.from({ length: 3 }, () => ({ kind: 'ok' as const, text: HUNDRED_WORDS })));
    const body = { model: 'fake-gpt', max_tokens: 100, messages: [{ role: 'user', content: 'spend' }] };
    for (let i = 0; i < 2; i++) expect((await complete(i, admin, body)).status).toBe(200);
    await eventually(async () => (await call(gateway.origin, admin, 'GET', '/v1/usage?since=2000-01-01')).body.data.length === 2, 5000, 'records stored');
    const tenantKeys = await scanKeys(gateway.redis, `${gateway.prefix}:{flushed}:*`);
    await gateway.redis.del(...tenantKeys);
    expect((await complete(0, admin, body)).status).toBe(200);
    expect((await complete(1, admin, body)).status).toBe(402);
  });
});

describe('idempotency', () => {
  it('100 concurrent retries with one key: one provider call, one record, one charge, 100 identical answers', async () => {
    const secret = (await gateway.issueKey('retrier', 'developer')).secret;
    const admin = await tenantAdmin('retrier');
    await call(gateway.origin, admin, 'POST', '/internal/v1/budgets', { window: 'month', limit_micros: 1_000_000 });
    upstream.script([{ kind: 'slow-stream', chunkDelayMs: 20, chunks: 5 }]);
    const key = randomUUID();
    const body = { model: 'fake-gpt', messages: [{ role: 'user', content: 'once only' }] };
    const responses = await Promise.all(Array.from({ length: 100 }, (_, i) => complete(i, secret, body, { 'idempotency-key': key })));
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(new Set(responses.map((r) => JSON.stringify(r.body))).size).toBe(1);
    expect(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(99);
    expect(upstream.requests).toHaveLength(1);
    await eventually(async () => (await call(gateway.origin, secret, 'GET', '/v1/usage?since=2000-01-01')).body.data.length === 1, 5000, 'one record');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await call(gateway.origin, secret, 'GET', '/v1/usage?since=2000-01-01')).body.data).toHaveLength(1);
    const spent = (await call(gateway.origin, secret, 'GET', '/v1/budgets')).body.data[0].spent_micros;
    expect(spent).toBe((await call(gateway.origin, secret, 'GET', '/v1/usage?since=2000-01-01')).body.data[0].cost_micros);
    const later = await complete(1, secret, body, { 'idempotency-key': key });
    expect(later.body).toEqual(responses[0]?.body);
    expect(later.headers.get('idempotent-replayed')).toBe('true');
  });

  it('rejects a reused key with another body, and malformed keys', async () => {
    const secret = (await gateway.issueKey('retrier', 'app')).secret;
    const key = randomUUID();
    expect((await complete(0, secret, { model: 'fake-gpt', messages: [{ role: 'user', content: 'a' }] }, { 'idempotency-key': key })).status).toBe(200);
    const reused = await complete(1, secret, { model: 'fake-gpt', messages: [{ role: 'user', content: 'b' }] }, { 'idempotency-key': key });
    expect(reused.status).toBe(422);
    expect(reused.body.error).toMatchObject({ code: 'idempotency_key_reused', param: 'Idempotency-Key' });
    const long = await complete(0, secret, { model: 'fake-gpt', messages: [{ role: 'user', content: 'a' }] }, { 'idempotency-key': 'k'.repeat(256) });
    expect(long.body.error).toMatchObject({ code: 'idempotency_key_invalid', param: 'Idempotency-Key' });
  });

  it('an attempt that failed without a charge frees the key; keys of two tenants never collide', async () => {
    const x = (await gateway.issueKey('tenant-x', 'app')).secret;
    const y = (await gateway.issueKey('tenant-y', 'app')).secret;
    const key = randomUUID();
    upstream.script([
      { kind: 'status', status: 400 },
      { kind: 'ok', text: 'second try' },
    ]);
    const body = { model: 'fake-gpt', messages: [{ role: 'user', content: 'x' }] };
    expect((await complete(0, x, body, { 'idempotency-key': key })).status).toBe(400);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const retry = await complete(1, x, body, { 'idempotency-key': key });
    expect(retry.status).toBe(200);
    expect(retry.body.choices[0].message.content).toBe('second try');
    const other = await complete(0, y, { model: 'fake-gpt', messages: [{ role: 'user', content: 'different' }] }, { 'idempotency-key': key });
    expect(other.status).toBe(200);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a stream resumes after Last-Event-ID with the same key; the worker kept streaming while the client was away', async () => {
    const secret = (await gateway.issueKey('resumer', 'app')).secret;
    upstream.script([{ kind: 'slow-stream', chunkDelayMs: 60, chunks: 12 }]);
    const key = randomUUID();
    const body = JSON.stringify({ model: 'fake-gpt', stream: true, messages: [{ role: 'user', content: 'resume me' }] });
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': key };
    const controller = new AbortController();
    const first = await fetch(`${web(0)}/v1/chat/completions`, { method: 'POST', headers, body, signal: controller.signal });
    const reader = first.body!.getReader();
    let received = '';
    while (!/id: 3\n/.test(received)) received += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const seen = received
      .split('\n\n')
      .filter((e) => e.startsWith('id: '))
      .slice(0, 3);
    const resumed = await fetch(`${web(1)}/v1/chat/completions`, { method: 'POST', headers: { ...headers, 'last-event-id': '3' }, body });
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('idempotent-replayed')).toBe('true');
    const rest = (await resumed.text()).split('\n\n').filter((e) => e !== '');
    expect(rest[0]).toMatch(/^id: 4\n/);
    expect(rest.at(-1)).toMatch(/data: \[DONE\]$/);
    const text = [...seen, ...rest]
      .map((e) => /data: (\{.*\})/.exec(e)?.[1])
      .filter(Boolean)
      .map((json) => JSON.parse(json as string).choices[0]?.delta.content ?? '')
      .join('');
    expect(text).toBe(Array.from({ length: 12 }, (_, i) => `w${i} `).join(''));
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]?.clientClosed).toBe(false);
  });
});

describe('resuming a stream no request holds', () => {
  it('answers 409 stream_not_held and runs nothing, charges nothing, and leaves the key free', async () => {
    const secret = (await gateway.issueKey('resumed-unknown', 'app')).secret;
    const calls = upstream.requests.length;
    const key = randomUUID();
    const body = JSON.stringify({ model: 'fake-gpt', stream: true, messages: [{ role: 'user', content: 'never started here' }] });
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': key };
    const resumed = await fetch(`${web(0)}/v1/chat/completions`, { method: 'POST', headers: { ...headers, 'last-event-id': '3' }, body });
    expect(resumed.status).toBe(409);
    expect(((await resumed.json()) as { error: unknown }).error).toMatchObject({ code: 'stream_not_held', param: 'Last-Event-ID' });
    expect(upstream.requests.length).toBe(calls);
    const fresh = await fetch(`${web(1)}/v1/chat/completions`, { method: 'POST', headers, body });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    await fresh.text();
  });
});

describe('resuming after the last event', () => {
  it.each([
    ['its [DONE]', { kind: 'ok' as const, text: 'all of it', chunks: 3 }],
    ['its error event', { kind: 'break-after-first-chunk' as const }],
  ])('after %s, answers 200 with an ended stream and runs nothing again', async (_what, behaviour) => {
    const secret = (await gateway.issueKey('resumed-end', 'app')).secret;
    upstream.script([behaviour, behaviour, behaviour, behaviour]);
    const calls = upstream.requests.length;
    const body = JSON.stringify({ model: 'fake-gpt', stream: true, messages: [{ role: 'user', content: 'to the end' }] });
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() };
    const whole = await fetch(`${web(0)}/v1/chat/completions`, { method: 'POST', headers, body });
    expect(whole.status).toBe(200);
    const ids = [...(await whole.text()).matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    const last = Math.max(...ids);
    const resumed = await fetch(`${web(1)}/v1/chat/completions`, { method: 'POST', headers: { ...headers, 'last-event-id': String(last) }, body });
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(resumed.headers.get('idempotent-replayed')).toBe('true');
    expect((await resumed.text()).trim()).toBe('');
    expect(upstream.requests.length - calls).toBe(1);
  });
});

describe('rate limits', () => {
  it('429 rate_limit_exceeded with Retry-After in whole seconds, and x-ratelimit headers on success', async () => {
    const secret = (await gateway.issueKey('limited', 'app')).secret;
    expect((await call(gateway.origin, operator, 'PUT', '/internal/v1/tenants/limited/plan', { requests_per_minute: 2 })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const body = { model: 'fake-gpt', messages: [{ role: 'user', content: 'x' }] };
    const first = await complete(0, secret, body);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect((await complete(1, secret, body)).status).toBe(200);
    const limited = await complete(0, secret, body);
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    const retryAfter = limited.headers.get('retry-after') ?? '';
    expect(retryAfter).toMatch(/^\d+$/);
    expect(limited.body.error.message).toContain(`Retry after ${retryAfter} seconds`);
  });

  it("the openai SDK's own retry waits Retry-After on our 429 and succeeds", async () => {
    const secret = (await gateway.issueKey('sdk-retry', 'app')).secret;
    await call(gateway.origin, operator, 'PUT', '/internal/v1/tenants/sdk-retry/plan', { requests_per_minute: 60 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const body = { model: 'fake-gpt', messages: [{ role: 'user' as const, content: 'x' }] };
    await Promise.all(Array.from({ length: 60 }, (_, i) => complete(i, secret, body)));
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 3 });
    const started = Date.now();
    const data = await client.chat.completions.create(body);
    expect(data.choices[0]?.message.content).toBeTruthy();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});
