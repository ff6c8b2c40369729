/**
 * Admission of one request: the response cache's look-up, its rate limits, its idempotency claim
 * and its budget reservation, checked and written in one script call on the tenant's slot
 * (admit-n.lua), and given back when the request will not run.
 */
import { SETTLED_MARKER_TTL_MS, type BudgetLedger, type ReserveOutcome, type ReserveRefusal, type ReserveRequest } from '../budget/budget-ledger.ts';
import { claimResult, keyDigest, releaseClaim, requestFingerprint, type IdempotencyStore } from '../idempotency/idempotency-store.ts';
import type { RateCheck, RateDecision, RateLimiter } from '../rate-limit/rate-limiter.ts';
import { admit, type AdmitReply, type ScriptedRedis } from '../../infra/redis/scripts.ts';
import type { RedisKeys } from '../../infra/redis/keys.ts';
import { isRedisUnavailable } from '../../infra/redis/connections.ts';
import { retryUnavailable } from '../../infra/redis/retry-unavailable.ts';

/** One request's admission: its rate check, its Idempotency-Key, its reservation (which names the tenant and the request). */
export interface AdmissionRequest {
  /** Null when no limit applies to the tenant: the rate limits then cost Redis nothing. */
  rate: RateCheck | null;
  /** The client's key and what a retry with it must repeat (the route and the body as sent); null without a key. */
  idempotency: { key: string; request: unknown } | null;
  reservation: ReserveRequest;
  /**
   * The response cache's answer to the request (by its digest) when one up to `maxAgeMs` old may
   * serve it, at the tenant's price of a hit; null: not read.
   */
  cache: { digest: string; maxAgeMs: number; priceMicros: number } | null;
}

/** What an admission took: the idempotency claim (its Redis key, which the worker completes) and the reservation's keys. */
export interface Taken {
  tenantId: string;
  requestId: string;
  claimKey: string | null;
  budgetKeys: string[];
}

/** A refusal of the rate limits. */
export type RateRefusal = Extract<RateDecision, { ok: false }>;

/**
 * What admission decided, in the order it decides: the rate limits refuse (nothing written), a
 * fresh cached answer serves it (the rate limits charged, nothing else taken), a key held by an
 * earlier request relays it or was reused for another body, the budget or the queue refuses (the
 * key left unclaimed), the store says the key was answered before Redis forgot it (what was taken
 * given back), or the request runs. `rate` is null when no limit was checked; `cacheBytes`
 * (what the tenant's cache holds) is null when the cache was not read.
 */
export type AdmissionDecision = Decided & { cacheBytes: number | null };

type Decided =
  | { action: 'rate_limited'; rate: RateRefusal }
  | { action: 'cached'; rate: RateDecision | null; entry: string }
  | { action: 'relay'; rate: RateDecision | null; requestId: string; finished: boolean }
  | { action: 'key_reused'; rate: RateDecision | null }
  | { action: 'answered'; rate: RateDecision | null; requestId: string }
  | { action: 'refused'; rate: RateDecision | null; refusal: ReserveRefusal }
  | { action: 'run'; rate: RateDecision | null; queued: number; taken: Taken };

/** What could not be given back, for the caller's log: the claim or the reservation. */
export type GiveBackFailure = (error: unknown, part: 'claim' | 'reservation', taken: Taken) => void;

/** Construction options of Admission. */
export interface AdmissionOptions {
  redis: ScriptedRedis;
  keys: RedisKeys;
  limiter: RateLimiter;
  idempotency: IdempotencyStore;
  ledger: BudgetLedger;
  onGiveBackFailed: GiveBackFailure;
  /** The request that answered a key (its digest) since `since`, from the store's usage records; null when none did. */
  answeredBy: (tenantId: string, keyDigest: string, since: Date) => Promise<string | null>;
}

/** Admits requests in one Redis round trip each, and gives back what an admission took for a request that will not run. */
export class Admission {
  readonly #redis: ScriptedRedis;
  readonly #keys: RedisKeys;
  readonly #limiter: RateLimiter;
  readonly #idempotency: IdempotencyStore;
  readonly #ledger: BudgetLedger;
  readonly #onGiveBackFailed: GiveBackFailure;
  readonly #answeredBy: AdmissionOptions['answeredBy'];

  constructor(options: AdmissionOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys;
    this.#limiter = options.limiter;
    this.#idempotency = options.idempotency;
    this.#ledger = options.ledger;
    this.#onGiveBackFailed = options.onGiveBackFailed;
    this.#answeredBy = options.answeredBy;
  }

  /** Decides `request`'s admission; when Redis could not be reached, gives back whatever the call may have taken, then throws. */
  async admit(request: AdmissionRequest): Promise<AdmissionDecision> {
    try {
      return await this.#decide(request);
    } catch (error) {
      // A connection lost with the script's reply does not say whether the script ran: the client's
      // 503 must not leave a claim its retry would wait on, or a reservation held until it expires.
      if (isRedisUnavailable(error)) void this.giveBack(this.#mayHaveTaken(request));
      throw error;
    }
  }

  /**
   * Gives back what an admission took for a request that will not run: its idempotency claim (so a
   * retry with the same key runs) and its reservation (settled at 0). Both are safe to repeat and are
   * retried while Redis is away; resolves once both are done or reported to `onGiveBackFailed`.
   */
  async giveBack(taken: Taken): Promise<void> {
    const { tenantId, requestId, claimKey, budgetKeys } = taken;
    const claim = claimKey === null ? null : this.#attempt(taken, 'claim', () => releaseClaim(this.#redis, claimKey, requestId));
    const reservation = this.#attempt(taken, 'reservation', () => this.#ledger.settle(tenantId, requestId, budgetKeys, 0));
    await Promise.all([claim, reservation]);
  }

  async #decide(request: AdmissionRequest): Promise<AdmissionDecision> {
    const { rate: check, idempotency, reservation } = request;
    const rate = check ? this.#limiter.part(check) : undefined;
    const claim = idempotency
      ? this.#idempotency.part(reservation.tenantId, idempotency.key, requestFingerprint(idempotency.request), reservation.requestId)
      : undefined;
    const cache = this.#cachePart(request);
    const { reply, outcome } = await this.#ledger.reserveWithin(reservation, (budget) => admit(this.#redis, { ...budget, cache, rate, claim }));
    const decided = { ...this.#decisionOf(request, reply, outcome, claim?.key ?? null), cacheBytes: reply.cache?.[1] ?? null };
    return idempotency && decided.action === 'run' ? this.#unlessAnswered(decided, idempotency.key, reply.claim) : decided;
  }

  /**
   * A key claimed while the tenant's Redis slot may have forgotten earlier claims (it came back empty within a key's
   * lifetime) may have been answered before: the store's usage records say. Such a request does not run again, and
   * what its admission took is given back.
   */
  async #unlessAnswered(decided: AdmissionDecision & { action: 'run' }, key: string, reply: AdmitReply['claim']): Promise<AdmissionDecision> {
    const claimed = reply ? claimResult(reply) : null;
    if (claimed?.status !== 'claimed' || !claimed.forgetful) return decided;
    let earlier: string | null;
    try {
      earlier = await this.#answeredBy(decided.taken.tenantId, keyDigest(key), new Date(Date.now() - this.#idempotency.ttlMs));
    } catch (error) {
      await this.giveBack(decided.taken);
      throw error;
    }
    if (earlier === null) return decided;
    await this.giveBack(decided.taken);
    return { action: 'answered', rate: decided.rate, requestId: earlier, cacheBytes: decided.cacheBytes };
  }

  #cachePart(request: AdmissionRequest) {
    if (!request.cache) return undefined;
    const { tenantId } = request.reservation;
    const { digest, maxAgeMs, priceMicros } = request.cache;
    return {
      entry: this.#keys.cacheEntry(tenantId, digest),
      sizes: this.#keys.cacheIndex(tenantId).sizes,
      marker: this.#keys.settled(tenantId, request.reservation.requestId),
      markerTtlMs: SETTLED_MARKER_TTL_MS,
      oldestMs: Date.now() - maxAgeMs,
      priceMicros,
    };
  }

  #decisionOf(request: AdmissionRequest, reply: AdmitReply, outcome: ReserveOutcome | null, claimKey: string | null): Decided {
    const { rate: check, reservation } = request;
    const decision = check && reply.rate ? this.#limiter.decide(check, reply.rate) : null;
    if (decision && !decision.ok) return { action: 'rate_limited', rate: decision };
    const entry = reply.cache?.[0];
    if (entry) return { action: 'cached', rate: decision, entry };
    if (reply.claim) {
      const held = claimResult(reply.claim);
      if (held.status === 'mismatch') return { action: 'key_reused', rate: decision };
      if (held.status !== 'claimed') return { action: 'relay', rate: decision, requestId: held.requestId, finished: held.status === 'completed' };
    }
    if (!outcome) throw new Error('the admission script stopped before the reservation without a refusal');
    if (!outcome.ok) return { action: 'refused', rate: decision, refusal: outcome };
    return {
      action: 'run',
      rate: decision,
      queued: outcome.queued,
      taken: { tenantId: reservation.tenantId, requestId: reservation.requestId, claimKey, budgetKeys: outcome.keys },
    };
  }

  /** What an admission whose reply was lost may have taken: its claim, and its reservation as made now. */
  #mayHaveTaken(request: AdmissionRequest): Taken {
    const { tenantId, requestId } = request.reservation;
    const claimKey = request.idempotency ? this.#idempotency.keyFor(tenantId, request.idempotency.key) : null;
    return { tenantId, requestId, claimKey, budgetKeys: this.#ledger.settlementKeys(request.reservation) };
  }

  async #attempt(taken: Taken, part: 'claim' | 'reservation', step: () => Promise<unknown>): Promise<void> {
    try {
      await retryUnavailable(step);
    } catch (error) {
      this.#onGiveBackFailed(error, part, taken);
    }
  }
}
