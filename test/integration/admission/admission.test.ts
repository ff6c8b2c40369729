/**
 * The admission port against real Redis: what each refusal leaves unwritten, what giving back
 * frees, and a reply lost after the script ran. Each part's own rules are in the budget,
 * idempotency and rate-limit suites.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Admission, type AdmissionDecision, type AdmissionRequest, type GiveBackFailure } from '../../../src/domain/admission/admission.ts';
import { BudgetLedger, type SpendSource } from '../../../src/domain/budget/budget-ledger.ts';
import { IdempotencyStore, keyDigest } from '../../../src/domain/idempotency/idempotency-store.ts';
import { RateLimiter, type RateLimits } from '../../../src/domain/rate-limit/rate-limiter.ts';
import { createRedisKeys } from '../../../src/infra/redis/keys.ts';
import { defineScripts, type ScriptedRedis } from '../../../src/infra/redis/scripts.ts';
import { encodeCachedAnswer, storeAnswer } from '../../../src/infra/cache/response-cache.ts';
import type { BudgetPolicy } from '../../../src/infra/store/repository.ts';
import { deletePrefix, TEST_REDIS_URL } from '../../helpers/gateway-processes.ts';

const prefix = `tad${randomBytes(4).toString('hex')}`;
const keys = createRedisKeys(prefix);
const WIDE: RateLimits = { requestsPerMinute: 1_000_000, tokensPerMinute: 1_000_000_000 };
const BODY = { path: '/v1/chat/completions', body: { model: 'svc-flash', messages: [{ role: 'user', content: 'hi' }] } };
const redis = defineScripts(new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null }));
const clock = new Date('2026-11-25T12:00:00Z');

/** Counts the store's spend queries (each one a rebuilt counter); nothing was spent. */
const spend: SpendSource & { calls: number } = {
  calls: 0,
  spentMicros: async () => {
    spend.calls += 1;
    return { micros: 0, counted: [] };
  },
  creditToppedUp: async () => null,
};
const ledger = new BudgetLedger({ redis, keys, spend, reservationTtlMs: 60_000, now: () => clock });
const idempotency = new IdempotencyStore({ redis, keys, ttlMs: 60_000 });
const failures: Array<Parameters<GiveBackFailure>> = [];
/** The store's answered keys, by digest: what a claim made after Redis forgot its claims is checked against. */
const answered = new Map<string, string>();

function admissionOn(on: ScriptedRedis): Admission {
  return new Admission({
    redis: on,
    keys,
    limiter: new RateLimiter({ redis: on, keys }),
    idempotency,
    ledger,
    onGiveBackFailed: (...failure) => failures.push(failure),
    answeredBy: async (_tenantId, digest) => answered.get(digest) ?? null,
  });
}

const admission = admissionOn(redis);
let tenant: string;
let tenants = 0;
let requests = 0;

function dayPolicy(limitMicros: number): BudgetPolicy {
  return { id: `day-${limitMicros}`, tenantId: tenant, feature: null, window: 'day', limitMicros, createdAt: new Date(0) };
}

function request(
  options: { key?: string; keyLimits?: RateLimits; estimateMicros?: number; policies?: BudgetPolicy[]; cache?: AdmissionRequest['cache'] } = {},
): AdmissionRequest {
  const requestId = `req_${++requests}`;
  return {
    rate: { tenantId: tenant, keyId: 'k1', tokens: 10, tenant: WIDE, key: options.keyLimits ?? WIDE },
    idempotency: options.key === undefined ? null : { key: options.key, request: BODY },
    reservation: {
      tenantId: tenant,
      requestId,
      estimateMicros: options.estimateMicros ?? 100,
      policies: options.policies ?? [],
      credit: false,
      maxQueued: Infinity,
    },
    cache: options.cache ?? null,
  };
}

function ran(decision: AdmissionDecision): Extract<AdmissionDecision, { action: 'run' }> {
  if (decision.action !== 'run') throw new Error(`expected the request to run, got ${JSON.stringify(decision)}`);
  return decision;
}

/** The test's client, except that the admission script's reply is lost once the script has run. */
function losingReplies(): ScriptedRedis {
  return new Proxy(redis, {
    get(target, name) {
      if (name === 'admit') {
        return async (...args: Array<string | number>) => {
          await target.admit(...args);
          throw new Error('Connection is closed.');
        };
      }
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const claimed = async (key: string) => (await redis.exists(idempotency.keyFor(tenant, key))) === 1;
const outstanding = () => redis.zcard(keys.outstanding(tenant));

beforeEach(() => {
  tenant = `t${++tenants}`;
  answered.clear();
  spend.calls = 0;
  failures.length = 0;
});

afterEach(async () => {
  await deletePrefix(redis, prefix);
});

afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('refusals, in the order admission decides', () => {
  it('a rate-limited request neither claims its key nor reserves', async () => {
    const oneAMinute = { requestsPerMinute: 1, tokensPerMinute: 1_000_000 };
    ran(await admission.admit(request({ key: 'first', keyLimits: oneAMinute })));
    const refused = await admission.admit(request({ key: 'second', keyLimits: oneAMinute }));
    expect(refused).toMatchObject({ action: 'rate_limited', rate: { ok: false, scope: 'key', dimension: 'requests' } });
    expect(await claimed('second')).toBe(false);
    expect(await outstanding()).toBe(1);
  });

  it('a held key relays the request holding it and reserves nothing more; another body is a reused key', async () => {
    const first = ran(await admission.admit(request({ key: 'held' })));
    expect(await admission.admit(request({ key: 'held' }))).toMatchObject({ action: 'relay', requestId: first.taken.requestId, finished: false });
    const other = request({ key: 'held' });
    other.idempotency = { key: 'held', request: { ...BODY, body: { other: true } } };
    expect(await admission.admit(other)).toMatchObject({ action: 'key_reused' });
    expect(await outstanding()).toBe(1);
  });

  it('a short budget leaves the key unclaimed, so a retry with it runs once the budget allows', async () => {
    const refused = await admission.admit(request({ key: 'short', estimateMicros: 500, policies: [dayPolicy(100)] }));
    expect(refused).toMatchObject({ action: 'refused', refusal: { ok: false, reason: 'budget' } });
    expect(await claimed('short')).toBe(false);
    expect(await outstanding()).toBe(0);
    ran(await admission.admit(request({ key: 'short', estimateMicros: 50, policies: [dayPolicy(100)] })));
  });

  it('counters Redis lost are rebuilt and the call repeated, which charges the rate limits and claims the key once', async () => {
    const twoAMinute = { requestsPerMinute: 2, tokensPerMinute: 1_000_000 };
    const decision = ran(await admission.admit(request({ key: 'rebuilt', keyLimits: twoAMinute, policies: [dayPolicy(1_000)] })));
    expect(spend.calls).toBe(1);
    expect(decision.rate).toMatchObject({ ok: true, headers: { remainingRequests: 1 } });
    expect(decision.taken.claimKey).toBe(idempotency.keyFor(tenant, 'rebuilt'));
  });
});

describe('the response cache, read by the same call', () => {
  const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
  async function cacheAnswer(digest: string, storedAt: number): Promise<string> {
    const value = await encodeCachedAnswer({ model: 'svc-flash', usage, answer: { text: digest }, storedAt, deployment: null });
    await storeAnswer(redis, keys, { tenantId: tenant, digest, value, ttlMs: 60_000, maxBytes: 100_000 });
    return value;
  }
  const twoAMinute = { requestsPerMinute: 2, tokensPerMinute: 1_000_000 };

  it('serves a fresh answer: the rate limits charged, no reservation, and no counter rebuilt for it', async () => {
    const value = await cacheAnswer('fresh', Date.now());
    const decision = await admission.admit(
      request({ keyLimits: twoAMinute, policies: [dayPolicy(1_000)], cache: { digest: 'fresh', maxAgeMs: 60_000, priceMicros: 0 } }),
    );
    expect(decision).toMatchObject({ action: 'cached', entry: value, cacheBytes: value.length, rate: { ok: true, headers: { remainingRequests: 1 } } });
    expect(await outstanding()).toBe(0);
    expect(spend.calls).toBe(0);
  });

  it('runs a request whose answer is older than it accepts, or absent, and reports the bytes held', async () => {
    const value = await cacheAnswer('old', Date.now() - 10_000);
    expect(ran(await admission.admit(request({ cache: { digest: 'old', maxAgeMs: 5_000, priceMicros: 0 } }))).cacheBytes).toBe(value.length);
    expect(ran(await admission.admit(request({ cache: { digest: 'absent', maxAgeMs: 5_000, priceMicros: 0 } }))).cacheBytes).toBe(value.length);
    expect(ran(await admission.admit(request())).cacheBytes).toBeNull();
    expect(await outstanding()).toBe(3);
  });

  it("charges a priced hit's price to every window at once, and a window that cannot pay it refuses the hit", async () => {
    const value = await cacheAnswer('priced', Date.now());
    const policy = dayPolicy(1_000);
    const cache = { digest: 'priced', maxAgeMs: 60_000, priceMicros: 600 };
    const hit = request({ policies: [policy], cache });
    expect(await admission.admit(hit)).toMatchObject({ action: 'cached', entry: value });
    expect((await ledger.snapshot(tenant, [policy], false)).budgets[0]).toMatchObject({ spentMicros: 600, reservedMicros: 0 });
    // The same request's call sent again (its reply lost, as ioredis resends after a reconnect): served, not charged again.
    expect(await admission.admit(hit)).toMatchObject({ action: 'cached', entry: value });
    expect((await ledger.snapshot(tenant, [policy], false)).budgets[0]).toMatchObject({ spentMicros: 600 });
    expect(await outstanding()).toBe(0);
    const refused = await admission.admit(request({ policies: [policy], cache }));
    expect(refused).toMatchObject({ action: 'refused', refusal: { reason: 'budget' }, cacheBytes: value.length });
    expect((await ledger.snapshot(tenant, [policy], false)).budgets[0]).toMatchObject({ spentMicros: 600 });
  });

  it('refuses a hit the rate limits refuse, charging nothing', async () => {
    await cacheAnswer('limited', Date.now());
    const oneAMinute = { requestsPerMinute: 1, tokensPerMinute: 1_000_000 };
    const cache = { digest: 'limited', maxAgeMs: 60_000, priceMicros: 0 };
    expect(await admission.admit(request({ keyLimits: oneAMinute, cache }))).toMatchObject({ action: 'cached' });
    expect(await admission.admit(request({ keyLimits: oneAMinute, cache }))).toMatchObject({ action: 'rate_limited', rate: { scope: 'key' } });
  });
});

describe('a key claimed after Redis forgot the claims before it', () => {
  it('does not run again when the store says the key was answered, and gives back what the admission took', async () => {
    const policy = dayPolicy(1_000);
    answered.set(keyDigest('forgotten'), 'req_earlier');
    const decision = await admission.admit(request({ key: 'forgotten', estimateMicros: 300, policies: [policy] }));
    expect(decision).toMatchObject({ action: 'answered', requestId: 'req_earlier' });
    expect(await claimed('forgotten')).toBe(false);
    expect(await outstanding()).toBe(0);
    expect((await ledger.snapshot(tenant, [policy], false)).budgets[0]).toMatchObject({ spentMicros: 0, reservedMicros: 0 });
  });

  it('runs a key the store does not know, and asks the store no more once the slot has kept claims longer than a key lives', async () => {
    ran(await admission.admit(request({ key: 'new' })));
    answered.set(keyDigest('old enough'), 'req_earlier');
    await redis.set(keys.idempotencySince(tenant), String(clock.getTime() - 60_001));
    ran(await admission.admit(request({ key: 'old enough' })));
  });
});

describe('giving back', () => {
  it('releases the claim and settles the reservation at 0', async () => {
    const policy = dayPolicy(1_000);
    const { taken } = ran(await admission.admit(request({ key: 'given', estimateMicros: 300, policies: [policy] })));
    await admission.giveBack(taken);
    expect(await claimed('given')).toBe(false);
    expect(await outstanding()).toBe(0);
    expect((await ledger.snapshot(tenant, [policy], false)).budgets[0]).toMatchObject({ spentMicros: 0, reservedMicros: 0 });
    expect(await ledger.settle(tenant, taken.requestId, taken.budgetKeys, 0)).toBe('already_settled');
    expect(failures).toEqual([]);
  });

  it('a reply lost after the script ran gives back what it took, and the caller gets the error', async () => {
    await expect(admissionOn(losingReplies()).admit(request({ key: 'lost' }))).rejects.toThrow('Connection is closed.');
    expect(await redis.exists(keys.rate(tenant))).toBe(1);
    await vi.waitFor(async () => {
      expect(await claimed('lost')).toBe(false);
      expect(await outstanding()).toBe(0);
    });
    expect(failures).toEqual([]);
  });
});
