/** The scripts as defineScripts puts them on a client: by their SHA, sent whole to a server that does not know them. */
import { afterAll, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { defineScripts, scriptSource, SCRIPT_FILES } from '../../../src/infra/redis/scripts.ts';
import { TEST_REDIS_URL } from '../../helpers/gateway-processes.ts';

const prefix = `tscr${randomBytes(4).toString('hex')}`;
// As the request path's connections are: auto-pipelined.
const redis = defineScripts(new Redis(TEST_REDIS_URL, { enableAutoPipelining: true }));
const admitSha = createHash('sha1').update(scriptSource(SCRIPT_FILES.admit)).digest('hex');

/** Charges one request to a rate hash of its own; the script's rate reply says whether it was admitted. */
async function admitOnce(hash: string): Promise<number> {
  const [rate] = (await redis.admit(1, hash, Date.now(), 'r', 60_000, 'k:key', 10, 100, 10, 100, 1, 1, 1, 1)) as [number[]];
  return rate[0] as number;
}

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

it('a script the server does not know (a restarted or flushed Redis) is sent whole, runs once, and is known by its SHA after', async () => {
  await redis.script('FLUSH');
  expect(await redis.script('EXISTS', admitSha)).toEqual([0]);
  // Several in one auto-pipeline: each refused by SHA is sent again whole, and runs once.
  const hashes = [1, 2, 3].map((n) => `${prefix}:rate${n}`);
  expect(await Promise.all(hashes.map(admitOnce))).toEqual([1, 1, 1]);
  expect(await redis.script('EXISTS', admitSha)).toEqual([1]);
  for (const hash of hashes) expect((await redis.hget(hash, 't'))?.split(' ')[0]).toBe('60000');
});

it('an error other than an unknown script reaches the caller as it is', async () => {
  await expect(redis.admit(1, `${prefix}:rate`, 'not-a-time', 'r')).rejects.toThrow(/ERR/);
});
