/**
 * One Redis Cluster master restarted while clients keep sending completions: every request
 * is answered, 200 in full or a 503 that says to retry, and nothing a 200 promised is lost
 * (its usage record, its settlement). The cluster is this suite's own, with persistence, as
 * a production master has: a restart then keeps the queue, the counters and the streams.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Cluster } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { eventually } from '../helpers/http.ts';

const CLIENTS = 16;
/** Load before the restart, and after the cluster is ok again. */
const STEADY_MS = 1_500;
// Short deadlines, so that a request the gateway lost shows as a 503 or a 504 within the test, never as a
// hang; a short lock, so that a job whose worker lost it runs again within the test; no rate limits.
const GATEWAY_ENV = {
  QUEUE_DEADLINE_MS: '3000',
  REQUEST_TIMEOUT_MS: '10000',
  WORKER_LOCK_MS: '2000',
  TENANT_RPM: '0',
  TENANT_TPM: '0',
  KEY_RPM: '0',
  KEY_TPM: '0',
};
/** Longer than REQUEST_TIMEOUT_MS: a client that waits this long met a hang. */
const CLIENT_TIMEOUT_MS = 15_000;
const RETRYABLE_CODES = ['service_unavailable', 'queue_timeout'];

let cluster: RedisCluster;
let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let tenant: string;
let secret: string;

/** How one request ended: `answered` (200, complete), `refused` (a documented 503), or `wrong` (anything else). */
interface Outcome {
  verdict: 'answered' | 'refused' | 'wrong';
  requestId: string | null;
  detail: string;
}

/** Index in `cluster.ports` of the master that serves `key`'s slot. */
async function masterOf(key: string): Promise<number> {
  const redis = gateway.redis as Cluster;
  const slot = await redis.cluster('KEYSLOT', key);
  for (const [start, end, master] of await redis.cluster('SLOTS')) {
    if (slot >= start && slot <= end && master) return cluster.ports.indexOf(master[1]);
  }
  throw new Error(`no master serves slot ${slot}`);
}

/** The tenant's own keys (admission, settlement, events) and its queue shard (jobs, outbox) are on these masters. */
async function mastersOf(tenantId: string): Promise<{ tenantSlot: number; queueShard: number }> {
  return { tenantSlot: await masterOf(gateway.keys.rate(tenantId)), queueShard: await masterOf(gateway.keys.outboxItems(gateway.keys.shardOf(tenantId))) };
}

function judge(response: Response, text: string, stream: boolean): Outcome {
  const requestId = response.headers.get('x-request-id');
  const detail = `${stream ? 'stream' : 'json'} ${response.status} ${text.slice(0, 300)}`;
  if (response.status === 200) {
    const complete = stream ? text.endsWith('data: [DONE]\n\n') && !text.includes('"error"') : JSON.parse(text).choices?.[0]?.message?.content?.length > 0;
    return { verdict: complete ? 'answered' : 'wrong', requestId, detail };
  }
  const code = response.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text).error?.code : null;
  const refused = response.status === 503 && RETRYABLE_CODES.includes(code) && Number(response.headers.get('retry-after')) >= 1;
  return { verdict: refused ? 'refused' : 'wrong', requestId, detail };
}

async function complete(n: number): Promise<Outcome> {
  const stream = n % 3 === 0;
  try {
    const response = await fetch(`${gateway.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: `request ${n}` }], stream }),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    return judge(response, await response.text(), stream);
  } catch (error) {
    // A reset connection, or no answer within CLIENT_TIMEOUT_MS.
    return { verdict: 'wrong', requestId: null, detail: `${stream ? 'stream' : 'json'}: ${String(error)}` };
  }
}

/** CLIENTS clients send requests one after another until `during` has settled and STEADY_MS more have passed. */
async function underLoad(during: () => Promise<void>): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let running = true;
  let n = 0;
  const clients = Array.from({ length: CLIENTS }, async () => {
    while (running) outcomes.push(await complete(n++));
  });
  await sleep(STEADY_MS);
  await during();
  await sleep(STEADY_MS);
  running = false;
  await Promise.all(clients);
  return outcomes;
}

async function usageCounts(): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: gateway.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ request_id: string; n: number }>('SELECT request_id, count(*)::int AS n FROM usage_records GROUP BY request_id');
    return new Map(rows.map((row) => [row.request_id, row.n]));
  } finally {
    await client.end();
  }
}

/** Restarts master `index` under load and checks every answer and what the answered requests left behind. */
async function restartUnderLoad(index: number, what: string): Promise<void> {
  const started = Date.now();
  const outcomes = await underLoad(() => cluster.restart(index));
  const answered = outcomes.filter((o) => o.verdict === 'answered');
  const refused = outcomes.filter((o) => o.verdict === 'refused');
  console.log(
    `master restart (${what}, port ${cluster.ports[index]}): ${outcomes.length} requests, ${answered.length} × 200, ${refused.length} × 503 in ${Date.now() - started} ms`,
  );
  const wrong = outcomes.filter((o) => o.verdict === 'wrong').map((o) => o.detail);
  expect(wrong, wrong.join('\n')).toEqual([]);
  expect(answered.length).toBeGreaterThan(100);

  const ids = answered.map((o) => o.requestId as string);
  // Records a drainer had leased when the outbox's master went away (a lost reply, say) come back
  // once their lease (30 s) runs out: late, not lost.
  await eventually(
    async () => {
      const counts = await usageCounts();
      return ids.every((id) => counts.has(id));
    },
    45_000,
    'a usage record for every answered request',
  );
  const counts = await usageCounts();
  expect(ids.filter((id) => counts.get(id) !== 1)).toEqual([]);
  expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
  const settled = await Promise.all(ids.map((id) => gateway.redis.exists(gateway.keys.settled(tenant, id))));
  expect(ids.filter((_, i) => settled[i] !== 1)).toEqual([]);
  // Every request settles or gives back its reservation when it ends, answered or refused.
  const outstanding = gateway.keys.outstanding(tenant);
  await eventually(async () => (await gateway.redis.zcard(outstanding)) === 0, 10_000, 'no reservation outstanding').catch(async (error: Error) => {
    const left = await gateway.redis.zrange(outstanding, '0', '-1');
    const answers = left.map((id) => `${id}: ${outcomes.find((o) => o.requestId === id)?.detail ?? 'no answer seen'}`);
    throw new Error(`${error.message}:\n${answers.join('\n')}`);
  });
}

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3, persistence: true });
  upstream = await startFakeUpstream();
  // About 20 ms an answer, in four chunks when streamed.
  upstream.answerByDefault({ kind: 'slow-stream', chunkDelayMs: 5, chunks: 4 });
  gateway = await startGateway({ catalog: testCatalog(upstream.url), clusterNodes: cluster.nodes, env: GATEWAY_ENV });
  // A tenant whose own slot and queue shard are on different masters, so that each restart hits one of them alone.
  for (let i = 0; !tenant; i++) {
    const masters = await mastersOf(`acme-${i}`);
    if (masters.tenantSlot !== masters.queueShard) tenant = `acme-${i}`;
  }
  secret = (await gateway.issueKey(tenant, 'app')).secret;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await cluster?.stop();
});

describe('one Redis Cluster master restarted under load', () => {
  it("answers 200 or 503 and loses nothing when the master of the tenant's slot restarts", async () => {
    await restartUnderLoad((await mastersOf(tenant)).tenantSlot, "tenant's slot");
  }, 90_000);

  it("answers 200 or 503 and loses nothing when the master of the tenant's queue shard restarts", async () => {
    await restartUnderLoad((await mastersOf(tenant)).queueShard, "tenant's queue shard");
  }, 90_000);
});
