/**
 * The exact-match response cache end to end: the official openai SDK against real web
 * and worker processes and a loopback fake upstream. Hits replay exactly, JSON and streamed, and
 * each from the other; they cost no upstream call and no job; tenants never share; TTL, the cap,
 * Cache-Control's directives, the usage record, metrics, and the policy endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { randomUUID } from 'node:crypto';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { opsUrl, startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { REQUEST_QUEUE } from '../../src/infra/redis/keys.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually } from '../helpers/http.ts';
import { drain, requestIdOf, usageRecordOf } from '../helpers/sdk-calls.ts';

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
const clients = new Map<string, OpenAI>();
const secrets = new Map<string, string>();

async function tenantWithCache(tenantId: string, policy: { enabled: boolean; default_ttl_s: number; max_bytes: number }): Promise<OpenAI> {
  const admin = await gateway.issueKey(tenantId, 'admin');
  expect((await call(gateway.origin, admin.secret, 'PUT', '/internal/v1/cache-policy', policy)).status).toBe(200);
  const developer = await gateway.issueKey(tenantId, 'developer');
  secrets.set(tenantId, developer.secret);
  const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: developer.secret, maxRetries: 0 });
  clients.set(tenantId, client);
  return client;
}

/** A request of its own (a fresh prompt), deterministic unless `temperature` is given. */
const body = (extra: Partial<ChatCompletionCreateParamsNonStreaming> = {}): ChatCompletionCreateParamsNonStreaming => ({
  model: 'fake-gpt',
  messages: [{ role: 'user', content: `Say hello ${randomUUID()}` }],
  temperature: 0,
  ...extra,
});

const stored = (tenantId: string) => gateway.redis.zcard(gateway.keys.cacheIndex(tenantId).byAge);

/** Waits until the worker stored an answer of the tenant at or after `since` (ms; it stores once the client has its answer). */
const storedSince = (tenantId: string, since: number) =>
  eventually(async () => (await gateway.redis.zcount(gateway.keys.cacheIndex(tenantId).byAge, since, '+inf')) > 0, 5000, 'the answer stored');

/** Waits until the worker stored `count` answers of the tenant (it stores once the client has its answer). */
const storedCount = (tenantId: string, count: number) => eventually(async () => (await stored(tenantId)) >= count, 5000, `${count} answers stored`);

async function json(client: OpenAI, request: ChatCompletionCreateParamsNonStreaming, headers: Record<string, string> = {}) {
  const { data, response } = await client.chat.completions.create(request, { headers }).withResponse();
  return { data, cache: response.headers.get('x-cache'), age: response.headers.get('age') };
}

async function streamed(client: OpenAI, request: ChatCompletionCreateParamsNonStreaming, includeUsage = true, headers: Record<string, string> = {}) {
  const { data, response } = await client.chat.completions
    .create({ ...request, stream: true, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) }, { headers })
    .withResponse();
  return { chunks: await drain(data), cache: response.headers.get('x-cache'), age: response.headers.get('age') };
}

/** A completion without the request id, which is each request's own. */
const sameAnswer = (completion: object) => {
  const { request_id: _requestId, ...rest } = completion as { request_id: string };
  return rest;
};

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({ catalog: testCatalog(upstream.url), env: { METRICS_TENANTS: 'cachey' } });
  await tenantWithCache('cachey', { enabled: true, default_ttl_s: 60, max_bytes: 1_000_000 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('the response cache', () => {
  it('answers a repeated JSON request from the cache, exactly, with x-cache: hit and Age, no upstream call and no job', async () => {
    const client = clients.get('cachey') as OpenAI;
    const request = body();
    const first = await json(client, request);
    expect(first.cache).toBe('miss');
    await storedCount('cachey', 1);
    const calls = upstream.requests.length;
    const jobCounter = `${gateway.keys.queuePrefix(0)}:${REQUEST_QUEUE}:id`;
    const jobsBefore = await gateway.redis.get(jobCounter);
    expect(Number(jobsBefore)).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const second = await json(client, request);
    expect(second.cache).toBe('hit');
    expect(Number(second.age)).toBeGreaterThanOrEqual(1);
    expect(sameAnswer(second.data)).toEqual(sameAnswer(first.data));
    expect(requestIdOf(second.data)).not.toBe(requestIdOf(first.data));
    expect(upstream.requests.length).toBe(calls);
    // BullMQ numbers its jobs from one counter: a hit made none.
    expect(await gateway.redis.get(jobCounter)).toBe(jobsBefore);
    const record = await usageRecordOf(gateway, secrets.get('cachey') as string, requestIdOf(second.data));
    expect(record).toMatchObject({ cache_hit: true, cost_micros: 0, status: 'succeeded', model: 'fake-gpt', total_tokens: first.data.usage?.total_tokens });
    const original = await usageRecordOf(gateway, secrets.get('cachey') as string, requestIdOf(first.data));
    expect(original.cache_hit).toBe(false);
  });

  it('replays a stream exactly, and serves each kind from the other', async () => {
    const client = clients.get('cachey') as OpenAI;
    const streamRequest = body();
    const before = await stored('cachey');
    const first = await streamed(client, streamRequest);
    expect(first.cache).toBe('miss');
    await storedCount('cachey', before + 1);
    const calls = upstream.requests.length;
    const again = await streamed(client, streamRequest);
    expect(again.cache).toBe('hit');
    expect(again.chunks).toEqual(first.chunks);
    // Without include_usage the same answer comes without the usage chunk, as the worker sends it.
    const bare = await streamed(client, streamRequest, false);
    expect(bare.chunks).toEqual(first.chunks.filter((chunk) => chunk.choices.length > 0).map(({ usage: _usage, ...chunk }) => chunk));
    const asJson = await json(client, streamRequest);
    expect(asJson.cache).toBe('hit');
    expect(asJson.data.choices[0]?.message.content).toBe(first.chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''));
    expect(asJson.data.choices[0]?.finish_reason).toBe('stop');
    expect(asJson.data.usage).toEqual(first.chunks.at(-1)?.usage);
    expect(asJson.data.id).toBe(first.chunks[0]?.id);
    expect(upstream.requests.length).toBe(calls);

    const jsonRequest = body();
    const sent = Date.now();
    const original = await json(client, jsonRequest);
    await storedSince('cachey', sent);
    const asStream = await streamed(client, jsonRequest);
    expect(asStream.cache).toBe('hit');
    expect(asStream.chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(original.data.choices[0]?.message.content);
    expect(asStream.chunks.at(-1)?.usage).toEqual(original.data.usage);
    expect(asStream.chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('never answers one tenant from another tenant’s cache', async () => {
    const other = await tenantWithCache('cachey-two', { enabled: true, default_ttl_s: 60, max_bytes: 1_000_000 });
    const mine = clients.get('cachey') as OpenAI;
    const request = body();
    const calls = upstream.requests.length;
    const sent = Date.now();
    expect((await json(mine, request)).cache).toBe('miss');
    await storedSince('cachey', sent);
    expect((await json(mine, request)).cache).toBe('hit');
    expect((await json(other, request)).cache).toBe('miss');
    expect(upstream.requests.length).toBe(calls + 2);
  });

  it('honours max-age, no-cache and no-store, and caches a sampling request only when asked', async () => {
    const client = clients.get('cachey') as OpenAI;
    const request = body();
    const first = Date.now();
    expect((await json(client, request, { 'cache-control': 'max-age=2' })).cache).toBe('miss');
    await storedSince('cachey', first);
    expect((await json(client, request, { 'cache-control': 'max-age=2' })).cache).toBe('hit');
    await new Promise((resolve) => setTimeout(resolve, 2200));
    // Stored for two seconds: gone.
    expect((await json(client, request, { 'cache-control': 'max-age=2' })).cache).toBe('miss');

    // Stored for a minute, but this request accepts one second at most.
    const older = body();
    const keptAt = Date.now();
    await json(client, older);
    await storedSince('cachey', keptAt);
    expect((await json(client, older)).cache).toBe('hit');
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect((await json(client, older, { 'cache-control': 'max-age=1' })).cache).toBe('miss');

    let calls = upstream.requests.length;
    expect((await json(client, older, { 'cache-control': 'no-cache' })).cache).toBe('refresh');
    expect(upstream.requests.length).toBe(calls + 1);

    const unstored = body();
    expect((await json(client, unstored, { 'cache-control': 'no-store' })).cache).toBe('bypass');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await json(client, unstored)).cache).toBe('miss');

    const sampling = body({ temperature: 0.7 });
    calls = upstream.requests.length;
    expect((await json(client, sampling)).cache).toBe('bypass');
    expect((await json(client, { ...sampling, temperature: undefined })).cache).toBe('bypass');
    const asked = Date.now();
    expect((await json(client, sampling, { 'cache-control': 'max-age=60' })).cache).toBe('miss');
    await storedSince('cachey', asked);
    expect((await json(client, sampling, { 'cache-control': 'max-age=60' })).cache).toBe('hit');
    expect(upstream.requests.length).toBe(calls + 3);

    const malformed = await call(gateway.origin, secrets.get('cachey') as string, 'POST', '/v1/chat/completions', body(), { 'cache-control': 'max-age=soon' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatchObject({ code: 'invalid_value', param: 'Cache-Control' });
  });

  it('leaves a tenant without caching alone, whatever the request asks', async () => {
    const plain = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('nocache', 'developer')).secret, maxRetries: 0 });
    const request = body();
    const calls = upstream.requests.length;
    expect((await json(plain, request, { 'cache-control': 'max-age=60' })).cache).toBe('bypass');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await json(plain, request, { 'cache-control': 'max-age=60' })).cache).toBe('bypass');
    expect(upstream.requests.length).toBe(calls + 2);
    expect(await stored('nocache')).toBe(0);
  });

  it('keeps a tenant under its cap, evicting the oldest answers', async () => {
    const maxBytes = 1024;
    const client = await tenantWithCache('cachey-small', { enabled: true, default_ttl_s: 60, max_bytes: maxBytes });
    const requests = Array.from({ length: 6 }, () => body());
    for (const [i, request] of requests.entries()) {
      await json(client, request);
      await eventually(
        async () =>
          Number(await gateway.redis.hget(gateway.keys.cacheIndex('cachey-small').sizes, '#total')) > 0 && (await stored('cachey-small')) >= Math.min(i + 1, 2),
        5000,
        'stored',
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const sizes = await gateway.redis.hgetall(gateway.keys.cacheIndex('cachey-small').sizes);
    const { '#total': total, ...entries } = sizes;
    expect(Number(total)).toBeLessThanOrEqual(maxBytes);
    expect(Object.values(entries).reduce((sum, size) => sum + Number(size), 0)).toBe(Number(total));
    expect(Object.keys(entries).length).toBeLessThan(requests.length);
    const calls = upstream.requests.length;
    expect((await json(client, requests[0] as ChatCompletionCreateParamsNonStreaming)).cache).toBe('miss');
    expect((await json(client, requests.at(-1) as ChatCompletionCreateParamsNonStreaming)).cache).toBe('hit');
    expect(upstream.requests.length).toBe(calls + 1);
  });

  it('counts hits, misses, refreshes and bypasses, and the bytes held, in the web process’s metrics', async () => {
    const text = await (await fetch(`${opsUrl(gateway.web)}/metrics`)).text();
    for (const result of ['hit', 'miss', 'refresh', 'bypass'])
      expect(text).toMatch(new RegExp(`gateway_cache_requests_total\\{result="${result}",tenant="cachey"\\} [1-9]`));
    expect(text).toMatch(/gateway_cache_stored_bytes\{tenant="cachey"\} [1-9]/);
    expect(text).toMatch(/gateway_cache_requests_total\{result="bypass",tenant="other"\} [1-9]/);
  });
});

describe("a plan's price of a hit", () => {
  /** Budgets of the tenant: the day window's settled spend. */
  const spentToday = async (secret: string) => {
    const response = await call(gateway.origin, secret, 'GET', '/v1/budgets');
    const { data } = response.body as { data: Array<{ window: string; spent_micros: number }> };
    return (data.find((budget) => budget.window === 'day') as { spent_micros: number }).spent_micros;
  };

  it("charges each hit the plan's price, in its usage record and in the budget, and a budget that cannot pay it refuses the hit", async () => {
    const operator = (await gateway.issueKey('operator', 'admin')).secret;
    for (const [tenantId, price] of [
      ['priced', 500],
      ['unpriced', null],
    ] as const) {
      await tenantWithCache(tenantId, { enabled: true, default_ttl_s: 60, max_bytes: 1_000_000 });
      const plan = await call(gateway.origin, operator, 'PUT', `/internal/v1/tenants/${tenantId}/plan`, { cache_hit_price_micros: price });
      expect(plan.status).toBe(200);
      expect(plan.body).toMatchObject({ cache_hit_price_micros: price });
    }
    const admin = (await gateway.issueKey('priced', 'admin')).secret;
    expect((await call(gateway.origin, admin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 1_000_000_000 })).status).toBe(201);
    const client = clients.get('priced') as OpenAI;
    const request = body();
    const since = Date.now();
    expect((await json(client, request)).cache).toBe('miss');
    await storedSince('priced', since);
    const before = await spentToday(admin);
    const hit = await json(client, request);
    expect(hit.cache).toBe('hit');
    expect(await spentToday(admin)).toBe(before + 500);
    expect(await usageRecordOf(gateway, secrets.get('priced') as string, requestIdOf(hit.data))).toMatchObject({ cache_hit: true, cost_micros: 500 });

    // A day's budget smaller than the price: the priced tenant's hit is refused; a free hit is still served.
    const free = clients.get('unpriced') as OpenAI;
    const freeRequest = body();
    const freeSince = Date.now();
    expect((await json(free, freeRequest)).cache).toBe('miss');
    await storedSince('unpriced', freeSince);
    for (const tenantId of ['priced', 'unpriced']) {
      const tenantAdmin = (await gateway.issueKey(tenantId, 'admin')).secret;
      expect((await call(gateway.origin, tenantAdmin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 1 })).status).toBe(201);
    }
    const refused = await client.chat.completions.create(request).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((await json(free, freeRequest)).cache).toBe('hit');
    expect((await free.chat.completions.create(body()).catch((error: unknown) => error)) as { status: number }).toMatchObject({ status: 402 });
  });
});

describe('the cache policy', () => {
  const DEFAULT = { object: 'cache_policy', enabled: false, default_ttl_s: 300, max_bytes: 64 * 1024 * 1024 };

  it('is the default until set; a change is audited', async () => {
    const admin = await gateway.issueKey('policy-tenant', 'admin');
    expect(await call(gateway.origin, admin.secret, 'GET', '/internal/v1/cache-policy')).toMatchObject({ status: 200, body: DEFAULT });
    const put = await call(gateway.origin, admin.secret, 'PUT', '/internal/v1/cache-policy', { enabled: true, default_ttl_s: 120, max_bytes: 4096 });
    expect(put).toMatchObject({ status: 200, body: { object: 'cache_policy', enabled: true, default_ttl_s: 120, max_bytes: 4096 } });
    expect((await call(gateway.origin, admin.secret, 'GET', '/internal/v1/cache-policy')).body).toEqual(put.body);
    expect(await gateway.repository.policies.getCache('policy-tenant')).toMatchObject({ enabled: true, defaultTtlS: 120, maxBytes: 4096 });
    await eventually(
      async () => (await call(gateway.origin, admin.secret, 'GET', '/v1/audit?action=policy.cache_updated')).body.data.length === 1,
      5000,
      'the change audited',
    );
    const [event] = (await call(gateway.origin, admin.secret, 'GET', '/v1/audit?action=policy.cache_updated')).body.data;
    expect(event).toMatchObject({
      actor: admin.id,
      target: 'tenant:policy-tenant',
      outcome: 'success',
      request_id: put.headers.get('x-request-id'),
      details: { enabled: true, default_ttl_s: 120, max_bytes: 4096 },
    });
  });

  it.each([
    ['default_ttl_s', { enabled: true, default_ttl_s: 0, max_bytes: 4096 }],
    ['default_ttl_s', { enabled: true, default_ttl_s: 1.5, max_bytes: 4096 }],
    ['default_ttl_s', { enabled: true, default_ttl_s: 30 * 86_400 + 1, max_bytes: 4096 }],
    ['max_bytes', { enabled: true, default_ttl_s: 60, max_bytes: 10 }],
    ['max_bytes', { enabled: true, default_ttl_s: 60, max_bytes: 1024 ** 3 + 1 }],
    ['enabled', { enabled: 'yes', default_ttl_s: 60, max_bytes: 4096 }],
    ['max_bytes', { enabled: true, default_ttl_s: 60 }],
  ])('refuses a bad %s with 400 naming it', async (param, policy) => {
    const admin = await gateway.issueKey('policy-tenant', 'admin');
    const response = await call(gateway.origin, admin.secret, 'PUT', '/internal/v1/cache-policy', policy);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param });
  });

  it('refuses a developer, reading or changing', async () => {
    const { secret } = await gateway.issueKey('policy-tenant', 'developer');
    const read = await call(gateway.origin, secret, 'GET', '/internal/v1/cache-policy');
    expect(read.status).toBe(403);
    expect(read.body.error.code).toBe('permission_denied');
    const write = await call(gateway.origin, secret, 'PUT', '/internal/v1/cache-policy', { enabled: true, default_ttl_s: 60, max_bytes: 4096 });
    expect(write.status).toBe(403);
  });
});
