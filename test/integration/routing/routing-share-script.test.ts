/** routing-share-1.lua against a real Redis: each worker's loads of an alias's deployments, shared, the silent ones forgotten. */
import { expect, it } from 'vitest';
import { scriptedTestRedis } from '../../helpers/scripted-test-redis.ts';
import { shareLoads } from '../../../src/infra/redis/routing-share.ts';

const { redis, prefix } = scriptedTestRedis('trsh');
const T0 = 1_800_000_000_000;

it("writes a worker's own loads, reads every worker's, and forgets a worker silent for too long", async () => {
  const key = `${prefix}:alias`;
  await shareLoads(redis, key, 'w1', new Map([['east', { inFlight: 3, latencyMs: 120.4 }]]), 2_500, T0);
  await shareLoads(redis, key, 'w2', new Map([['east', { inFlight: 1, latencyMs: null }]]), 2_500, T0 + 1_000);
  const both = await shareLoads(redis, key, 'w3', new Map([['west', { inFlight: 0, latencyMs: 80 }]]), 2_500, T0 + 2_000);
  expect(both.get('east')).toEqual(
    new Map([
      ['w1', { inFlight: 3, latencyMs: 120 }],
      ['w2', { inFlight: 1, latencyMs: null }],
    ]),
  );
  expect(both.get('west')).toEqual(new Map([['w3', { inFlight: 0, latencyMs: 80 }]]));
  // w1 wrote last at T0: 3 s later it is gone, from the answer and from the hash.
  const later = await shareLoads(redis, key, 'w3', new Map([['west', { inFlight: 1, latencyMs: 80 }]]), 2_500, T0 + 3_000);
  expect([...(later.get('east')?.keys() ?? [])]).toEqual(['w2']);
  expect(await redis.hexists(key, 'east|w1')).toBe(0);
  expect(await redis.pttl(key)).toBeGreaterThan(0);
});
