/** circuit-breaker-1.lua against a real Redis: the sliding window, the one probe, the doubled cooldown, the pause. */
import { describe, expect, it } from 'vitest';
import { scriptedTestRedis } from '../../helpers/scripted-test-redis.ts';
import { probeBreaker, readBreaker, reportBreaker } from '../../../src/infra/redis/breaker-states.ts';
import type { BreakerSettings } from '../../../src/domain/catalog/schema.ts';

const { redis, prefix } = scriptedTestRedis('tbrk');
const SETTINGS: BreakerSettings = { failureRate: 0.5, minCalls: 4, windowMs: 10_000, cooldownMs: 1_000, maxCooldownMs: 3_000 };
const T0 = 1_800_000_000_000;
let n = 0;
const fresh = () => `${prefix}:b${++n}`;
const report = (key: string, calls: number, failures: number, now: number, extra: Partial<Parameters<typeof reportBreaker>[3]> = {}) =>
  reportBreaker(redis, key, SETTINGS, { calls, failures, probe: null, pauseUntilMs: 0, ...extra }, now);

describe('circuit-breaker-1.lua', () => {
  it('reads an unknown deployment as closed, and writes nothing', async () => {
    const key = fresh();
    expect(await readBreaker(redis, key, T0)).toMatchObject({ state: 'closed', transition: null });
    expect(await redis.exists(key)).toBe(0);
  });

  it('stays closed below the fewest calls, and opens once enough calls fail at the rate', async () => {
    const key = fresh();
    expect((await report(key, 3, 3, T0)).state).toBe('closed');
    expect(await report(key, 1, 0, T0 + 10)).toMatchObject({ state: 'open', transition: 'open', openUntilMs: T0 + 10 + 1_000 });
  });

  it('stays closed while the failures are under the rate', async () => {
    const key = fresh();
    expect((await report(key, 100, 49, T0)).state).toBe('closed');
  });

  it('slides: failures of the last window weigh by how much of it is still inside, then not at all', async () => {
    const key = fresh();
    await report(key, 10, 4, T0);
    // Half a window into the next one: 4 × 0.5 = 2 old failures of 5 weighted calls, and 1 new of 1: 3 of 6, the rate.
    expect((await report(key, 1, 1, T0 + 15_000)).state).toBe('open');
    const other = fresh();
    await report(other, 10, 4, T0);
    // Two windows on, the old ones are gone: 1 of 4 new calls failed.
    expect((await report(other, 4, 1, T0 + 20_000)).state).toBe('closed');
  });

  it('lets exactly one probe through after the cooldown; a failed probe reopens it for twice as long, capped', async () => {
    const key = fresh();
    await report(key, 4, 4, T0);
    expect((await probeBreaker(redis, key, SETTINGS, 5_000, T0 + 999)).probeGranted).toBe(false);
    const probes = await Promise.all([1, 2, 3, 4].map(() => probeBreaker(redis, key, SETTINGS, 5_000, T0 + 1_000)));
    expect(probes.filter((reply) => reply.probeGranted)).toHaveLength(1);
    expect(probes.find((reply) => reply.probeGranted)?.transition).toBe('half_open');
    expect(await report(key, 1, 1, T0 + 1_100, { probe: 'fail' })).toMatchObject({ state: 'open', transition: 'open', openUntilMs: T0 + 1_100 + 2_000 });
    await probeBreaker(redis, key, SETTINGS, 5_000, T0 + 3_100);
    expect(await report(key, 1, 1, T0 + 3_200, { probe: 'fail' })).toMatchObject({ openUntilMs: T0 + 3_200 + 3_000 });
    await probeBreaker(redis, key, SETTINGS, 5_000, T0 + 6_200);
    expect(await report(key, 1, 1, T0 + 6_300, { probe: 'fail' })).toMatchObject({ openUntilMs: T0 + 6_300 + 3_000 });
  });

  it('closes on a successful probe, with the window and the cooldown forgotten', async () => {
    const key = fresh();
    await report(key, 4, 4, T0);
    await probeBreaker(redis, key, SETTINGS, 5_000, T0 + 1_000);
    expect(await report(key, 1, 0, T0 + 1_050, { probe: 'ok' })).toMatchObject({ state: 'closed', transition: 'closed' });
    // Three failures are not enough to open again: the old four are gone.
    expect((await report(key, 3, 3, T0 + 1_100)).state).toBe('closed');
    expect(await report(key, 1, 1, T0 + 1_200)).toMatchObject({ state: 'open', openUntilMs: T0 + 1_200 + 1_000 });
  });

  it('lets another probe go when the last one never reported within its lease', async () => {
    const key = fresh();
    await report(key, 4, 4, T0);
    expect((await probeBreaker(redis, key, SETTINGS, 5_000, T0 + 1_000)).probeGranted).toBe(true);
    expect((await probeBreaker(redis, key, SETTINGS, 5_000, T0 + 5_999)).probeGranted).toBe(false);
    expect(await probeBreaker(redis, key, SETTINGS, 5_000, T0 + 6_000)).toMatchObject({ probeGranted: true, state: 'half_open', transition: null });
  });

  it('keeps the longest pause a 429 asked for, and expires its hash', async () => {
    const key = fresh();
    const now = Date.now();
    expect((await report(key, 1, 1, now, { pauseUntilMs: now + 2_000 })).pausedUntilMs).toBe(now + 2_000);
    expect((await report(key, 1, 1, now + 10, { pauseUntilMs: now + 1_000 })).pausedUntilMs).toBe(now + 2_000);
    expect(await redis.pttl(key)).toBeGreaterThan(0);
  });
});
