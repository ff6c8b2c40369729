/**
 * A budget keeps counting what its usage records cost when Redis comes back empty under requests in flight:
 * they settle on the new Redis, whose counters are gone, while their records still wait in its outbox (the
 * worker's store is cut meanwhile, so they wait for certain); the next request rebuilds the counters from the
 * store before those records reach it. Each cost must be counted once, by the store's figure or by the
 * rebuild, so that the budget's spent equals the sum of its records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { freePort } from '../helpers/free-port.ts';
import { startRedisServer } from '../helpers/restartable-redis.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { call, eventually } from '../helpers/http.ts';

let port: number;
let redisServer: ChildProcess;
let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let redis: Redis;
let proxy: TcpProxy;

const IN_FLIGHT = 6;

beforeAll(async () => {
  port = await freePort();
  redisServer = await startRedisServer(port);
  upstream = await startFakeUpstream();
  gateway = await startGateway({ catalog: testCatalog(upstream.url), env: { REDIS_URL: `redis://127.0.0.1:${port}`, SETTINGS_CACHE_TTL_MS: '100' } });
  redis = new Redis(port, '127.0.0.1', { retryStrategy: () => 50, maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
  // The web reads the store directly; the worker, which writes the usage records, through a proxy the test cuts.
  proxy = await startTcpProxy(5432);
  const worker = gateway.workers.shift();
  worker?.child.kill('SIGTERM');
  await worker?.exited;
  await gateway.startWorker({ DATABASE_URL: gateway.databaseUrl.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`) });
});

afterAll(async () => {
  redis?.disconnect();
  await gateway?.close();
  await proxy?.close();
  redisServer?.kill('SIGKILL');
  await upstream?.close();
});

/** A streamed completion: when its first chunk arrived, and the status and body it ended with. */
interface Streamed {
  started: Promise<void>;
  ended: Promise<{ status: number; body: string }>;
}

function stream(secret: string, content: string): Streamed {
  let started: () => void = () => undefined;
  const startedPromise = new Promise<void>((resolve) => (started = resolve));
  const ended = (async () => {
    const response = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-gpt', stream: true, max_tokens: 50, messages: [{ role: 'user', content }] }),
    });
    let body = '';
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        body += decoder.decode(chunk, { stream: true });
        if (body.includes('data: {')) started();
      }
    } catch {
      // A stream cut short ends here; what it carried is in `body`.
    }
    started();
    return { status: response.status, body };
  })();
  return { started: startedPromise, ended };
}

const outboxLength = async (shard: number) => (await redis.llen(gateway.keys.outboxItems(shard))) + (await redis.zcard(gateway.keys.outboxLeases(shard)));

async function loseRedis(): Promise<void> {
  redisServer.kill('SIGKILL');
  await once(redisServer, 'exit');
  redisServer = await startRedisServer(port);
}

const today = () => {
  const since = new Date(new Date().toISOString().slice(0, 10));
  return { since, until: new Date(since.getTime() + 86_400_000) };
};
const recordsOf = (tenantId: string) => gateway.repository.usage.list({ tenantId, ...today() }, 50, null);

const dayOf = (tenantId: string) => {
  const start = new Date(new Date().toISOString().slice(0, 10));
  return gateway.repository.usage.spentMicros(tenantId, null, start, new Date(start.getTime() + 86_400_000), []);
};

describe('Redis lost under requests in flight', () => {
  it("keeps the budget's spent equal to its usage records once the outbox has drained", async () => {
    const { secret: admin } = await gateway.issueKey('acme', 'admin');
    expect((await call(gateway.origin, admin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 100_000_000 })).status).toBe(201);
    upstream.script(Array.from({ length: IN_FLIGHT }, () => ({ kind: 'slow-stream' as const, chunkDelayMs: 150, chunks: 12 })));
    const inFlight = Array.from({ length: IN_FLIGHT }, (_, i) => stream(admin, `in flight ${i}`));
    // Every client is reading its answer: the web relays each to its end, and the worker charges it.
    await Promise.all(inFlight.map((s) => s.started));
    await proxy.cut();
    await loseRedis();
    const ended = await Promise.all(inFlight.map((s) => s.ended));
    expect(ended.map((e) => e.status)).toEqual(Array(IN_FLIGHT).fill(200));
    // The worker ends each stream and settles it on the new Redis, its record queued in the outbox.
    const shard = gateway.keys.shardOf('acme');
    await eventually(async () => (await outboxLength(shard)) >= IN_FLIGHT, 20_000, 'every record in the outbox');
    // Reading the budgets rebuilds the lost counter from the store, which has none of those records yet.
    expect((await call(gateway.origin, admin, 'GET', '/v1/budgets')).status).toBe(200);
    await proxy.restore();
    await eventually(async () => (await outboxLength(shard)) === 0, 20_000, 'the outbox drained');
    const recorded = await dayOf('acme');
    const budget = (await call(gateway.origin, admin, 'GET', '/v1/budgets')).body.data[0];
    expect(recorded.micros).toBeGreaterThan(0);
    expect(budget).toMatchObject({ spent_micros: recorded.micros, reserved_micros: 0 });
  });

  it('does not run again a request whose Idempotency-Key was answered before Redis forgot the key', async () => {
    const { secret } = await gateway.issueKey('keyed', 'app');
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': 'order-4711' };
    const body = JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: 'once' }] });
    const send = () => fetch(`${gateway.baseURL}/chat/completions`, { method: 'POST', headers, body });
    const first = await send();
    expect(first.status).toBe(200);
    const firstId = first.headers.get('x-request-id');
    await eventually(async () => (await recordsOf('keyed')).length === 1, 20_000, 'its record in the store');
    const calls = upstream.requests.length;
    await loseRedis();
    let again = await send();
    // The web's commands connection may take a moment to find the new server.
    for (let tries = 0; again.status === 503 && tries < 40; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      again = await send();
    }
    const envelope = (await again.json()) as { error: Record<string, unknown> };
    expect(again.status, JSON.stringify(envelope)).toBe(409);
    expect(envelope.error).toMatchObject({ code: 'idempotency_key_answered', param: 'Idempotency-Key' });
    expect(envelope.error.message).toContain(firstId);
    expect(upstream.requests.length).toBe(calls);
    // Nothing was charged for it, and the key is left free of a claim, so every retry is answered the same.
    expect((await send()).status).toBe(409);
    expect(await recordsOf('keyed')).toHaveLength(1);
  });

  it('charges nothing for a request its client was told was lost, though a worker ran it to the end', async () => {
    const { secret: admin } = await gateway.issueKey('lost', 'admin');
    expect((await call(gateway.origin, admin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 100_000_000 })).status).toBe(201);
    // The upstream takes a while to its first token: the web has heard nothing of these requests when Redis goes.
    upstream.script(Array.from({ length: IN_FLIGHT }, () => ({ kind: 'slow-stream' as const, chunkDelayMs: 1_000, chunks: 2 })));
    const seen = upstream.requests.length;
    const inFlight = Array.from({ length: IN_FLIGHT }, (_, i) => stream(admin, `lost ${i}`));
    await eventually(async () => upstream.requests.length >= seen + IN_FLIGHT, 10_000, 'every request at the upstream');
    await loseRedis();
    const ended = await Promise.all(inFlight.map((s) => s.ended));
    for (const { status, body } of ended) {
      expect(status, body).toBe(503);
      expect(JSON.parse(body).error.message).toBe('The gateway lost this request when its Redis restarted; send it again.');
    }
    // The worker still ran each to its end; each is recorded as failed, at no cost, and charged nothing.
    const shard = gateway.keys.shardOf('lost');
    await eventually(async () => (await recordsOf('lost')).length === IN_FLIGHT, 20_000, 'every record');
    const records = await recordsOf('lost');
    expect(records.map((r) => [r.status, r.errorCode, r.costMicros])).toEqual(Array(IN_FLIGHT).fill(['failed', 'service_unavailable', 0]));
    await eventually(async () => (await outboxLength(shard)) === 0, 20_000, 'the outbox drained');
    expect((await dayOf('lost')).micros).toBe(0);
    expect((await call(gateway.origin, admin, 'GET', '/v1/budgets')).body.data[0]).toMatchObject({ spent_micros: 0, reserved_micros: 0 });
  });
});
