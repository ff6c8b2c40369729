/** The rate limiter against real Redis: four GCRA buckets checked and charged together, with a controlled clock. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { defineScripts, type ScriptedRedis } from '../../../src/infra/redis/scripts.ts';
import { createRedisKeys } from '../../../src/infra/redis/keys.ts';
import { RateLimiter, rateLimitHeaders, formatDuration, type RateCheck, type RateLimits } from '../../../src/domain/rate-limit/rate-limiter.ts';
import { deletePrefix, TEST_REDIS_URL } from '../../helpers/gateway-processes.ts';

const prefix = `trl${randomBytes(4).toString('hex')}`;
const keys = createRedisKeys(prefix);
const WIDE: RateLimits = { requestsPerMinute: 1_000_000, tokensPerMinute: 1_000_000_000 };

let redis: ScriptedRedis<Redis>;
let clock = 1_700_000_000_000;
let limiter: RateLimiter;

beforeAll(() => {
  redis = defineScripts(new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null }));
  limiter = new RateLimiter({ redis, keys, now: () => clock });
});

afterEach(async () => {
  await deletePrefix(redis, prefix);
});

afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

let tenantNumber = 0;
function request(overrides: Partial<RateCheck> = {}): RateCheck {
  return { tenantId: `t${++tenantNumber}`, keyId: 'k1', tokens: 0, tenant: WIDE, key: WIDE, ...overrides };
}

async function admitted(check: RateCheck, times: number): Promise<number> {
  let count = 0;
  for (let i = 0; i < times; i++) if ((await limiter.check(check)).ok) count++;
  return count;
}

describe('requests per minute', () => {
  it('admits a burst up to the limit, then refuses with the wait until one request has refilled', async () => {
    const check = request({ key: { requestsPerMinute: 6, tokensPerMinute: 1_000_000 } });
    expect(await admitted(check, 6)).toBe(6);
    const refused = await limiter.check(check);
    expect(refused).toMatchObject({ ok: false, scope: 'key', dimension: 'requests', retryAfterSeconds: 10 });
    clock += 4_001;
    expect(await limiter.check(check)).toMatchObject({ ok: false, retryAfterSeconds: 6 });
    clock += 5_999;
    expect((await limiter.check(check)).ok).toBe(true);
    expect((await limiter.check(check)).ok).toBe(false);
  });

  it('rounds a sub-second wait up to one second', async () => {
    const check = request({ key: { requestsPerMinute: 600, tokensPerMinute: 1_000_000 } });
    expect(await admitted(check, 600)).toBe(600);
    expect(await limiter.check(check)).toMatchObject({ ok: false, retryAfterSeconds: 1 });
  });

  it('refills continuously: a full minute restores the whole burst', async () => {
    const check = request({ key: { requestsPerMinute: 7, tokensPerMinute: 1_000_000 } });
    expect(await admitted(check, 10)).toBe(7);
    clock += 30_000;
    expect(await admitted(check, 10)).toBe(3);
    clock += 60_000;
    expect(await admitted(check, 10)).toBe(7);
  });

  it('admits exactly the limit out of 100 concurrent checks', async () => {
    const check = request({ key: { requestsPerMinute: 20, tokensPerMinute: 1_000_000 } });
    const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.check(check)));
    expect(decisions.filter((decision) => decision.ok)).toHaveLength(20);
  });
});

describe('tokens per minute', () => {
  it('charges the token estimate and refuses when it does not fit', async () => {
    const check = request({ tokens: 400, key: { requestsPerMinute: 100, tokensPerMinute: 1_000 } });
    expect(await admitted(check, 2)).toBe(2);
    const refused = await limiter.check(check);
    // 200 tokens are left; 200 more refill in 12 s.
    expect(refused).toMatchObject({ ok: false, scope: 'key', dimension: 'tokens', retryAfterSeconds: 12 });
    expect(refused.headers).toMatchObject({ limitTokens: 1_000, remainingTokens: 200 });
    clock += 12_000;
    expect((await limiter.check(check)).ok).toBe(true);
  });

  it('refuses an estimate above a whole minute for 60 s, charging nothing', async () => {
    const tenantId = `t${++tenantNumber}`;
    const big = request({ tenantId, tokens: 5_001, tenant: { requestsPerMinute: 100, tokensPerMinute: 5_000 } });
    expect(await limiter.check(big)).toMatchObject({ ok: false, scope: 'tenant', dimension: 'tokens', retryAfterSeconds: 60 });
    const small = await limiter.check({ ...big, tokens: 5_000 });
    expect(small).toMatchObject({ ok: true, headers: { remainingTokens: 0, remainingRequests: 99 } });
  });
});

describe('key and tenant', () => {
  it('lets two keys of one tenant share the tenant bucket', async () => {
    const tenant = { requestsPerMinute: 5, tokensPerMinute: 1_000_000 };
    const first = request({ keyId: 'a', tenant });
    const second = { ...first, keyId: 'b' };
    expect(await admitted(first, 3)).toBe(3);
    expect(await admitted(second, 3)).toBe(2);
    expect(await limiter.check(first)).toMatchObject({ ok: false, scope: 'tenant', dimension: 'requests' });
    expect((await limiter.check(request({ tenant }))).ok).toBe(true);
  });

  it('limits one key below its tenant without touching the other keys', async () => {
    const tenant = { requestsPerMinute: 10, tokensPerMinute: 1_000_000 };
    const key = { requestsPerMinute: 2, tokensPerMinute: 1_000_000 };
    const first = request({ keyId: 'a', tenant, key });
    expect(await admitted(first, 3)).toBe(2);
    expect(await limiter.check(first)).toMatchObject({ ok: false, scope: 'key', dimension: 'requests' });
    expect(await admitted({ ...first, keyId: 'b' }, 2)).toBe(2);
  });

  it('charges no bucket when one refuses', async () => {
    // The tenant's request bucket drains `limit` units a millisecond of the clock given: with a limit
    // of a million a minute, one stray millisecond would empty it, and the count below would say nothing.
    const check = request({
      tokens: 300,
      key: { requestsPerMinute: 100, tokensPerMinute: 1_000 },
      tenant: { requestsPerMinute: 1_000, tokensPerMinute: 1_000_000_000 },
    });
    expect(await admitted(check, 3)).toBe(3);
    for (let i = 0; i < 5; i++) expect((await limiter.check(check)).ok).toBe(false);
    const small = await limiter.check({ ...check, tokens: 100 });
    expect(small).toMatchObject({ ok: true, headers: { remainingRequests: 96, remainingTokens: 0 } });
    // Four charges of 60,000 units and none for the five refusals (which would make nine): the level
    // is exact on the controlled clock, and a few stray milliseconds could only lower it by thousands.
    const [tenantRequests] = (await redis.hget(keys.rate(check.tenantId), 't'))!.split(' ');
    expect(Number(tenantRequests)).toBeGreaterThan(3 * 60_000);
    expect(Number(tenantRequests)).toBeLessThanOrEqual(4 * 60_000);
  });
});

describe('headers', () => {
  it('reports the tighter of key and tenant in each dimension', async () => {
    const check = request({
      tokens: 100,
      key: { requestsPerMinute: 10, tokensPerMinute: 100_000 },
      tenant: { requestsPerMinute: 600, tokensPerMinute: 1_000 },
    });
    const decision = await limiter.check(check);
    expect(decision).toEqual({
      ok: true,
      headers: { limitRequests: 10, remainingRequests: 9, resetRequestsMs: 6_000, limitTokens: 1_000, remainingTokens: 900, resetTokensMs: 6_000 },
    });
    clock += 1_500;
    const later = await limiter.check(check);
    expect(later.headers).toMatchObject({ remainingRequests: 8, resetRequestsMs: 10_500, remainingTokens: 825, resetTokensMs: 10_500 });
  });

  it("keeps a tenant's buckets in one hash, a field per scope, that expires a window after the last charge", async () => {
    const check = request({ tokens: 50, key: { requestsPerMinute: 4, tokensPerMinute: 100 } });
    await limiter.check(check);
    await limiter.check({ ...check, keyId: 'other' });
    const fields = await redis.hgetall(keys.rate(check.tenantId));
    expect(Object.keys(fields).sort()).toEqual([`k:${check.keyId}`, 'k:other', 't'].sort());
    expect(fields[`k:${check.keyId}`]).toBe(`${60_000} ${50 * 60_000} ${clock}`);
    const ttl = await redis.pttl(keys.rate(check.tenantId));
    expect(ttl).toBeGreaterThan(59_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('formats them as OpenAI does', () => {
    const headers = { limitRequests: 60, remainingRequests: 59, resetRequestsMs: 1_000, limitTokens: 150_000, remainingTokens: 149_984, resetTokensMs: 6 };
    expect(rateLimitHeaders(headers)).toEqual({
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-limit-tokens': '150000',
      'x-ratelimit-remaining-requests': '59',
      'x-ratelimit-remaining-tokens': '149984',
      'x-ratelimit-reset-requests': '1s',
      'x-ratelimit-reset-tokens': '6ms',
    });
    expect([0, 20, 1_500, 360_000, 80_250, 3_601_000].map(formatDuration)).toEqual(['0s', '20ms', '1.5s', '6m0s', '1m20.25s', '1h0m1s']);
  });
});
