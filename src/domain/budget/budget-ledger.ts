/**
 * The Redis side of budgets and credits: reserve an estimate against every window
 * and the credit account in one script, settle the actual cost exactly once, and
 * rebuild lost counters from the store, so that losing Redis resets nobody's spend.
 */
import type { BudgetPolicy, SpentMicros } from '../../infra/store/repository.ts';
import type { RedisKeys } from '../../infra/redis/keys.ts';
import {
  admit,
  budgetPeek,
  budgetSeed,
  budgetSettle,
  creditSeed,
  creditTopUp,
  type BudgetCounterKeys,
  type BudgetCounterValues,
  type BudgetReserveReply,
  type ReservePart,
  type ScriptedRedis,
  type SeedOutcome,
  type Settlement,
  unseededRequests,
} from '../../infra/redis/scripts.ts';
import { windowEnd, windowStart } from './windows.ts';

const DAY_MS = 86_400_000;
// A window's counters outlive it by a day, for requests settled after it ended.
const KEEP_AFTER_END_MS = DAY_MS;
/** How long a settled request keeps its marker: BullMQ may run a job (a batch line) again after a crash, and a day covers any retry of it. */
export const SETTLED_MARKER_TTL_MS = DAY_MS;
const EPOCH = new Date(0);
// A rebuild raced by requests settling into the counter reads again; past this many, the request that needed it fails.
const SEED_ATTEMPTS = 5;

/** What the durable store knows about a tenant's spend; counters are rebuilt from it. */
export interface SpendSource {
  /** Cost of the tenant's usage records in [since, until), of one feature or (null) all, and which of the requests `among` it counts. */
  spentMicros(tenantId: string, feature: string | null, since: Date, until: Date, among: readonly string[]): Promise<SpentMicros>;
  /** Sum of the tenant's credit top-ups, or null when it has no credit account. */
  creditToppedUp(tenantId: string): Promise<number | null>;
}

/** Result of BudgetLedger.reserve. */
export type ReserveOutcome =
  | { ok: true; queued: number; keys: string[] }
  | { ok: false; reason: 'budget'; policy: BudgetPolicy; resetsAt: Date }
  | { ok: false; reason: 'credit'; balanceMicros: number }
  | { ok: false; reason: 'queue_full'; queued: number }
  | { ok: false; reason: 'key_busy'; keyId: string; inFlight: number; maxConcurrent: number };

/** One reservation: the estimate, the policies that apply, whether credit is enforced, the queue cap (Infinity: none). */
export interface ReserveRequest {
  tenantId: string;
  requestId: string;
  estimateMicros: number;
  policies: BudgetPolicy[];
  credit: boolean;
  maxQueued: number;
  /** The API key's concurrency limit: at most `maxConcurrent` of its requests admitted and not yet settled; absent or null: none. */
  keyConcurrency?: { keyId: string; maxConcurrent: number } | null;
  /** How long the reservation holds if never settled; absent: the ledger's own (a request's whole timeout). A background request waits longer. */
  ttlMs?: number;
}

/** A reservation that the budget or the queue refused. */
export type ReserveRefusal = Extract<ReserveOutcome, { ok: false }>;

/** The budget part of an admission script call, and the clock of the call: the reservation's windows and expiry are of that time. */
export interface BudgetPart {
  nowMs: number;
  reserve: ReservePart;
}

/** Budgets and credit of a tenant as they stand now. */
export interface BudgetSnapshot {
  budgets: Array<{ policy: BudgetPolicy; spentMicros: number; reservedMicros: number; remainingMicros: number; resetsAt: Date }>;
  credit: { balanceMicros: number; reservedMicros: number } | null;
}

/** Construction options of BudgetLedger. */
export interface BudgetLedgerOptions {
  redis: ScriptedRedis;
  keys: RedisKeys;
  spend: SpendSource;
  /** How long a reservation holds before a later reserve reaps it (a request that never settled). */
  reservationTtlMs: number;
  now?: () => Date;
}

interface WindowCounter extends BudgetCounterKeys {
  kind: 'window';
  policy: BudgetPolicy;
  start: Date;
  end: Date;
}

interface CreditCounter extends BudgetCounterKeys {
  kind: 'credit';
}

type Counter = WindowCounter | CreditCounter;

/** Reserves, settles and reports budget and credit counters in Redis. */
export class BudgetLedger {
  readonly #redis: ScriptedRedis;
  readonly #keys: RedisKeys;
  readonly #spend: SpendSource;
  readonly #reservationTtlMs: number;
  readonly #now: () => Date;
  // One rebuild per counter at a time in this process: a flush must not become a query storm.
  readonly #rebuilding = new Map<string, Promise<void>>();

  constructor(options: BudgetLedgerOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys;
    this.#spend = options.spend;
    this.#reservationTtlMs = options.reservationTtlMs;
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * Atomically checks every applicable window (spent + reserved + estimate ≤ limit), the credit
   * account (balance − reserved − estimate ≥ 0; skipped when credit is false) and the tenant's
   * queue cap (outstanding reservations < maxQueued; Infinity: no cap), and reserves the estimate
   * in all of them — or nothing. A 'credit' refusal reports the balance not yet reserved.
   */
  async reserve(input: ReserveRequest): Promise<ReserveOutcome> {
    const { outcome } = await this.reserveWithin(input, (budget) => admit(this.#redis, budget));
    if (!outcome) throw new Error('the admission script did not reach the reservation');
    return outcome;
  }

  /**
   * Reserves `input` as the budget part of a script call that `call` makes (beside parts of its
   * own, in one round trip). Counters Redis lost are rebuilt from the store and `call` made again:
   * the script writes nothing when one is missing. `outcome` is null when an earlier part of the
   * call stopped it before the reservation.
   */
  async reserveWithin<Reply extends { reserve: BudgetReserveReply | null }>(
    input: ReserveRequest,
    call: (budget: BudgetPart) => Promise<Reply>,
  ): Promise<{ reply: Reply; outcome: ReserveOutcome | null }> {
    assertMicros(input.estimateMicros, 'estimateMicros');
    const now = this.#now();
    const windows = this.#windowCounters(input.tenantId, input.policies, now);
    const credit = input.credit ? this.#creditCounter(input.tenantId) : null;
    const outstanding = this.#keys.outstanding(input.tenantId);
    const inFlight = this.#inFlightKey(input);
    const budget: BudgetPart = {
      nowMs: now.getTime(),
      reserve: {
        outstanding,
        inFlight: inFlight && input.keyConcurrency ? { key: inFlight, max: input.keyConcurrency.maxConcurrent } : null,
        windows: windows.map((w) => ({ hash: w.hash, expiries: w.expiries, limitMicros: w.policy.limitMicros, keepMs: keepMs(w, now) })),
        credit,
        requestId: input.requestId,
        estimateMicros: input.estimateMicros,
        expiresAtMs: now.getTime() + (input.ttlMs ?? this.#reservationTtlMs),
        maxQueued: Number.isFinite(input.maxQueued) ? input.maxQueued : -1,
      },
    };
    const counters: Counter[] = credit ? [...windows, credit] : windows;
    let reply = await call(budget);
    if (reply.reserve?.[0] === 'missing') {
      await this.#rebuild(input.tenantId, pick(counters, reply.reserve.slice(1) as number[]), now);
      reply = await call(budget);
      if (reply.reserve?.[0] === 'missing') throw new Error(`Budget counters of tenant '${input.tenantId}' vanished while being rebuilt`);
    }
    const outcome = reply.reserve ? outcomeOf(reply.reserve, input, windows, settlementKeysOf(outstanding, inFlight, counters)) : null;
    return { reply, outcome };
  }

  /** The keys that a reservation of `input` made now is settled with: what `reserve` returns as `keys`. */
  settlementKeys(input: ReserveRequest): string[] {
    const windows = this.#windowCounters(input.tenantId, input.policies, this.#now());
    const counters = input.credit ? [...windows, this.#creditCounter(input.tenantId)] : windows;
    return settlementKeysOf(this.#keys.outstanding(input.tenantId), this.#inFlightKey(input), counters);
  }

  /**
   * Releases the reservation and adds the actual cost to every window and the credit account —
   * exactly once per request, even if called again (returns 'already_settled'). actualMicros 0 =
   * release (request failed before the provider returned anything).
   */
  async settle(tenantId: string, requestId: string, keys: string[], actualMicros: number): Promise<'settled' | 'already_settled'> {
    return (await budgetSettle(this.#redis, this.settlement(tenantId, requestId, keys, actualMicros))) ? 'settled' : 'already_settled';
  }

  /**
   * The settlement of a reservation made with `keys`, for a script that settles it with other writes
   * (the worker's last call). Its marker guards the counters against a second charge for a day; a
   * reservation in no counter (the queue's alone) has nothing to charge twice, and its marker lives
   * `uncountedMarkerTtlMs`: as long as what else tells a re-run that the request ended (its events).
   * One marker a request for a day was ~500 bytes of Redis a request.
   */
  settlement(tenantId: string, requestId: string, keys: readonly string[], actualMicros: number, uncountedMarkerTtlMs = SETTLED_MARKER_TTL_MS): Settlement {
    assertMicros(actualMicros, 'actualMicros');
    // An even count has the key's in-flight set second (settle.inc.lua reads it so).
    const sets = keys.length % 2 === 1 ? 1 : 2;
    if (keys[0] !== this.#keys.outstanding(tenantId) || (sets === 2 && !keys[1]?.startsWith(this.#keys.keyInFlight(tenantId, '')))) {
      throw new Error(`Settlement keys of request '${requestId}' are not those of tenant '${tenantId}'`);
    }
    const lastIsCredit = keys.length >= sets + 2 && keys[keys.length - 2] === this.#keys.credit(tenantId);
    const markerTtlMs = keys.length > sets ? SETTLED_MARKER_TTL_MS : Math.min(uncountedMarkerTtlMs, SETTLED_MARKER_TTL_MS);
    return { marker: this.#keys.settled(tenantId, requestId), keys, requestId, actualMicros, markerTtlMs, lastIsCredit };
  }

  /** The tenant's budgets (of the policies given) and credit account now, expired reservations left out. */
  async snapshot(tenantId: string, policies: BudgetPolicy[], credit: boolean): Promise<BudgetSnapshot> {
    const now = this.#now();
    const windows = this.#windowCounters(tenantId, policies, now);
    const creditCounter = credit ? this.#creditCounter(tenantId) : null;
    const counters: Counter[] = creditCounter ? [...windows, creditCounter] : windows;
    let values = await this.#peek(counters, now);
    const missing = counters.filter((_, i) => !values[i]?.exists);
    if (missing.length > 0) {
      await this.#rebuild(tenantId, missing, now);
      values = await this.#peek(counters, now);
      if (values.some((v) => !v.exists)) throw new Error(`Budget counters of tenant '${tenantId}' vanished while being rebuilt`);
    }
    const budgets = windows.map((w, i) => {
      const spentMicros = values[i]?.spent ?? 0;
      const reservedMicros = values[i]?.reserved ?? 0;
      const remainingMicros = Math.max(0, w.policy.limitMicros - spentMicros - reservedMicros);
      return { policy: w.policy, spentMicros, reservedMicros, remainingMicros, resetsAt: w.end };
    });
    const last = values[windows.length];
    return { budgets, credit: creditCounter ? { balanceMicros: last?.balance ?? 0, reservedMicros: last?.reserved ?? 0 } : null };
  }

  /**
   * Brings the Redis balance up to the store's top-ups, `toppedUpMicros` read after the top-up of `amountMicros`
   * was stored, if that counter exists (otherwise the next rebuild reads them from the store). Idempotent: a top-up
   * sent again, or seen by another's call first, raises the balance once.
   */
  async topUp(tenantId: string, toppedUpMicros: number, amountMicros: number): Promise<void> {
    assertMicros(toppedUpMicros, 'toppedUpMicros');
    assertMicros(amountMicros, 'amountMicros');
    await creditTopUp(this.#redis, this.#keys.credit(tenantId), toppedUpMicros, amountMicros);
  }

  #inFlightKey(input: ReserveRequest): string | null {
    return input.keyConcurrency ? this.#keys.keyInFlight(input.tenantId, input.keyConcurrency.keyId) : null;
  }

  #windowCounters(tenantId: string, policies: readonly BudgetPolicy[], now: Date): WindowCounter[] {
    return policies.map((policy) => {
      const start = windowStart(policy.window, now);
      const hash = this.#keys.budgetWindow(tenantId, policy.id, start.getTime());
      const expiries = this.#keys.budgetExpiries(tenantId, policy.id, start.getTime());
      return { kind: 'window', policy, start, end: windowEnd(policy.window, now), hash, expiries };
    });
  }

  #creditCounter(tenantId: string): CreditCounter {
    return { kind: 'credit', hash: this.#keys.credit(tenantId), expiries: this.#keys.creditExpiries(tenantId) };
  }

  async #peek(counters: readonly Counter[], now: Date): Promise<BudgetCounterValues[]> {
    return counters.length === 0 ? [] : budgetPeek(this.#redis, counters, now.getTime());
  }

  async #rebuild(tenantId: string, counters: readonly Counter[], now: Date): Promise<void> {
    await Promise.all(
      counters.map((counter) => {
        const pending = this.#rebuilding.get(counter.hash);
        if (pending) return pending;
        const rebuild = this.#seed(tenantId, counter, now).finally(() => this.#rebuilding.delete(counter.hash));
        this.#rebuilding.set(counter.hash, rebuild);
        return rebuild;
      }),
    );
  }

  // Only creates a counter that is still missing: the first rebuild of any process wins. Requests that settled into
  // it while it was missing are read first, then the store's figure with those of them it counts (settle.inc.lua);
  // one that settled in between is not known to be counted or not, and the rebuild reads again.
  async #seed(tenantId: string, counter: Counter, now: Date): Promise<void> {
    for (let attempt = 1; attempt <= SEED_ATTEMPTS; attempt++) {
      const read = unseededRequests(await this.#redis.hkeys(counter.hash));
      if ((await this.#seedOnce(tenantId, counter, now, read)) !== 'retry') return;
    }
    throw new Error(`The budget counter ${counter.hash} kept changing while it was rebuilt (${SEED_ATTEMPTS} attempts).`);
  }

  async #seedOnce(tenantId: string, counter: Counter, now: Date, read: string[]): Promise<SeedOutcome> {
    if (counter.kind === 'window') {
      const spent = await this.#spend.spentMicros(tenantId, counter.policy.feature, counter.start, counter.end, read);
      return budgetSeed(this.#redis, counter.hash, { micros: spent.micros, read, counted: spent.counted }, keepMs(counter, now));
    }
    const [toppedUp, spent] = await Promise.all([this.#spend.creditToppedUp(tenantId), this.#spend.spentMicros(tenantId, null, EPOCH, now, read)]);
    // Credit enforcement was asked for: no account means nothing was topped up.
    const balance = (toppedUp ?? 0) - spent.micros;
    return creditSeed(this.#redis, counter.hash, { micros: balance, read, counted: spent.counted }, toppedUp ?? 0);
  }
}

// Relative, so that only the injected clock decides, never Redis's.
function keepMs(window: WindowCounter, now: Date): number {
  return window.end.getTime() + KEEP_AFTER_END_MS - now.getTime();
}

function settlementKeysOf(outstanding: string, inFlight: string | null, counters: readonly BudgetCounterKeys[]): string[] {
  return [outstanding, ...(inFlight ? [inFlight] : []), ...counters.flatMap((c) => [c.hash, c.expiries])];
}

function pick<T>(items: readonly T[], oneBasedIndexes: readonly number[]): T[] {
  return oneBasedIndexes.map((i) => items[i - 1]).filter((item): item is T => item !== undefined);
}

function outcomeOf(reply: BudgetReserveReply, input: ReserveRequest, windows: readonly WindowCounter[], keys: string[]): ReserveOutcome {
  const [kind, ...numbers] = reply;
  const first = numbers[0] ?? 0;
  switch (kind) {
    case 'ok':
      return { ok: true, queued: first, keys };
    case 'queue_full':
      return { ok: false, reason: 'queue_full', queued: first };
    case 'key_busy': {
      if (!input.keyConcurrency) throw new Error('the admission script refused a key that sent no concurrency limit');
      return { ok: false, reason: 'key_busy', keyId: input.keyConcurrency.keyId, inFlight: first, maxConcurrent: input.keyConcurrency.maxConcurrent };
    }
    case 'credit':
      return { ok: false, reason: 'credit', balanceMicros: first };
    case 'budget': {
      // Of several exhausted windows, name the one that resets last: only then can the request pass.
      const exhausted = pick(windows, numbers).sort((a, b) => b.end.getTime() - a.end.getTime());
      const window = exhausted[0];
      if (!window) throw new Error('budget-reserve named no window');
      return { ok: false, reason: 'budget', policy: window.policy, resetsAt: window.end };
    }
    case 'missing':
      throw new Error('Budget counters are missing after a rebuild');
  }
}

function assertMicros(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer of micro-units, got ${value}`);
}
