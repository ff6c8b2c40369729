import { describe, expect, it } from 'vitest';
import { BatchLane } from '../../../src/worker/batches/batch-lane.ts';

const tick = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves to whether the acquisition was granted within `ms`. */
async function grantedWithin<T>(promise: Promise<T>, ms: number): Promise<boolean> {
  return Promise.race([promise.then(() => true), tick(ms).then(() => false)]);
}

describe('the batch lane', () => {
  it('grants at most its slots, overall and per tenant, and a release lets the next one in', async () => {
    const lane = new BatchLane({ slots: 3, tenantSlots: 2, pollMs: 10 }, async () => false);
    const a1 = await lane.acquire('a', 0, null);
    await lane.acquire('a', 0, null);
    const a3 = lane.acquire('a', 0, null);
    expect(await grantedWithin(a3, 30)).toBe(false);
    const b1 = await lane.acquire('b', 0, null);
    const b2 = lane.acquire('b', 0, null);
    expect(await grantedWithin(b2, 30)).toBe(false);
    expect(lane.running).toBe(3);
    a1();
    a1();
    // The slot freed is a's: a's waiting line takes it (b is at the lane's limit too, but a came first).
    expect(await grantedWithin(a3, 30)).toBe(true);
    b1();
    expect(await grantedWithin(b2, 30)).toBe(true);
    lane.close();
  });

  it('takes no line while live requests of its shard wait, and takes them once the queue is empty', async () => {
    let waiting = true;
    const looked: number[] = [];
    const lane = new BatchLane({ slots: 4, tenantSlots: 4, pollMs: 10 }, async (shard) => {
      looked.push(shard);
      return waiting && shard === 0;
    });
    const held = lane.acquire('a', 0, null);
    const other = await lane.acquire('b', 1, null);
    expect(typeof other).toBe('function');
    expect(await grantedWithin(held, 50)).toBe(false);
    waiting = false;
    expect(await grantedWithin(held, 50)).toBe(true);
    expect(looked).toContain(0);
    lane.close();
  });

  it('counts a shard it cannot look at as busy', async () => {
    const lane = new BatchLane({ slots: 1, tenantSlots: 1, pollMs: 10 }, async () => {
      throw new Error('redis is down');
    });
    expect(await grantedWithin(lane.acquire('a', 0, null), 40)).toBe(false);
    lane.close();
  });

  it('holds lines for a deployment that answered 429 until its Retry-After, and lets others by', async () => {
    const lane = new BatchLane({ slots: 4, tenantSlots: 4, pollMs: 10 }, async () => false);
    lane.slowDown('fake-gpt', 120);
    const slowed = lane.acquire('a', 0, 'fake-gpt');
    expect(await grantedWithin(lane.acquire('a', 0, 'sim'), 20)).toBe(true);
    expect(await grantedWithin(slowed, 60)).toBe(false);
    expect(await grantedWithin(slowed, 150)).toBe(true);
    lane.close();
  });
});
