/** admit-n.lua's cache part and cache-store-4.lua against a real Redis: freshness, expiry, the cap, eviction of the oldest, the bookkeeping's lifetime. */
import { describe, expect, it } from 'vitest';
import { scriptedTestRedis } from '../../helpers/scripted-test-redis.ts';
import { createRedisKeys } from '../../../src/infra/redis/keys.ts';
import { COMPRESS_ABOVE, decodeCachedAnswer, encodeCachedAnswer, storeAnswer } from '../../../src/infra/cache/response-cache.ts';
import { admit } from '../../../src/infra/redis/scripts.ts';
import type { CachedAnswer } from '../../../src/infra/cache/response-cache.ts';

const { redis, prefix } = scriptedTestRedis('tcache');
const keys = createRedisKeys(prefix);
let n = 0;
const tenant = () => `t${++n}`;
const USAGE = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
const answer = (text: string): CachedAnswer => ({ model: 'fast', usage: USAGE, answer: { text }, storedAt: 1_700_000_000_000, deployment: 'fast' });
const store = (tenantId: string, digest: string, value: string, ttlMs: number, maxBytes: number, nowMs = Date.now()) =>
  storeAnswer(redis, keys, { tenantId, digest, value, ttlMs, maxBytes, nowMs });
const sizes = async (tenantId: string) => redis.hgetall(keys.cacheIndex(tenantId).sizes);
/** The admission script's cache part alone: the entry when stored at or after `oldestMs`, and the tenant's total. */
const lookUp = async (tenantId: string, digest: string, oldestMs = 0) =>
  (
    await admit(redis, {
      nowMs: Date.now(),
      cache: {
        entry: keys.cacheEntry(tenantId, digest),
        sizes: keys.cacheIndex(tenantId).sizes,
        marker: keys.settled(tenantId, 'req'),
        markerTtlMs: 60_000,
        oldestMs,
        priceMicros: 0,
      },
    })
  ).cache;

describe('the response cache scripts', () => {
  it('misses on nothing, then reads back what was stored, with the total', async () => {
    const t = tenant();
    expect(await lookUp(t, 'd1')).toEqual([null, 0]);
    const value = await encodeCachedAnswer(answer('hello'));
    expect(value.startsWith('1700000000000:{')).toBe(true);
    expect(await store(t, 'd1', value, 60_000, 10_000)).toEqual({ stored: true, totalBytes: value.length, evicted: 0 });
    expect(await lookUp(t, 'd1')).toEqual([value, value.length]);
    expect(decodeCachedAnswer(value)).toEqual(answer('hello'));
    expect(await lookUp(tenant(), 'd1')).toEqual([null, 0]);
  });

  it('misses on an answer older than the request accepts, and on one stored without its time (an older format)', async () => {
    const t = tenant();
    const value = await encodeCachedAnswer(answer('hello'));
    await store(t, 'd1', value, 60_000, 10_000);
    expect(await lookUp(t, 'd1', 1_700_000_000_000)).toEqual([value, value.length]);
    expect(await lookUp(t, 'd1', 1_700_000_000_001)).toEqual([null, value.length]);
    await store(t, 'd2', JSON.stringify(answer('old')), 60_000, 10_000);
    expect((await lookUp(t, 'd2'))?.[0]).toBeNull();
  });

  it('compresses a large answer and reads it back the same', async () => {
    const big = answer('word '.repeat(2_000));
    const value = await encodeCachedAnswer(big);
    expect(JSON.stringify(big).length).toBeGreaterThan(COMPRESS_ABOVE);
    expect(value.startsWith('1700000000000:z')).toBe(true);
    expect(value.length).toBeLessThan(JSON.stringify(big).length / 5);
    expect(decodeCachedAnswer(value)).toEqual(big);
  });

  it('replaces an entry of the same digest without counting it twice', async () => {
    const t = tenant();
    await store(t, 'd', 'x'.repeat(100), 60_000, 10_000);
    const second = await store(t, 'd', 'y'.repeat(300), 60_000, 10_000);
    expect(second).toEqual({ stored: true, totalBytes: 300, evicted: 0 });
    expect(await redis.get(keys.cacheEntry(t, 'd'))).toBe('y'.repeat(300));
  });

  it('evicts the oldest entries to stay under the cap, and never stores one larger than it', async () => {
    const t = tenant();
    const now = Date.now();
    for (let i = 0; i < 5; i++) await store(t, `d${i}`, String(i).repeat(300), 60_000, 1_000, now + i);
    // 300 bytes each under 1,000: three fit; d0 and d1 were evicted as d3 and d4 came.
    expect(await redis.exists(keys.cacheEntry(t, 'd0'), keys.cacheEntry(t, 'd1'))).toBe(0);
    expect(await redis.exists(keys.cacheEntry(t, 'd2'), keys.cacheEntry(t, 'd3'), keys.cacheEntry(t, 'd4'))).toBe(3);
    expect(await sizes(t)).toEqual({ '#total': '900', d2: '300', d3: '300', d4: '300' });
    expect(await store(t, 'huge', 'h'.repeat(1_001), 60_000, 1_000, now + 10)).toEqual({ stored: false, totalBytes: 900, evicted: 0 });
    expect(await redis.exists(keys.cacheEntry(t, 'huge'))).toBe(0);
    // A smaller cap (the policy changed) applies at the next store.
    expect(await store(t, 'd5', '5'.repeat(300), 60_000, 500, now + 11)).toEqual({ stored: true, totalBytes: 300, evicted: 3 });
  });

  it('expires entries by their lifetime, and forgets their sizes at the next store', async () => {
    const t = tenant();
    const now = Date.now();
    await store(t, 'short', 's'.repeat(200), 150, 10_000, now);
    await store(t, 'long', 'l'.repeat(100), 60_000, 10_000, now);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await lookUp(t, 'short'))?.[0]).toBeNull();
    expect(await store(t, 'next', 'n'.repeat(50), 60_000, 10_000)).toEqual({ stored: true, totalBytes: 150, evicted: 0 });
    expect(Object.keys(await sizes(t)).sort()).toEqual(['#total', 'long', 'next']);
  });

  it('gives the bookkeeping the lifetime of its longest entry, and drops it with the last', async () => {
    const t = tenant();
    await store(t, 'a', 'a', 100, 10_000);
    await store(t, 'b', 'b', 5_000, 10_000);
    const index = keys.cacheIndex(t);
    for (const key of [index.byAge, index.byExpiry, index.sizes]) {
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(4_000);
      expect(ttl).toBeLessThanOrEqual(5_000);
    }
    // Only an expired entry left, and one too large to store: the bookkeeping goes.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const t2 = tenant();
    await store(t2, 'a', 'a', 100, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await store(t2, 'big', 'b'.repeat(20), 60_000, 10)).toEqual({ stored: false, totalBytes: 0, evicted: 0 });
    const gone = keys.cacheIndex(t2);
    expect(await redis.exists(gone.byAge, gone.byExpiry, gone.sizes)).toBe(0);
  });
});
