/**
 * What the campaign reads to judge the gateway, outside the gateway: its Redis (the outbox, the queue,
 * budget counters) through a client of its own, and its PostgreSQL through a direct connection (the
 * gateway's own go through the proxy the campaign cuts).
 */
import { Client } from 'pg';
import type { Cluster, Redis } from 'ioredis';
import { REQUEST_QUEUE, type RedisKeys } from '../../src/infra/redis/keys.ts';

/** A usage record as stored (the columns the invariants read). */
export interface StoredRecord {
  requestId: string;
  tenantId: string;
  feature: string | null;
  operation: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  costMicros: number;
  status: 'succeeded' | 'failed' | 'cancelled';
  errorCode: string | null;
  stream: boolean;
  responseId: string | null;
  cacheHit: boolean;
  /** ms since the epoch. */
  createdAt: number;
  latencyMs: number;
}

/** What the store holds that the invariants need. */
export interface StoreState {
  records: StoredRecord[];
  topUps: Array<{ id: string; tenantId: string; amountMicros: number }>;
  responses: Array<{ id: string; tenantId: string; status: string | null; background: boolean }>;
}

/** Reads the store through `databaseUrl` (a direct connection). */
export async function readStore(databaseUrl: string): Promise<StoreState> {
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const records = await client.query(
      `SELECT request_id, tenant_id, feature, operation, model, prompt_tokens, completion_tokens, cost_micros::text AS cost, status, error_code,
              stream, response_id, cache_hit, created_at, latency_ms FROM usage_records`,
    );
    const topUps = await client.query(`SELECT id, tenant_id, amount_micros::text AS amount FROM credit_top_ups`);
    const responses = await client.query(`SELECT id, tenant_id, status, background FROM responses`);
    return {
      records: records.rows.map((row) => ({
        requestId: row.request_id,
        tenantId: row.tenant_id,
        feature: row.feature,
        operation: row.operation,
        model: row.model,
        promptTokens: row.prompt_tokens,
        completionTokens: row.completion_tokens,
        costMicros: Number(row.cost),
        status: row.status,
        errorCode: row.error_code,
        stream: row.stream,
        responseId: row.response_id,
        cacheHit: row.cache_hit,
        createdAt: (row.created_at as Date).getTime(),
        latencyMs: row.latency_ms,
      })),
      topUps: topUps.rows.map((row) => ({ id: row.id, tenantId: row.tenant_id, amountMicros: Number(row.amount) })),
      responses: responses.rows.map((row) => ({ id: row.id, tenantId: row.tenant_id, status: row.status, background: row.background })),
    };
  } finally {
    await client.end();
  }
}

/** Work still in Redis: the outbox (records and leases) and the request queue, summed over shards. */
export interface Backlog {
  outboxItems: number;
  outboxLeases: number;
  queued: number;
  active: number;
}

/** Reads the backlog (BullMQ's own key layout: `<prefix>:<queue>:wait|active|prioritized|delayed`). */
export async function readBacklog(redis: Redis | Cluster, keys: RedisKeys): Promise<Backlog> {
  const backlog: Backlog = { outboxItems: 0, outboxLeases: 0, queued: 0, active: 0 };
  const outboxes = [
    ...Array.from({ length: keys.queueShards }, (_, shard) => ({ items: keys.outboxItems(shard), leases: keys.outboxLeases(shard) })),
    keys.legacyOutbox,
  ];
  for (const outbox of outboxes) {
    backlog.outboxItems += await redis.llen(outbox.items);
    backlog.outboxLeases += await redis.zcard(outbox.leases);
  }
  for (let shard = 0; shard < keys.queueShards; shard++) {
    const base = `${keys.queuePrefix(shard)}:${REQUEST_QUEUE}`;
    backlog.queued += (await redis.llen(`${base}:wait`)) + (await redis.zcard(`${base}:prioritized`)) + (await redis.zcard(`${base}:delayed`));
    backlog.active += await redis.llen(`${base}:active`);
  }
  return backlog;
}

/** A reservation still held in a budget or credit counter: its request and expiry (ms). */
export interface HeldReservation {
  counter: string;
  requestId: string;
  micros: number;
  expiresAt: number | null;
}

/** The reservations (`r:<request id>` fields) of a counter hash, with their expiries. */
export async function heldReservations(redis: Redis | Cluster, hash: string, expiries: string): Promise<HeldReservation[]> {
  const fields = await redis.hgetall(hash);
  const held: HeldReservation[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (!name.startsWith('r:')) continue;
    const requestId = name.slice(2);
    const score = await redis.zscore(expiries, requestId);
    held.push({ counter: hash, requestId, micros: Number(value), expiresAt: score === null ? null : Number(score) });
  }
  return held;
}
