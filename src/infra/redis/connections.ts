import { Cluster, Redis, type RedisOptions } from 'ioredis';

/** A connection to one Redis or to a Redis Cluster; every key a command or script names is in one slot. */
export type RedisClient = Redis | Cluster;

/** Where Redis is: one server (REDIS_URL), or a Redis Cluster by its seed nodes (REDIS_CLUSTER_NODES). */
export type RedisTarget = { kind: 'single'; url: string } | { kind: 'cluster'; nodes: ReadonlyArray<{ host: string; port: number }> };

/**
 * How a connection is used decides its options:
 * - `commands`: request-path commands, auto-pipelined; no offline queue, so a Redis outage fails fast (503) instead of hanging;
 * - `queues`: BullMQ's queues (adding, removing, counting jobs), failing fast as `commands` does. BullMQ
 *   defines ~60 scripts on its connection, and ioredis copies every script defined on a connection into
 *   each auto-pipeline it makes (one per event-loop turn that sends anything): on `commands` that copy
 *   cost ~50 µs a turn, a tenth of a completion's CPU;
 * - `subscriber`: the one pub/sub connection of a process;
 * - `blocking`: BullMQ workers, which require `maxRetriesPerRequest: null`.
 */
export type ConnectionRole = 'commands' | 'queues' | 'subscriber' | 'blocking';

const OPTIONS: Record<ConnectionRole, RedisOptions> = {
  commands: { enableOfflineQueue: false, enableAutoPipelining: true, maxRetriesPerRequest: 1 },
  queues: { enableOfflineQueue: false, maxRetriesPerRequest: 1 },
  subscriber: { enableOfflineQueue: true, maxRetriesPerRequest: null },
  blocking: { maxRetriesPerRequest: null },
};

/**
 * Opens a connection and waits until it is ready; connection errors after that go to `onError`
 * (ioredis reconnects). On a cluster, the role's options apply to every node's connection, and
 * sharded pub/sub gets a subscriber per master, so a reply channel's messages stay on its node.
 */
export async function connectRedis(target: RedisTarget, role: ConnectionRole, name: string, onError: (error: Error) => void): Promise<RedisClient> {
  const { enableOfflineQueue, enableAutoPipelining, ...nodeOptions } = OPTIONS[role];
  const redis =
    target.kind === 'single'
      ? new Redis(target.url, { ...OPTIONS[role], connectionName: name, lazyConnect: true })
      : new Cluster([...target.nodes], {
          lazyConnect: true,
          enableOfflineQueue: enableOfflineQueue ?? true,
          enableAutoPipelining: enableAutoPipelining ?? false,
          shardedSubscribers: role === 'subscriber',
          // A restarted master comes back at its address; reconnect to it rather than wait for a MOVED.
          clusterNodeRetryStrategy: (times) => Math.min(100 * times, 2_000),
          redisOptions: { ...nodeOptions, connectionName: name },
        });
  // Listening before connecting: a failed connect would otherwise retry with nobody told.
  redis.on('error', onError);
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  return redis;
}

/**
 * Refuses to run on a Redis that may evict keys: an evicted queue or counter key is lost
 * work or lost money (DESIGN.md, BullMQ pitfalls). On a cluster every master is asked.
 */
export async function assertNoEviction(redis: RedisClient): Promise<void> {
  const servers = redis instanceof Cluster ? redis.nodes('master') : [redis];
  for (const server of servers) {
    const info = await server.info('memory');
    const policy = /maxmemory_policy:(\S+)/.exec(info)?.[1];
    if (policy && policy !== 'noeviction') {
      throw new Error(
        `Redis maxmemory-policy is '${policy}' on ${server.options.host}:${server.options.port}; the gateway needs 'noeviction' (set it with CONFIG SET maxmemory-policy noeviction).`,
      );
    }
  }
}

/**
 * Closes connections politely when Redis answers, and drops them when it does not
 * within `ms`: a process must be able to stop during a Redis outage.
 */
export async function closeRedis(connections: readonly RedisClient[], ms = 1000): Promise<void> {
  await Promise.all(
    connections.map(async (redis) => {
      await boundedWait(redis.quit(), ms);
      redis.disconnect();
    }),
  );
}

/**
 * Waits for `work`, but not longer than `ms`; its failure is ignored (used while shutting down).
 * Resolves with whether it settled in time.
 */
export async function boundedWait(work: Promise<unknown> | undefined, ms = 1000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    (work ?? Promise.resolve()).then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  return settled;
}

// ioredis reports an unreachable server with these messages (and MaxRetriesPerRequestError);
// it has no common class for them. On a cluster, a master that is down or failing over answers
// CLUSTERDOWN or TRYAGAIN, ioredis has no connection for the slot yet ("Cluster isn't ready",
// "Connection is closed."), aborts what was in flight, or gives up after `maxRedirections`
// retries of those ("Too many Cluster redirections"); a master restarted with persistence
// answers LOADING until it has read its data back.
const UNAVAILABLE =
  /Stream isn't writeable|Connection is closed|Command aborted due to connection close|ECONNREFUSED|ECONNRESET|ETIMEDOUT|max retries per request|CLUSTERDOWN|TRYAGAIN|^LOADING |Too many Cluster redirections|Failed to refresh slots cache|None of startup nodes is available|Cluster isn't ready/i;

/** Whether an error means Redis cannot be reached (a 503 for the client, not a 500). */
export function isRedisUnavailable(error: unknown): boolean {
  return error instanceof Error && (error.name === 'MaxRetriesPerRequestError' || UNAVAILABLE.test(error.message));
}
