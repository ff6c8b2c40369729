import { Redis, type RedisOptions } from 'ioredis';

/**
 * How a connection is used decides its options:
 * - `commands`: request-path commands; no offline queue, so a Redis outage fails fast (503) instead of hanging;
 * - `subscriber`: the one pub/sub connection of a process;
 * - `blocking`: BullMQ workers, which require `maxRetriesPerRequest: null`.
 */
export type ConnectionRole = 'commands' | 'subscriber' | 'blocking';

const OPTIONS: Record<ConnectionRole, RedisOptions> = {
  commands: { enableOfflineQueue: false, enableAutoPipelining: true, maxRetriesPerRequest: 1 },
  subscriber: { enableOfflineQueue: true, maxRetriesPerRequest: null },
  blocking: { maxRetriesPerRequest: null },
};

/** Opens a connection and waits until it is ready. */
export async function connectRedis(url: string, role: ConnectionRole, name: string): Promise<Redis> {
  const redis = new Redis(url, { ...OPTIONS[role], connectionName: name, lazyConnect: true });
  await redis.connect();
  return redis;
}

/**
 * Refuses to run on a Redis that may evict keys: an evicted queue or counter key is lost
 * work or lost money (DESIGN.md, BullMQ pitfalls).
 */
export async function assertNoEviction(redis: Redis): Promise<void> {
  const info = await redis.info('memory');
  const policy = /maxmemory_policy:(\S+)/.exec(info)?.[1];
  if (policy && policy !== 'noeviction') {
    throw new Error(`Redis maxmemory-policy is '${policy}'; the gateway needs 'noeviction' (set it with CONFIG SET maxmemory-policy noeviction).`);
  }
}
