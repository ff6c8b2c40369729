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

/** Opens a connection and waits until it is ready; connection errors after that go to `onError` (ioredis reconnects). */
export async function connectRedis(url: string, role: ConnectionRole, name: string, onError: (error: Error) => void): Promise<Redis> {
  const redis = new Redis(url, { ...OPTIONS[role], connectionName: name, lazyConnect: true });
  await redis.connect();
  redis.on('error', onError);
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

/**
 * Closes connections politely when Redis answers, and drops them when it does not
 * within `ms`: a process must be able to stop during a Redis outage.
 */
export async function closeRedis(connections: readonly Redis[], ms = 1000): Promise<void> {
  await Promise.all(
    connections.map(async (redis) => {
      await boundedWait(redis.quit(), ms);
      redis.disconnect();
    }),
  );
}

/** Waits for `work`, but not longer than `ms`; its failure is ignored (used while shutting down). */
export async function boundedWait(work: Promise<unknown>, ms = 1000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

// ioredis reports an unreachable server with these messages (and MaxRetriesPerRequestError);
// it has no common class for them.
const UNAVAILABLE = /Stream isn't writeable|Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|max retries per request/i;

/** Whether an error means Redis cannot be reached (a 503 for the client, not a 500). */
export function isRedisUnavailable(error: unknown): boolean {
  return error instanceof Error && (error.name === 'MaxRetriesPerRequestError' || UNAVAILABLE.test(error.message));
}
