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

/** Streams a completion to its end, whatever it ends with; the status the client got. */
async function stream(secret: string, content: string): Promise<number> {
  const response = await fetch(`${gateway.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fake-gpt', stream: true, max_tokens: 50, messages: [{ role: 'user', content }] }),
  });
  await response.text().catch(() => '');
  return response.status;
}

describe('Redis lost under requests in flight', () => {
  it("keeps the budget's spent equal to its usage records once the outbox has drained", async () => {
    const { secret: admin } = await gateway.issueKey('acme', 'admin');
    expect((await call(gateway.origin, admin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 100_000_000 })).status).toBe(201);
    upstream.script(Array.from({ length: IN_FLIGHT }, () => ({ kind: 'slow-stream' as const, chunkDelayMs: 150, chunks: 12 })));
    const inFlight = Array.from({ length: IN_FLIGHT }, (_, i) => stream(admin, `in flight ${i}`));
    await eventually(async () => upstream.requests.length >= IN_FLIGHT, 10_000, 'every stream at the upstream');
    await proxy.cut();
    redisServer.kill('SIGKILL');
    await once(redisServer, 'exit');
    redisServer = await startRedisServer(port);
    await Promise.all(inFlight);
    // The worker ends each stream it was calling and settles it on the new Redis, its record queued in the outbox.
    const shard = gateway.keys.shardOf('acme');
    await eventually(
      async () => (await redis.llen(gateway.keys.outboxItems(shard))) + (await redis.zcard(gateway.keys.outboxLeases(shard))) >= IN_FLIGHT,
      20_000,
      'every record in the outbox',
    );
    // Reading the budgets rebuilds the lost counter from the store, which has none of those records yet.
    expect((await call(gateway.origin, admin, 'GET', '/v1/budgets')).status).toBe(200);
    await proxy.restore();
    await eventually(
      async () => (await redis.llen(gateway.keys.outboxItems(shard))) + (await redis.zcard(gateway.keys.outboxLeases(shard))) === 0,
      20_000,
      'the outbox drained',
    );
    const dayStart = new Date(new Date().toISOString().slice(0, 10));
    const recorded = await gateway.repository.usage.spentMicros('acme', null, dayStart, new Date(dayStart.getTime() + 86_400_000), []);
    const budget = (await call(gateway.origin, admin, 'GET', '/v1/budgets')).body.data[0];
    expect(recorded.micros).toBeGreaterThan(0);
    expect(budget).toMatchObject({ spent_micros: recorded.micros, reserved_micros: 0 });
  });
});
