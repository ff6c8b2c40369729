/** The queue split into shards on one Redis (QUEUE_SHARDS > 1 without a cluster): tenants spread over shards, each served and recorded. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, scanKeys, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually } from '../helpers/http.ts';

const SHARDS = 3;
let upstream: FakeUpstream;
let gateway: GatewayUnderTest;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({ catalog: testCatalog(upstream.url), env: { QUEUE_SHARDS: String(SHARDS) }, workers: 2 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('queue shards', () => {
  it("tenants on every shard are served by every worker, their records drained from every shard's outbox", async () => {
    const tenants: string[] = [];
    for (let i = 0; tenants.length < SHARDS * 2; i++) {
      const tenant = `shard-tenant-${i}`;
      if (tenants.filter((t) => gateway.keys.shardOf(t) === gateway.keys.shardOf(tenant)).length < 2) tenants.push(tenant);
    }
    expect(new Set(tenants.map((t) => gateway.keys.shardOf(t))).size).toBe(SHARDS);
    const clients = await Promise.all(
      tenants.map(async (tenant) => {
        const { secret } = await gateway.issueKey(tenant, 'developer');
        return { secret, client: new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 }) };
      }),
    );
    const answers = await Promise.all(
      clients.flatMap(({ client }) =>
        [0, 1, 2].map((n) => client.chat.completions.create({ model: 'fake-gpt', stream: n === 2, messages: [{ role: 'user', content: `hi ${n}` }] })),
      ),
    );
    expect(answers).toHaveLength(tenants.length * 3);
    for (const { secret } of clients) {
      await eventually(
        async () => (await call(gateway.origin, secret, 'GET', '/v1/usage?since=2000-01-01')).body.data.length === 3,
        10_000,
        'three records per tenant',
      );
    }
    for (let shard = 0; shard < SHARDS; shard++) {
      expect(await scanKeys(gateway.redis, `${gateway.keys.queuePrefix(shard)}:completions:*`)).not.toEqual([]);
      expect(await gateway.redis.llen(gateway.keys.outboxItems(shard))).toBe(0);
    }
  });
});
