import type { RedisClient } from './connections.ts';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * The Lua scripts of src/infra/redis/scripts/ by name, as `<name>-<numberOfKeys>.lua` (`-n`: the caller
 * passes the count first).
 */
export const SCRIPT_FILES = {
  admit: 'admit-n.lua',
  finishRequest: 'finish-request-n.lua',
  outboxTake: 'outbox-take-2.lua',
  outboxRelease: 'outbox-release-2.lua',
  budgetSettle: 'budget-settle-n.lua',
  budgetPeek: 'budget-peek-n.lua',
  budgetSeed: 'budget-seed-1.lua',
  creditTopUp: 'credit-top-up-1.lua',
  idempotencyComplete: 'idempotency-complete-1.lua',
  idempotencyRelease: 'idempotency-release-1.lua',
  responseStart: 'response-start-1.lua',
  responseCancel: 'response-cancel-1.lua',
  responseKeep: 'response-keep-1.lua',
  circuitBreaker: 'circuit-breaker-1.lua',
  deploymentQuota: 'deployment-quota-1.lua',
  routingShare: 'routing-share-1.lua',
  cacheStore: 'cache-store-4.lua',
} as const;

/** The name a script is defined under on a client (`redis.admit(…)`). */
export type ScriptName = keyof typeof SCRIPT_FILES;

/** An ioredis client (one Redis or a cluster) with the gateway's scripts defined on it. */
export type ScriptedRedis<Client extends RedisClient = RedisClient> = Client & Record<ScriptName, (...args: Array<string | number>) => Promise<unknown>>;

const INCLUDE = /^-- #include (\w[\w-]*)$/gm;

/**
 * A script's source with its `-- #include <name>` lines replaced by src/infra/redis/scripts/<name>.inc.lua
 * (each once, recursively): Redis has no modules, and scripts that share a step must not copy it.
 */
export function scriptSource(file: string, included = new Set<string>()): string {
  const lua = readFileSync(new URL(`./scripts/${file}`, import.meta.url), 'utf8');
  return lua.replace(INCLUDE, (_, name: string) => {
    if (included.has(name)) return '';
    included.add(name);
    return scriptSource(`${name}.inc.lua`, included).trimEnd();
  });
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * Defines every script on the client as a method that sends EVALSHA, and EVAL when the server
 * does not know the script (first use, or a Redis that restarted). Not through ioredis's
 * `defineCommand`: ioredis copies every script so defined into each auto-pipeline it makes, one
 * per event-loop turn that sends a command. Sent as EVALSHA, a script is routed on a cluster by
 * its first key, as any command is.
 */
export function defineScripts<Client extends RedisClient>(redis: Client): ScriptedRedis<Client> {
  for (const [name, file] of Object.entries(SCRIPT_FILES)) {
    if (name in redis) continue;
    const count = /-(\d+|n)\.lua$/.exec(file)?.[1];
    const lua = scriptSource(file);
    const sha = createHash('sha1').update(lua).digest('hex');
    // A script of a fixed key count is called without it; one of `-n` gets it first from its caller.
    const fixed = count === 'n' ? [] : [Number(count)];
    const run = (...args: Array<string | number>): Promise<unknown> => {
      const sent = [...fixed, ...args];
      return redis.call('evalsha', sha, ...sent).catch((error: unknown) => (isNoScript(error) ? redis.call('eval', lua, ...sent) : Promise.reject(error)));
    };
    Object.assign(redis, { [name]: run });
  }
  return redis as ScriptedRedis<Client>;
}

/** One event to append and publish: its sequence number and its line (`<type> <payload>`). */
export interface EventLine {
  seq: number;
  line: string;
}

/** A reservation to settle: what budget-settle-n.lua and finish-request-n.lua need. */
export interface Settlement {
  marker: string;
  /**
   * The tenant's outstanding set, the API key's in-flight set when it has a concurrency limit (the
   * count of keys is then even), then the counter pairs (the credit account last when `lastIsCredit`).
   */
  keys: readonly string[];
  requestId: string;
  actualMicros: number;
  markerTtlMs: number;
  lastIsCredit: boolean;
}

/** What becomes of a request's idempotency claim when it ends. */
export type ClaimEnding = { key: string; action: 'complete' | 'release' } | null;

/** The outbox push and the reply that only one Redis (no slots) lets the request's last call make itself. */
export interface InlineEnding {
  outbox: { key: string; records: readonly string[] };
  reply: { channel: string; message: string };
}

/** The state of a kept response (a stored or background one), written as the request ends unless it is final already. */
export interface StateEnding {
  key: string;
  ttlMs: number;
  /** Field/value pairs, `status` first. */
  fields: ReadonlyArray<readonly [string, string]>;
  /** A background response's state, written at its acceptance: when Redis lost it, the end writes none (the reaper fails it). */
  mustExist: boolean;
  /** Outbox records written only with the state (the response's, its webhook event), on one Redis in the same call. */
  records: readonly string[];
}

/** What the request's last call did: settled the reservation now (not before), wrote the kept response's state. */
/**
 * A request's settled marker as the web sets it (SET NX) when it answers the request as lost with Redis: its
 * settlement then charges nothing (settle.inc.lua), and its worker ends it as lost (finish-request-n.lua).
 */
export const LOST_MARKER = 'lost';
/** How long a lost marker stays: a day, as a settled marker, which any worker still running the request outlasts. */
export const LOST_MARKER_TTL_MS = 86_400_000;

export interface FinishOutcome {
  settled: boolean;
  stateWritten: boolean;
  /** Nothing was written: the web answered the request as lost with Redis (finish-request-n.lua); end it again with `asLost`. */
  lost: boolean;
}

/**
 * Appends the request's last events, sets the stream's final lifetime, settles and ends the claim,
 * writes a kept response's state, in one call (with `inline`, the outbox pushes first and the reply last).
 */
export async function finishRequest(
  redis: ScriptedRedis,
  input: {
    streamKey: string;
    ttlMs: number;
    events: readonly EventLine[];
    settlement: Settlement;
    claim: ClaimEnding;
    inline: InlineEnding | null;
    state: StateEnding | null;
    /** The end of a request the web answered as lost: written even though its marker says so. */
    asLost: boolean;
  },
): Promise<FinishOutcome> {
  const { settlement, claim, inline, state } = input;
  const records = inline?.outbox.records ?? [];
  // On a cluster the outbox is in another slot: the caller pushes the state's records once it knows the state was written.
  const keptRecords = inline ? (state?.records ?? []) : [];
  const keys = [
    input.streamKey,
    settlement.marker,
    ...settlement.keys,
    ...(claim ? [claim.key] : []),
    ...(inline && records.length + keptRecords.length > 0 ? [inline.outbox.key] : []),
    ...(state ? [state.key] : []),
  ];
  const args: Array<string | number> = [
    input.ttlMs,
    settlement.requestId,
    settlement.actualMicros,
    settlement.markerTtlMs,
    settlement.lastIsCredit ? 1 : 0,
    claim?.action ?? 'none',
    records.length,
    inline?.reply.channel ?? '',
    inline?.reply.message ?? '',
    state?.fields.length ?? 0,
    state?.ttlMs ?? 0,
    keptRecords.length,
    state?.mustExist ? 1 : 0,
    input.asLost ? 1 : 0,
    ...records,
    ...keptRecords,
  ];
  for (const [field, value] of state?.fields ?? []) args.push(field, value);
  for (const event of input.events) args.push(event.seq, event.line);
  const [settled, written, lost] = (await redis.finishRequest(keys.length, ...keys, ...args)) as [number, number, number];
  return { settled: settled === 1, stateWritten: written === 1, lost: lost === 1 };
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

/** The rate-limit part of an admission: four GCRA buckets (key requests, key tokens, tenant requests, tenant tokens). */
export interface RatePart {
  /** The tenant's rate hash. */
  hash: string;
  /** The API key's field in it. */
  keyField: string;
  windowMs: number;
  /** Units per window and this request's cost, each in bucket order. */
  limits: readonly number[];
  costs: readonly number[];
}

/** The idempotency part of an admission: claim `key` for `requestId` unless an unexpired claim holds it. */
export interface ClaimPart {
  key: string;
  /** The tenant's claims-kept-since key (on the claim's slot): since when this Redis has kept its claims. */
  since: string;
  fingerprint: string;
  requestId: string;
  ttlMs: number;
}

/** The budget part of an admission: reserve the estimate in every window, the credit account, the tenant's queue and the key's in-flight set. */
export interface ReservePart {
  outstanding: string;
  /** The API key's in-flight set and the most requests it may hold; null: the key has no concurrency limit. */
  inFlight: { key: string; max: number } | null;
  windows: ReadonlyArray<BudgetCounterKeys & { limitMicros: number; keepMs: number }>;
  credit: BudgetCounterKeys | null;
  requestId: string;
  estimateMicros: number;
  expiresAtMs: number;
  /** -1: no cap. */
  maxQueued: number;
}

/** Reply of the rate part: admitted (1|0), then per bucket in order: remaining units, ms until full, ms to wait (-1: never). */
export type RateReply = number[];

/** Reply of the claim part. */
export type ClaimReply = ['claimed', 0 | 1] | ['in_flight' | 'completed', string] | ['mismatch'];

/**
 * Reply of the budget part: ok|queue_full + outstanding, key_busy + the key's requests in flight, budget + window
 * indexes, credit + available, missing + counter indexes (1-based).
 */
export type BudgetReserveReply = ['ok' | 'queue_full' | 'key_busy' | 'budget' | 'credit' | 'missing', ...number[]];

/** The response cache's part of an admission: a fresh entry is a hit, charged to the rate limits and nothing else. */
export interface CacheReadPart {
  entry: string;
  /** The tenant's cache sizes hash, for the total it holds. */
  sizes: string;
  /** The request's settlement marker: a priced hit is charged once, however often its call is sent. */
  marker: string;
  markerTtlMs: number;
  /** The oldest stored-at (ms) a hit may have. */
  oldestMs: number;
  /** What a hit costs (micro-units), charged to the budget's windows and credit: 0, nothing. */
  priceMicros: number;
}

/** Reply of the cache part: the entry when fresh (a hit), and the bytes the tenant's cache holds. */
export type CacheReadReply = [string | null, number];

/** One admission: the parts to check, in one script call on the tenant's slot. */
export interface AdmitInput {
  nowMs: number;
  cache?: CacheReadPart | undefined;
  rate?: RatePart | undefined;
  claim?: ClaimPart | undefined;
  reserve?: ReservePart | undefined;
}

/** What each part answered; null for a part not sent or not reached (an earlier part refused). */
export interface AdmitReply {
  cache: CacheReadReply | null;
  rate: RateReply | null;
  claim: ClaimReply | null;
  reserve: BudgetReserveReply | null;
}

/** Runs admit-n.lua: the cache, rate limits, then the idempotency claim, then the reservation; see the script for what each refusal leaves written. */
export async function admit(redis: ScriptedRedis, input: AdmitInput): Promise<AdmitReply> {
  const keys: string[] = [];
  const args: Array<string | number> = [];
  let parts = '';
  const { cache, rate, claim, reserve } = input;
  if (cache) {
    parts += 'h';
    keys.push(cache.entry, cache.sizes, cache.marker);
    args.push(cache.oldestMs, cache.priceMicros, cache.markerTtlMs);
  }
  if (rate) {
    parts += 'r';
    keys.push(rate.hash);
    args.push(rate.windowMs, rate.keyField, ...rate.limits, ...rate.costs);
  }
  if (claim) {
    parts += 'c';
    keys.push(claim.key, claim.since);
    args.push(claim.fingerprint, claim.requestId, claim.ttlMs);
  }
  if (reserve) {
    parts += 'b';
    const counters = reserve.credit ? [...reserve.windows, reserve.credit] : reserve.windows;
    keys.push(reserve.outstanding, ...(reserve.inFlight ? [reserve.inFlight.key] : []), ...counters.flatMap((c) => [c.hash, c.expiries]));
    args.push(
      reserve.requestId,
      reserve.estimateMicros,
      reserve.expiresAtMs,
      reserve.maxQueued,
      reserve.inFlight?.max ?? -1,
      reserve.windows.length,
      reserve.credit ? 1 : 0,
    );
    for (const window of reserve.windows) args.push(window.limitMicros, window.keepMs);
  }
  const [rateReply, claimReply, reserveReply, cacheReply] = (await redis.admit(keys.length, ...keys, input.nowMs, parts, ...args)) as [
    RateReply | 0,
    ClaimReply | 0,
    BudgetReserveReply | 0,
    CacheReadReply | 0,
  ];
  return { cache: cacheReply || null, rate: rateReply || null, claim: claimReply || null, reserve: reserveReply || null };
}

/** Frees a request's reservations and charges its cost once; false when it had been settled before. */
export async function budgetSettle(redis: ScriptedRedis, settlement: Settlement): Promise<boolean> {
  const { marker, keys } = settlement;
  const args = [settlement.requestId, settlement.actualMicros, settlement.markerTtlMs, settlement.lastIsCredit ? 1 : 0];
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
  return rows.map(([exists, spent, balance, reserved]) => ({
    exists: exists === 1,
    spent: toNumber(spent),
    balance: toNumber(balance),
    reserved: toNumber(reserved),
  }));
}

/** The store's figure for a lost counter, with the requests that settled into it while it was missing (`read`) and those of them the figure counts. */
export interface StoreFigure {
  micros: number;
  read: readonly string[];
  counted: readonly string[];
}

/** What a rebuild did: `retry` when a request settled into the counter after its ids were read. */
export type SeedOutcome = 'seeded' | 'existed' | 'retry';

const SEED_OUTCOMES: Readonly<Record<string, SeedOutcome>> = { '1': 'seeded', '0': 'existed', '-1': 'retry' };

async function seed(
  redis: ScriptedRedis,
  hash: string,
  field: 'spent' | 'balance',
  figure: StoreFigure,
  keepMs: number,
  toppedUp: string,
): Promise<SeedOutcome> {
  const reply = await redis.budgetSeed(hash, field, figure.micros, keepMs, toppedUp, figure.read.length, ...figure.read, ...figure.counted);
  return SEED_OUTCOMES[String(reply)] ?? 'retry';
}

/** Rebuilds a lost budget window's counter from the store's spend unless it exists (keepMs 0: forever). */
export function budgetSeed(redis: ScriptedRedis, hash: string, spent: StoreFigure, keepMs: number): Promise<SeedOutcome> {
  return seed(redis, hash, 'spent', spent, keepMs, '');
}

/** Rebuilds a lost credit account from the store's top-ups and spend (its figure: top-ups minus spend) unless it exists. */
export function creditSeed(redis: ScriptedRedis, hash: string, balance: StoreFigure, toppedUpMicros: number): Promise<SeedOutcome> {
  return seed(redis, hash, 'balance', balance, 0, String(toppedUpMicros));
}

/** The requests that settled into a lost counter while it was missing (settle.inc.lua's `u:` fields), from its field names. */
export function unseededRequests(fields: readonly string[]): string[] {
  return fields.filter((field) => field.startsWith('u:')).map((field) => field.slice(2));
}

/**
 * Brings the credit balance up to the store's sum of top-ups (read after this top-up was stored) if its counter
 * exists; the micros it was raised by (0 when missing, or when another call had already brought it up).
 */
export async function creditTopUp(redis: ScriptedRedis, hash: string, toppedUpMicros: number, amountMicros: number): Promise<number> {
  return Number(await redis.creditTopUp(hash, toppedUpMicros, amountMicros));
}
