/** deployment-quota-1.lua against a real Redis: a deployment's calls and tokens a minute, across workers. */
import { describe, expect, it } from 'vitest';
import { scriptedTestRedis } from '../../helpers/scripted-test-redis.ts';
import { spendQuota, takeQuota } from '../../../src/infra/redis/deployment-quota.ts';

const { redis, prefix } = scriptedTestRedis('tquo');
const T0 = 1_800_000_000_000;
let n = 0;
const fresh = () => `${prefix}:q${++n}`;

describe('deployment-quota-1.lua', () => {
  it('lets a minute of calls through at once, then one every 60 s / rpm', async () => {
    const key = fresh();
    const limits = { rpm: 3, tpm: 0 };
    expect(await Promise.all([1, 2, 3].map(() => takeQuota(redis, key, limits, T0)))).toEqual([0, 0, 0]);
    expect(await takeQuota(redis, key, limits, T0)).toBe(20_000);
    expect(await takeQuota(redis, key, limits, T0 + 19_999)).toBe(1);
    expect(await takeQuota(redis, key, limits, T0 + 20_000)).toBe(0);
    expect(await takeQuota(redis, key, limits, T0 + 20_000)).toBe(20_000);
  });

  it('passes a deployment over its tokens a minute until they drain; the tokens are counted after the calls', async () => {
    const key = fresh();
    const limits = { rpm: 0, tpm: 1_000 };
    expect(await takeQuota(redis, key, limits, T0)).toBe(0);
    await spendQuota(redis, key, limits, 1_000, T0);
    // At the allowance, not over it: still let through.
    expect(await takeQuota(redis, key, limits, T0)).toBe(0);
    await spendQuota(redis, key, limits, 500, T0);
    // 500 tokens over, draining at 1,000 a minute: 30 s.
    expect(await takeQuota(redis, key, limits, T0)).toBe(30_000);
    expect(await takeQuota(redis, key, limits, T0 + 30_000)).toBe(0);
  });

  it('charges nothing and keeps the key only as long as it matters', async () => {
    const key = fresh();
    await takeQuota(redis, key, { rpm: 10, tpm: 0 }, Date.now());
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });
});
