import { describe, expect, it } from 'vitest';
import { backoffDelay, nextDelay, sleep, type RetryPolicy } from '../../../src/worker/retry.ts';

const policy: RetryPolicy = { maxAttempts: 5, budgetMs: 60_000, baseMs: 1_000, maxDelayMs: 10_000 };
const noJitter = () => 0;
const fullJitter = () => 0.999_999;

describe('backoffDelay', () => {
  it('doubles from the base with no jitter: base·2^attempt', () => {
    expect([0, 1, 2, 3].map((n) => backoffDelay(policy, n, noJitter))).toEqual([1_000, 2_000, 4_000, 8_000]);
  });

  it('adds at most 25 % jitter', () => {
    expect([0, 1, 2, 3].map((n) => backoffDelay(policy, n, fullJitter))).toEqual([1_250, 2_500, 5_000, 10_000]);
    expect(backoffDelay(policy, 1, () => 0.5)).toBe(2_250);
  });

  it('caps the exponential part at maxDelayMs, then jitters the cap', () => {
    expect(backoffDelay(policy, 4, noJitter)).toBe(10_000);
    expect(backoffDelay(policy, 30, noJitter)).toBe(10_000);
    expect(backoffDelay(policy, 30, fullJitter)).toBe(12_500);
  });

  it('stays within [wait, 1.25·wait] with Math.random', () => {
    for (let i = 0; i < 200; i++) {
      const delay = backoffDelay(policy, 2);
      expect(delay).toBeGreaterThanOrEqual(4_000);
      expect(delay).toBeLessThanOrEqual(5_000);
    }
  });
});

describe('nextDelay', () => {
  it('gives the backoff delay while attempts and budget remain', () => {
    expect(nextDelay(policy, 0, null, 60_000, noJitter)).toBe(1_000);
    expect(nextDelay(policy, 2, null, 60_000, fullJitter)).toBe(5_000);
  });

  it('gives null once the attempts are used up (attempt counts from 0)', () => {
    expect(nextDelay(policy, 3, null, 60_000, noJitter)).toBe(8_000);
    expect(nextDelay(policy, 4, null, 60_000, noJitter)).toBeNull();
    expect(nextDelay({ ...policy, maxAttempts: 1 }, 0, null, 60_000, noJitter)).toBeNull();
  });

  it('uses Retry-After instead of the backoff when the upstream sent one', () => {
    expect(nextDelay(policy, 0, 7_000, 60_000, fullJitter)).toBe(7_000);
    expect(nextDelay(policy, 3, 0, 60_000, noJitter)).toBe(0);
  });

  it('gives null when the delay would overrun the remaining budget', () => {
    expect(nextDelay(policy, 1, null, 2_001, noJitter)).toBe(2_000);
    expect(nextDelay(policy, 1, null, 2_000, noJitter)).toBeNull();
    expect(nextDelay(policy, 1, null, 500, noJitter)).toBeNull();
  });

  it('gives null when Retry-After overruns the budget, even if the backoff would fit', () => {
    expect(nextDelay(policy, 0, 30_000, 20_000, noJitter)).toBeNull();
    expect(nextDelay(policy, 0, 19_999, 20_000, noJitter)).toBe(19_999);
  });
});

describe('sleep', () => {
  it('resolves after about ms', async () => {
    const started = performance.now();
    await sleep(40, new AbortController().signal);
    expect(performance.now() - started).toBeGreaterThanOrEqual(35);
  });

  it('rejects with the reason when aborted while waiting', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled by client');
    const started = performance.now();
    const waiting = sleep(10_000, controller.signal);
    setTimeout(() => controller.abort(reason), 10);
    await expect(waiting).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const reason = new Error('already gone');
    await expect(sleep(10_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});
