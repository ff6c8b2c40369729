import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** The Lua scripts of src/redis/scripts/, as `<name>-<numberOfKeys>.lua` (`-n`: the caller passes the count first). */
const SCRIPTS = {
  publishEvents: 'publish-events-1.lua',
  outboxTake: 'outbox-take-2.lua',
  outboxRelease: 'outbox-release-2.lua',
  budgetReserve: 'budget-reserve-n.lua',
  budgetSettle: 'budget-settle-n.lua',
  budgetPeek: 'budget-peek-n.lua',
  budgetSeed: 'budget-seed-1.lua',
  creditTopUp: 'credit-top-up-1.lua',
  rateLimit: 'rate-limit-4.lua',
  idempotencyClaim: 'idempotency-claim-1.lua',
  idempotencyComplete: 'idempotency-complete-1.lua',
  idempotencyRelease: 'idempotency-release-1.lua',
} as const;

type ScriptName = keyof typeof SCRIPTS;

/** An ioredis client with the gateway's scripts defined on it. */
export type ScriptedRedis = Redis & Record<ScriptName, (...args: Array<string | number>) => Promise<unknown>>;

/** Defines every script on the client (EVALSHA with EVAL fallback, done by ioredis). */
export function defineScripts(redis: Redis): ScriptedRedis {
  for (const [name, file] of Object.entries(SCRIPTS)) {
    if (name in redis) continue;
    const count = /-(\d+|n)\.lua$/.exec(file)?.[1];
    const lua = readFileSync(new URL(`./scripts/${file}`, import.meta.url), 'utf8');
    redis.defineCommand(name, count === 'n' ? { lua } : { numberOfKeys: Number(count), lua });
  }
  return redis as ScriptedRedis;
}

/** One event to append and publish: its sequence number and its line (`<type> <payload>`). */
export interface EventLine {
  seq: number;
  line: string;
}

/** Appends events to the request's stream and publishes them to the reply channel, atomically. */
export async function publishEvents(
  redis: ScriptedRedis,
  streamKey: string,
  channel: string,
  ttlMs: number,
  requestId: string,
  events: readonly EventLine[],
): Promise<void> {
  const args: Array<string | number> = [streamKey, channel, ttlMs, requestId];
  for (const event of events) args.push(event.seq, event.line);
  await redis.publishEvents(...args);
}

/** Leases up to `max` outbox records (expired leases first); oldest first. */
export async function outboxTake(redis: ScriptedRedis, itemsKey: string, leasesKey: string, max: number, now: number, leaseMs: number): Promise<string[]> {
  return (await redis.outboxTake(itemsKey, leasesKey, max, now, leaseMs)) as string[];
}

/** Returns leased records to the outbox after a failed write. */
export async function outboxRelease(redis: ScriptedRedis, itemsKey: string, leasesKey: string, records: readonly string[]): Promise<void> {
  if (records.length > 0) await redis.outboxRelease(itemsKey, leasesKey, ...records);
}

/** Keys of one budget counter (a policy window or the credit account): its hash and its reservations' expiry set. */
export interface BudgetCounterKeys {
  hash: string;
  expiries: string;
}

/** Reply of budget-reserve-n.lua: ok|queue_full + outstanding, budget + window index, credit + available, missing + counter indexes (1-based). */
export type BudgetReserveReply = ['ok' | 'queue_full' | 'budget' | 'credit' | 'missing', ...number[]];

/** Input of budgetReserve; the credit counter, when given, comes after the windows. */
export interface BudgetReserveInput {
  outstanding: string;
  windows: ReadonlyArray<BudgetCounterKeys & { limitMicros: number; keepMs: number }>;
  credit: BudgetCounterKeys | null;
  requestId: string;
  estimateMicros: number;
  nowMs: number;
  expiresAtMs: number;
  /** -1: no cap. */
  maxQueued: number;
}

/** Reaps expired reservations, then reserves in every counter and the queue, or in none. */
export async function budgetReserve(redis: ScriptedRedis, input: BudgetReserveInput): Promise<BudgetReserveReply> {
  const counters = input.credit ? [...input.windows, input.credit] : input.windows;
  const keys = [input.outstanding, ...counters.flatMap((c) => [c.hash, c.expiries])];
  const args = [input.nowMs, input.requestId, input.estimateMicros, input.expiresAtMs, input.maxQueued, input.windows.length, input.credit ? 1 : 0];
  for (const window of input.windows) args.push(window.limitMicros, window.keepMs);
  return (await redis.budgetReserve(keys.length, ...keys, ...args)) as BudgetReserveReply;
}

/** Frees a request's reservations and charges its cost once; false when it had been settled before. */
export async function budgetSettle(
  redis: ScriptedRedis,
  marker: string,
  keys: readonly string[],
  input: { requestId: string; actualMicros: number; markerTtlMs: number; lastIsCredit: boolean },
): Promise<boolean> {
  const args = [input.requestId, input.actualMicros, input.markerTtlMs, input.lastIsCredit ? 1 : 0];
  return (await redis.budgetSettle(keys.length + 1, marker, ...keys, ...args)) === 1;
}

/** One counter as budgetPeek reads it (fields are null when unset). */
export interface BudgetCounterValues {
  exists: boolean;
  spent: number | null;
  balance: number | null;
  reserved: number | null;
}

/** Reaps expired reservations and reads the counters. */
export async function budgetPeek(redis: ScriptedRedis, counters: readonly BudgetCounterKeys[], nowMs: number): Promise<BudgetCounterValues[]> {
  const keys = counters.flatMap((c) => [c.hash, c.expiries]);
  const rows = (await redis.budgetPeek(keys.length, ...keys, nowMs)) as Array<[number, string | null, string | null, string | null]>;
  const toNumber = (value: string | null) => (value === null ? null : Number(value));
  return rows.map(([exists, spent, balance, reserved]) => ({ exists: exists === 1, spent: toNumber(spent), balance: toNumber(balance), reserved: toNumber(reserved) }));
}

/** Creates a lost counter from the store's figure unless it exists (keepMs 0: forever); true when this call created it. */
export async function budgetSeed(redis: ScriptedRedis, hash: string, field: 'spent' | 'balance', valueMicros: number, keepMs: number): Promise<boolean> {
  return (await redis.budgetSeed(hash, field, valueMicros, keepMs)) === 1;
}

/** Raises the credit balance if its counter exists; true when it did. */
export async function creditTopUp(redis: ScriptedRedis, hash: string, amountMicros: number): Promise<boolean> {
  return (await redis.creditTopUp(hash, amountMicros)) === 1;
}
