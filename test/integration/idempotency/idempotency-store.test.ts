/** The idempotency store against real Redis: claims, completion, release and expiry, with a controlled clock. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { defineScripts, type ScriptedRedis } from '../../../src/infra/redis/scripts.ts';
import { createRedisKeys } from '../../../src/infra/redis/keys.ts';
import { completeClaim, IdempotencyStore, releaseClaim, requestFingerprint } from '../../../src/domain/idempotency/idempotency-store.ts';
import { deletePrefix, TEST_REDIS_URL } from '../../helpers/gateway-processes.ts';

const TTL_MS = 24 * 60 * 60 * 1000;
const prefix = `tid${randomBytes(4).toString('hex')}`;
const keys = createRedisKeys(prefix);
const BODY = requestFingerprint({ model: 'svc-flash', messages: [{ role: 'user', content: 'hi' }] });
const OTHER_BODY = requestFingerprint({ model: 'svc-flash', messages: [{ role: 'user', content: 'bye' }] });

let redis: ScriptedRedis<Redis>;
let clock = 1_700_000_000_000;
let store: IdempotencyStore;

beforeAll(() => {
  redis = defineScripts(new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null }));
  store = new IdempotencyStore({ redis, keys, ttlMs: TTL_MS, now: () => clock });
});

afterEach(async () => {
  await deletePrefix(redis, prefix);
});

afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

let keyNumber = 0;
function newKey(): string {
  return `key-${++keyNumber}-${randomBytes(4).toString('hex')}`;
}

describe('claims', () => {
  it('is claimed, then in flight, then completed for replay', async () => {
    const key = newKey();
    expect(await store.claim('t1', key, BODY, 'req_1')).toMatchObject({ status: 'claimed' });
    expect(await store.claim('t1', key, BODY, 'req_2')).toEqual({ status: 'in_flight', requestId: 'req_1' });
    expect(await store.complete('t1', key, 'req_1')).toBe(true);
    expect(await store.claim('t1', key, BODY, 'req_3')).toEqual({ status: 'completed', requestId: 'req_1' });
  });

  it('reports a mismatch for another body, in flight or completed', async () => {
    const key = newKey();
    await store.claim('t1', key, BODY, 'req_1');
    expect(await store.claim('t1', key, OTHER_BODY, 'req_2')).toEqual({ status: 'mismatch' });
    await store.complete('t1', key, 'req_1');
    expect(await store.claim('t1', key, OTHER_BODY, 'req_3')).toEqual({ status: 'mismatch' });
  });

  it('frees the key on release, so the next claim owns it', async () => {
    const key = newKey();
    await store.claim('t1', key, BODY, 'req_1');
    expect(await store.release('t1', key, 'req_1')).toBe(true);
    expect(await store.claim('t1', key, OTHER_BODY, 'req_2')).toMatchObject({ status: 'claimed' });
  });

  it('lets only the owner complete or release', async () => {
    const key = newKey();
    await store.claim('t1', key, BODY, 'req_1');
    expect(await store.complete('t1', key, 'req_2')).toBe(false);
    expect(await store.release('t1', key, 'req_2')).toBe(false);
    expect(await store.claim('t1', key, BODY, 'req_3')).toEqual({ status: 'in_flight', requestId: 'req_1' });
    expect(await store.complete('t1', newKey(), 'req_1')).toBe(false);
  });

  it('keeps a completed claim when its owner releases it', async () => {
    const key = newKey();
    await store.claim('t1', key, BODY, 'req_1');
    await store.complete('t1', key, 'req_1');
    expect(await store.release('t1', key, 'req_1')).toBe(false);
    expect(await store.claim('t1', key, BODY, 'req_2')).toEqual({ status: 'completed', requestId: 'req_1' });
  });

  it('does not mix up two tenants using the same key', async () => {
    const key = newKey();
    expect(await store.claim('t1', key, BODY, 'req_1')).toMatchObject({ status: 'claimed' });
    expect(await store.claim('t2', key, OTHER_BODY, 'req_2')).toMatchObject({ status: 'claimed' });
    expect(store.keyFor('t1', key)).not.toBe(store.keyFor('t2', key));
  });

  it('grants exactly one of 100 concurrent claims', async () => {
    const key = newKey();
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => store.claim('t1', key, BODY, `req_${i}`)));
    const claimed = results.flatMap((result, i) => (result.status === 'claimed' ? [`req_${i}`] : []));
    expect(claimed).toHaveLength(1);
    expect(results.filter((result) => result.status === 'in_flight')).toHaveLength(99);
    expect(results.every((result) => result.status === 'claimed' || ('requestId' in result && result.requestId === claimed[0]))).toBe(true);
  });

  it('accepts a long key and stores it hashed, under the tenant hash tag', async () => {
    const key = 'x'.repeat(255);
    await store.claim('t1', key, BODY, 'req_1');
    const name = store.keyFor('t1', key);
    expect(name).toMatch(new RegExp(`^${prefix}:\\{t1\\}:idem:[0-9a-f]{64}$`));
    expect(await redis.exists(name)).toBe(1);
  });
});

describe('expiry', () => {
  it('sets the TTL from the claim and treats an expired claim as new', async () => {
    const key = newKey();
    await store.claim('t1', key, BODY, 'req_1');
    const ttl = await redis.pttl(store.keyFor('t1', key));
    expect(ttl).toBeGreaterThan(TTL_MS - 5_000);
    expect(ttl).toBeLessThanOrEqual(TTL_MS);
    await store.complete('t1', key, 'req_1');
    clock += TTL_MS - 1;
    expect(await store.claim('t1', key, OTHER_BODY, 'req_2')).toEqual({ status: 'mismatch' });
    clock += 1;
    expect(await store.claim('t1', key, OTHER_BODY, 'req_2')).toMatchObject({ status: 'claimed' });
    expect(await store.complete('t1', key, 'req_1')).toBe(false);
  });
});

describe('worker helpers', () => {
  it('complete and release by the claim key alone', async () => {
    const first = newKey();
    const second = newKey();
    await store.claim('t1', first, BODY, 'req_1');
    await store.claim('t1', second, BODY, 'req_2');
    expect(await completeClaim(redis, store.keyFor('t1', first), 'req_1')).toBe(true);
    expect(await releaseClaim(redis, store.keyFor('t1', second), 'req_x')).toBe(false);
    expect(await releaseClaim(redis, store.keyFor('t1', second), 'req_2')).toBe(true);
    expect(await store.claim('t1', first, BODY, 'req_3')).toEqual({ status: 'completed', requestId: 'req_1' });
    expect(await store.claim('t1', second, BODY, 'req_3')).toMatchObject({ status: 'claimed' });
  });
});

describe('requestFingerprint', () => {
  it('is stable under key order at every depth', () => {
    const a = { model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 0.5 };
    const b = { temperature: 0.5, messages: [{ content: 'hi', role: 'user' }], model: 'm' };
    expect(requestFingerprint(a)).toBe(requestFingerprint(b));
    expect(requestFingerprint(a)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs for different values, array orders and types', () => {
    const base = requestFingerprint({ a: 1, b: ['x', 'y'] });
    expect(requestFingerprint({ a: 2, b: ['x', 'y'] })).not.toBe(base);
    expect(requestFingerprint({ a: 1, b: ['y', 'x'] })).not.toBe(base);
    expect(requestFingerprint({ a: '1', b: ['x', 'y'] })).not.toBe(base);
    expect(requestFingerprint({ a: 1, b: ['x', 'y'], c: null })).not.toBe(base);
    expect(requestFingerprint({ a: 1, b: ['x', 'y'], c: undefined })).toBe(base);
  });
});
