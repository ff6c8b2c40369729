/**
 * Series read at scrape time, the same from any process: the jobs in each queue shard by state,
 * the records waiting in each outbox shard, and the round trip to Redis and to the store. They
 * cost a few Redis commands per scrape, nothing per request. Every process that serves them
 * reports the same queue and outbox figures: aggregate them with max(), not sum(). A figure that
 * cannot be read (Redis away) is left out of that scrape rather than failing the whole scrape.
 */
import type { Queue } from 'bullmq';
import { Gauge, type Registry } from 'prom-client';
import type { RedisClient } from '../redis/connections.ts';
import type { RedisKeys } from '../redis/keys.ts';
import { withTimeout } from '../health/readiness.ts';

const JOB_STATES = ['waiting', 'prioritized', 'delayed', 'active'] as const;

export interface BacklogSources {
  queues: readonly Queue[];
  redis: RedisClient;
  keys: RedisKeys;
  store: { ping(): Promise<void> };
}

/** Runs a gauge's reading; on failure the gauge has no series in this scrape. */
async function readOrClear(gauge: Gauge, read: () => Promise<void>): Promise<void> {
  try {
    await read();
  } catch {
    gauge.reset();
  }
}

// A store or Redis that hangs must not hold the scrape past a Prometheus's timeout.
const ROUND_TRIP_TIMEOUT_MS = 2_000;

async function roundTrip(ping: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await withTimeout(ping(), ROUND_TRIP_TIMEOUT_MS);
  return (performance.now() - started) / 1000;
}

export function registerBacklogGauges(registry: Registry, sources: BacklogSources): void {
  const { queues, redis, keys, store } = sources;
  new Gauge({
    name: 'gateway_queue_jobs',
    help: 'Jobs in the completion queue by shard and state (waiting, prioritized, delayed, active); a job carries one request or a batch.',
    labelNames: ['shard', 'state'],
    registers: [registry],
    async collect() {
      await readOrClear(this, async () => {
        const counts = await Promise.all(queues.map((queue) => queue.getJobCounts(...JOB_STATES)));
        counts.forEach((count, shard) => {
          for (const state of JOB_STATES) this.set({ shard: String(shard), state }, count[state] ?? 0);
        });
      });
    },
  });
  new Gauge({
    name: 'gateway_outbox_backlog',
    help: 'Usage records and audit events waiting in the outbox for the store, by shard.',
    labelNames: ['shard'],
    registers: [registry],
    async collect() {
      await readOrClear(this, async () => {
        const lengths = await Promise.all(Array.from({ length: keys.queueShards }, (_, shard) => redis.llen(keys.outboxItems(shard))));
        lengths.forEach((length, shard) => this.set({ shard: String(shard) }, length));
      });
    },
  });
  new Gauge({
    name: 'gateway_dependency_round_trip_seconds',
    help: "One round trip to a dependency (redis: PING, store: the adapter's ping), measured at scrape time.",
    labelNames: ['dependency'],
    registers: [registry],
    async collect() {
      this.reset();
      const [redisSeconds, storeSeconds] = await Promise.allSettled([roundTrip(() => redis.ping()), roundTrip(() => store.ping())]);
      if (redisSeconds.status === 'fulfilled') this.set({ dependency: 'redis' }, redisSeconds.value);
      if (storeSeconds.status === 'fulfilled') this.set({ dependency: 'store' }, storeSeconds.value);
    },
  });
}
