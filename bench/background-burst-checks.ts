/**
 * What bench/background-burst.ts reads besides the answers to its requests: the counters at a
 * phase's edges (Redis INFO, web and worker CPU), and where each accepted response ended up (the
 * `responses` and `usage_records` tables for every id, GET /v1/responses/{id} for a sample, the
 * outbox and the tenant's queue-cap reservations in Redis).
 */
import { readFile } from 'node:fs/promises';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { Pool } from 'undici';
import type { RedisKeys } from '../src/infra/redis/keys.ts';
import type { BenchStack } from './stack.ts';
import { sampleRedis } from './redis-stats.ts';
import { readCpuSeconds, readMachineBusySeconds } from './proc-stats.ts';
import type { Drain, Probe } from './background-burst-report.ts';

/** What the run reads besides HTTP: the private Redis, the database, the processes' CPU. */
export interface Instruments {
  stack: BenchStack;
  redis: Redis;
  db: pg.Pool;
  keys: RedisKeys;
}

/** The counters at one instant: Redis INFO in one call, the CPU seconds of web, the worker, this process and the machine. */
export async function probe(into: Instruments): Promise<Probe> {
  const { web, workers } = into.stack.processes;
  const [redis, webS, workerS, clientS, machineS] = await Promise.all([
    sampleRedis(into.redis),
    readCpuSeconds(web.child.pid ?? 0),
    readCpuSeconds(workers[0]?.child.pid ?? 0),
    readCpuSeconds(process.pid),
    readMachineBusySeconds(),
  ]);
  return { atMs: performance.now(), redis, webS, workerS, clientS, machineS };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The ids' rows in `responses` by status, and how many of their requests have a usage record. */
async function storedStates(db: pg.Pool, tenantId: string, ids: readonly string[]): Promise<Pick<Drain, 'byStatus' | 'usage'>> {
  const statuses = await db.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM responses WHERE tenant_id = $1 AND id = ANY($2::text[]) GROUP BY status',
    [tenantId, ids],
  );
  const usage = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_records WHERE request_id = ANY($1::text[])', [
    ids.map((id) => id.slice('resp_'.length)),
  ]);
  return { byStatus: Object.fromEntries(statuses.rows.map((row) => [row.status, row.n])), usage: usage.rows[0]?.n ?? 0 };
}

/** How many of the ids are `completed` in the store now. */
export async function completedNow(db: pg.Pool, tenantId: string, ids: readonly string[]): Promise<number> {
  return (await storedStates(db, tenantId, ids)).byStatus.completed ?? 0;
}

/** Records the outbox still holds (waiting and leased), every shard. */
async function outboxBacklog(into: Instruments): Promise<number> {
  let left = 0;
  for (let shard = 0; shard < into.keys.queueShards; shard++) {
    left += (await into.redis.llen(into.keys.outboxItems(shard))) + (await into.redis.zcard(into.keys.outboxLeases(shard)));
  }
  return left;
}

/**
 * Waits until every id is `completed` in the store with its usage record, and the outbox is empty
 * (polling the database every 500 ms, Redis only then), or `timeoutS` passed; logs progress every 10 s.
 */
export async function waitCompleted(into: Instruments, tenantId: string, ids: readonly string[], timeoutS: number, what: string): Promise<Drain> {
  const startedAt = performance.now();
  let lastLog = startedAt;
  for (;;) {
    const state = await storedStates(into.db, tenantId, ids);
    const completed = state.byStatus.completed ?? 0;
    const seconds = (performance.now() - startedAt) / 1000;
    if (completed === ids.length && state.usage === ids.length && (await outboxBacklog(into)) === 0) return { drained: true, seconds, ...state };
    if (seconds > timeoutS) return { drained: false, seconds, ...state };
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      process.stderr.write(`    ${what}: ${completed} of ${ids.length} completed after ${seconds.toFixed(0)} s\n`);
    }
    await sleep(500);
  }
}

/** The ids that did not end `completed` in the store, with their status (`missing`: no row). */
export async function notCompleted(db: pg.Pool, tenantId: string, ids: readonly string[]): Promise<Array<{ id: string; status: string }>> {
  const rows = await db.query<{ id: string; status: string }>('SELECT id, status FROM responses WHERE tenant_id = $1 AND id = ANY($2::text[])', [
    tenantId,
    ids,
  ]);
  const found = new Map(rows.rows.map((row) => [row.id, row.status]));
  return ids.flatMap((id) => (found.get(id) === 'completed' ? [] : [{ id, status: found.get(id) ?? 'missing' }]));
}

/** `n` of the items, drawn at random. */
export function sampleOf<T>(items: readonly T[], n: number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy.slice(0, n);
}

/** What a sample of GETs found. */
export interface GetCheck {
  checked: number;
  good: number;
  firstBad: string | null;
}

/** A JSON object, or null when the text is none. */
export function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** GET /v1/responses/{id} of each id with the tenant's key: how many answered as `expect` says, and the first that did not. */
async function checkByGet(
  stack: BenchStack,
  apiKey: string,
  ids: readonly string[],
  expect: (status: number, body: Record<string, unknown> | null) => boolean,
): Promise<GetCheck> {
  const pool = new Pool(new URL(stack.gatewayUrl).origin, { connections: 1 });
  let good = 0;
  let firstBad: string | null = null;
  try {
    for (const id of ids) {
      const response = await pool.request({ path: `/v1/responses/${id}`, method: 'GET', headers: { authorization: `Bearer ${apiKey}` } });
      const text = await response.body.text();
      if (expect(response.statusCode, parseObject(text))) good++;
      else firstBad ??= `${id}: status ${response.statusCode}: ${text.slice(0, 200)}`;
    }
  } finally {
    await pool.close();
  }
  return { checked: ids.length, good, firstBad };
}

/** GETs of ids that must be `completed` with `tokens` output tokens. */
export function getCompleted(stack: BenchStack, apiKey: string, ids: readonly string[], tokens: number): Promise<GetCheck> {
  return checkByGet(
    stack,
    apiKey,
    ids,
    (status, body) => status === 200 && body?.status === 'completed' && (body.usage as { output_tokens?: unknown } | undefined)?.output_tokens === tokens,
  );
}

/** GETs of ids that must be unknown: 404 `not_found`. */
export function getUnknown(stack: BenchStack, apiKey: string, ids: readonly string[]): Promise<GetCheck> {
  return checkByGet(stack, apiKey, ids, (status, body) => status === 404 && (body?.error as { code?: unknown } | undefined)?.code === 'not_found');
}

/** What the store and Redis hold of refused requests' would-be response ids: both must be 0. */
export async function storedOfRefused(into: Instruments, tenantId: string, ids: readonly string[]): Promise<{ rows: number; redisKeys: number }> {
  const rows = await into.db.query<{ n: number }>('SELECT count(*)::int AS n FROM responses WHERE id = ANY($1::text[])', [ids]);
  const redisKeys = ids.length === 0 ? 0 : await into.redis.exists(...ids.map((id) => into.keys.response(tenantId, id)));
  return { rows: rows.rows[0]?.n ?? 0, redisKeys };
}

/** The tenant's queue-cap reservations Redis still holds: 0 once every response ended. */
export function outstanding(into: Instruments, tenantId: string): Promise<number> {
  return into.redis.zcard(into.keys.outstanding(tenantId));
}

/** /proc/loadavg's first three figures. */
export async function loadAverage(): Promise<string> {
  return (await readFile('/proc/loadavg', 'utf8').catch(() => '')).split(' ').slice(0, 3).join(' ');
}
