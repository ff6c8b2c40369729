/** A client of the tests' Redis with the gateway's scripts, for a file that runs them directly. */
import { afterAll } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { defineScripts, type ScriptedRedis } from '../../src/infra/redis/scripts.ts';
import { TEST_REDIS_URL } from './gateway-processes.ts';

/** The client and a key prefix of the file's own (`<tag><random>`), whose keys are deleted, and the client closed, when the file ends. */
export function scriptedTestRedis(tag: string): { redis: ScriptedRedis<Redis>; prefix: string } {
  const prefix = `${tag}${randomBytes(4).toString('hex')}`;
  const redis = defineScripts(new Redis(TEST_REDIS_URL));
  afterAll(async () => {
    const found = await redis.keys(`${prefix}:*`);
    if (found.length > 0) await redis.del(...found);
    redis.disconnect();
  });
  return { redis, prefix };
}
