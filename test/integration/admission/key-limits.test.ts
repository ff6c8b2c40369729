/**
 * An API key's own limits in the admission script against real Redis: its requests and tokens per
 * minute replacing the plan's, and its concurrency limit, whose in-flight set every way a request
 * ends frees (settlement, the worker's last call, giving back, the expiry of a lost request).
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Admission, type AdmissionDecision, type AdmissionRequest } from '../../../src/domain/admission/admission.ts';
import { limitsOf, rateCheckOf, rateLimitError } from '../../../src/domain/admission/rate-limits.ts';
import { keyConcurrencyOf, reservationError } from '../../../src/domain/admission/reservation.ts';
import { BudgetLedger, type SpendSource } from '../../../src/domain/budget/budget-ledger.ts';
import { IdempotencyStore } from '../../../src/domain/idempotency/idempotency-store.ts';
import { RateLimiter } from '../../../src/domain/rate-limit/rate-limiter.ts';
import { createRedisKeys } from '../../../src/infra/redis/keys.ts';
import { defineScripts, finishRequest } from '../../../src/infra/redis/scripts.ts';
import type { ApiKeyLimits, BudgetPolicy } from '../../../src/infra/store/repository.ts';
import { deletePrefix, TEST_REDIS_URL } from '../../helpers/gateway-processes.ts';

const prefix = `tkl${randomBytes(4).toString('hex')}`;
const keys = createRedisKeys(prefix);
const redis = defineScripts(new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null }));
const clock = new Date('2026-11-25T12:00:00Z');
const RESERVATION_TTL_MS = 60_000;
const NO_DEFAULTS = { tenant: { requestsPerMinute: 0, tokensPerMinute: 0 }, key: { requestsPerMinute: 0, tokensPerMinute: 0 } };
const BODY = { path: '/v1/chat/completions', body: { model: 'svc-flash', messages: [{ role: 'user', content: 'hi' }] } };
const KEY_ID = 'key_limited';
const spend: SpendSource = { spentMicros: async () => ({ micros: 0, counted: [] }), creditToppedUp: async () => null };

function admissionAt(now: Date): { admission: Admission; ledger: BudgetLedger } {
  const ledger = new BudgetLedger({ redis, keys, spend, reservationTtlMs: RESERVATION_TTL_MS, now: () => now });
  const admission = new Admission({
    redis,
    keys,
    limiter: new RateLimiter({ redis, keys, now: () => now.getTime() }),
    idempotency: new IdempotencyStore({ redis, keys, ttlMs: 60_000 }),
    ledger,
    onGiveBackFailed: (error) => {
      throw error;
    },
    answeredBy: async () => null,
  });
  return { admission, ledger };
}

const { admission, ledger } = admissionAt(clock);
let tenant: string;
let tenants = 0;
let requests = 0;

function limits(own: Partial<ApiKeyLimits>): ApiKeyLimits {
  return { requestsPerMinute: null, tokensPerMinute: null, maxConcurrent: null, ...own };
}

/** A request of KEY_ID, with no tenant or plan limit at all: only the key's own limits apply. */
function request(own: Partial<ApiKeyLimits>, options: { idempotencyKey?: string; policies?: BudgetPolicy[] } = {}): AdmissionRequest {
  const principal = { tenantId: tenant, keyId: KEY_ID, limits: limits(own) };
  return {
    rate: rateCheckOf(principal, 10, limitsOf(null, NO_DEFAULTS, principal.limits)),
    idempotency: options.idempotencyKey === undefined ? null : { key: options.idempotencyKey, request: BODY },
    reservation: {
      tenantId: tenant,
      requestId: `req_${++requests}`,
      estimateMicros: 100,
      policies: options.policies ?? [],
      credit: false,
      maxQueued: Infinity,
      keyConcurrency: keyConcurrencyOf(principal),
    },
    cache: null,
  };
}

function ran(decision: AdmissionDecision): Extract<AdmissionDecision, { action: 'run' }> {
  if (decision.action !== 'run') throw new Error(`expected the request to run, got ${JSON.stringify(decision)}`);
  return decision;
}

function busy(decision: AdmissionDecision) {
  expect(decision).toMatchObject({ action: 'refused', refusal: { ok: false, reason: 'key_busy', keyId: KEY_ID } });
  if (decision.action !== 'refused') throw new Error('unreachable');
  return decision.refusal;
}

const inFlight = () => redis.zrange(keys.keyInFlight(tenant, KEY_ID), '0', '-1');
const rateField = () => redis.hget(keys.rate(tenant), `k:${KEY_ID}`);

beforeEach(() => {
  tenant = `t${++tenants}`;
});

afterEach(async () => {
  await deletePrefix(redis, prefix);
});

afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe("a key's own requests and tokens per minute", () => {
  it('limit the key though its tenant has no limit at all, and the 429 names the key and the limit', async () => {
    const own = { requestsPerMinute: 2 };
    ran(await admission.admit(request(own)));
    ran(await admission.admit(request(own)));
    const third = request(own);
    const refused = await admission.admit(third);
    expect(refused).toMatchObject({ action: 'rate_limited', rate: { ok: false, scope: 'key', dimension: 'requests' } });
    if (refused.action !== 'rate_limited' || !third.rate) throw new Error('unreachable');
    const error = rateLimitError({ tenant: third.rate.tenant, key: third.rate.key }, refused.rate, KEY_ID);
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    expect(error.message).toMatch(new RegExp(`^Rate limit exceeded: 2 requests per minute for API key ${KEY_ID}\\. Retry after (2\\d|30) seconds\\.$`));
  });

  it('replace the plan key limits for that key only', () => {
    const plan = {
      tenantId: 'acme',
      requestsPerMinute: null,
      tokensPerMinute: null,
      keyRequestsPerMinute: 100,
      keyTokensPerMinute: 1_000,
      maxQueued: null,
      cacheHitPriceMicros: null,
    };
    expect(limitsOf(plan, NO_DEFAULTS, limits({ tokensPerMinute: 50 })).key).toEqual({ requestsPerMinute: 100, tokensPerMinute: 50 });
    expect(limitsOf(plan, NO_DEFAULTS, limits({})).key).toEqual({ requestsPerMinute: 100, tokensPerMinute: 1_000 });
  });
});

describe("a key's concurrency limit", () => {
  it('refuses a request beyond it, and the refusal writes nothing: no rate charge, no claim, no reservation', async () => {
    const own = { requestsPerMinute: 1_000, maxConcurrent: 1 };
    const first = ran(await admission.admit(request(own)));
    const charged = await rateField();
    const refusal = busy(await admission.admit(request(own, { idempotencyKey: 'second' })));
    expect(refusal).toMatchObject({ inFlight: 1, maxConcurrent: 1 });
    expect(await rateField()).toBe(charged);
    expect(await redis.exists(new IdempotencyStore({ redis, keys, ttlMs: 1 }).keyFor(tenant, 'second'))).toBe(0);
    expect(await redis.zrange(keys.outstanding(tenant), '0', '-1')).toEqual([first.taken.requestId]);
    expect(await inFlight()).toEqual([first.taken.requestId]);
    const error = reservationError(refusal, 100);
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded', retryAfterSeconds: 1 });
    expect(error.message).toBe(`Rate limit exceeded: 1 concurrent requests for API key ${KEY_ID} (1 queued or running). Retry after 1 seconds.`);
  });

  it('is freed by the settlement, which still charges the budget windows after the in-flight set', async () => {
    const day: BudgetPolicy = { id: 'day', tenantId: tenant, feature: null, window: 'day', limitMicros: 1_000_000, createdAt: new Date(0) };
    const first = ran(await admission.admit(request({ maxConcurrent: 1 }, { policies: [day] })));
    expect(first.taken.budgetKeys.slice(0, 2)).toEqual([keys.outstanding(tenant), keys.keyInFlight(tenant, KEY_ID)]);
    busy(await admission.admit(request({ maxConcurrent: 1 }, { policies: [day] })));
    expect(await ledger.settle(tenant, first.taken.requestId, first.taken.budgetKeys, 70)).toBe('settled');
    expect(await inFlight()).toEqual([]);
    expect((await ledger.snapshot(tenant, [day], false)).budgets[0]).toMatchObject({ spentMicros: 70, reservedMicros: 0 });
    ran(await admission.admit(request({ maxConcurrent: 1 }, { policies: [day] })));
  });

  it("is freed by the worker's last call", async () => {
    const first = ran(await admission.admit(request({ maxConcurrent: 1 })));
    const settlement = ledger.settlement(tenant, first.taken.requestId, first.taken.budgetKeys, 0, 5_000);
    // Only the queue's and the key's sets: nothing to charge twice, so the marker is the short one.
    expect(settlement.markerTtlMs).toBe(5_000);
    const events = [{ seq: 1, line: 'done {}' }];
    const streamKey = keys.events(tenant, first.taken.requestId);
    await finishRequest(redis, { streamKey, ttlMs: 5_000, events, settlement, claim: null, inline: null, state: null, asLost: false });
    expect(await inFlight()).toEqual([]);
    expect(await redis.zcard(keys.outstanding(tenant))).toBe(0);
    ran(await admission.admit(request({ maxConcurrent: 1 })));
  });

  it('is freed by giving back a request that will not run (removed from the queue, refused after admission)', async () => {
    const first = ran(await admission.admit(request({ maxConcurrent: 1 })));
    await admission.giveBack(first.taken);
    expect(await inFlight()).toEqual([]);
    ran(await admission.admit(request({ maxConcurrent: 1 })));
  });

  it('frees the slot of a request that never ended once its reservation expires (a lost job)', async () => {
    ran(await admission.admit(request({ maxConcurrent: 1 })));
    busy(await admissionAt(new Date(clock.getTime() + RESERVATION_TTL_MS - 1)).admission.admit(request({ maxConcurrent: 1 })));
    const later = admissionAt(new Date(clock.getTime() + RESERVATION_TTL_MS + 1)).admission;
    const next = ran(await later.admit(request({ maxConcurrent: 1 })));
    expect(await inFlight()).toEqual([next.taken.requestId]);
    expect(await redis.pttl(keys.keyInFlight(tenant, KEY_ID))).toBeGreaterThan(0);
  });

  it('lets an idempotent retry of the request holding the slot follow it rather than refusing it', async () => {
    const first = ran(await admission.admit(request({ maxConcurrent: 1 }, { idempotencyKey: 'held' })));
    expect(await admission.admit(request({ maxConcurrent: 1 }, { idempotencyKey: 'held' }))).toMatchObject({
      action: 'relay',
      requestId: first.taken.requestId,
    });
  });

  it('admits as many as the limit, counts each key apart, and leaves keys without one unwritten', async () => {
    for (let i = 0; i < 3; i++) ran(await admission.admit(request({ maxConcurrent: 3 })));
    busy(await admission.admit(request({ maxConcurrent: 3 })));
    const other = request({});
    other.reservation.keyConcurrency = null;
    const unlimited = ran(await admission.admit(other));
    expect(unlimited.taken.budgetKeys).toEqual([keys.outstanding(tenant)]);
    expect(await inFlight()).toHaveLength(3);
  });
});
