/** No usage record is lost when the store is down: the worker's store connection goes through a proxy the test cuts. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import pg from 'pg';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { eventually } from '../helpers/http.ts';
import { encodeOutboxRecord } from '../../src/infra/outbox/outbox.ts';
import type { UsageRecord } from '../../src/infra/store/repository.ts';

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let proxy: TcpProxy;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  proxy = await startTcpProxy(5432);
  const proxied = (url: string) => url.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`);
  // The web tier reads keys from the store directly; only the worker (which writes usage) goes through the proxy.
  gateway = await startGateway({ catalog: testCatalog(upstream.url) });
  const worker = gateway.workers.shift();
  worker?.child.kill('SIGTERM');
  await worker?.exited;
  await gateway.startWorker({ DATABASE_URL: proxied(gateway.databaseUrl) });
});

afterAll(async () => {
  await gateway?.close();
  await proxy?.close();
  await upstream?.close();
});

async function storedIds(): Promise<string[]> {
  const client = new pg.Client({ connectionString: gateway.databaseUrl });
  await client.connect();
  try {
    return (await client.query<{ request_id: string }>('SELECT request_id FROM usage_records')).rows.map((row) => row.request_id);
  } finally {
    await client.end();
  }
}

describe('usage outbox', () => {
  it('keeps every record through a store outage and writes each exactly once when the store is back', async () => {
    const { secret } = await gateway.issueKey('acme', 'app');
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 });
    await proxy.cut();
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) => client.chat.completions.create({ model: 'fake-gpt', messages: [{ role: 'user', content: `outage ${i}` }] })),
    );
    const ids = responses.map((r) => (r as unknown as { request_id: string }).request_id).sort();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await storedIds()).toEqual([]);
    const shard = gateway.keys.shardOf('acme');
    expect((await gateway.redis.llen(gateway.keys.outboxItems(shard))) + (await gateway.redis.zcard(gateway.keys.outboxLeases(shard)))).toBe(8);
    await proxy.restore();
    await eventually(async () => (await storedIds()).length === 8, 15_000, 'all eight records stored');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await storedIds()).sort()).toEqual(ids);
    expect(await gateway.redis.llen(gateway.keys.outboxItems(shard))).toBe(0);
    expect(await gateway.redis.zcard(gateway.keys.outboxLeases(shard))).toBe(0);
  });
});

describe('upgrading from the unsharded outbox', () => {
  it('writes the records an older gateway left in its one outbox', async () => {
    await gateway.issueKey('legacy', 'app');
    const record = {
      requestId: 'req_left_behind_by_4512ad3',
      tenantId: 'legacy',
      keyId: 'key_old',
      feature: null,
      requestedModel: 'fake-gpt',
      model: 'fake-gpt',
      provider: 'openai-compatible',
      upstreamModel: 'gpt-4o-mini',
      promptName: null,
      promptVersion: null,
      promptTokens: 3,
      completionTokens: 5,
      totalTokens: 8,
      usageSource: 'provider' as const,
      costMicros: 13,
      status: 'succeeded' as const,
      errorCode: null,
      queueWaitMs: 1,
      ttftMs: null,
      latencyMs: 30,
      stream: false,
      piiFlags: [],
      createdAt: new Date(),
    };
    // An older gateway's record has no cached, cache-write or reasoning token counts.
    await gateway.redis.lpush(gateway.keys.legacyOutbox.items, encodeOutboxRecord({ kind: 'usage', record: record as unknown as UsageRecord }));
    // Drainers look at the old outbox every 10 s.
    await eventually(async () => (await storedIds()).includes(record.requestId), 20_000, 'the left-behind record stored');
    expect(await gateway.redis.llen(gateway.keys.legacyOutbox.items)).toBe(0);
  });
});
