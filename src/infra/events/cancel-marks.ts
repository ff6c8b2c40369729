/**
 * Cancellation across processes. A job of one request is removed from the queue when its client
 * leaves; a request that shares its job with others cannot be, so it is marked on its shard (a
 * sorted set of request ids) for a worker that takes the job later, and every worker is told on
 * the cancel channel, for one that runs it now (src/infra/events/cancel-listener.ts).
 */
import type { RedisClient } from '../redis/connections.ts';
import type { RedisKeys } from '../redis/keys.ts';

/** Marks the request cancelled (when it shares its job) and tells the workers; marks older than `maxAgeMs` are dropped. */
export async function publishCancellation(
  commands: RedisClient,
  keys: RedisKeys,
  request: { shard: number; requestId: string; sharesJob: boolean },
  maxAgeMs: number,
): Promise<void> {
  const marks = keys.cancelled(request.shard);
  const now = Date.now();
  await Promise.all([
    request.sharesJob ? commands.zadd(marks, now, request.requestId) : null,
    request.sharesJob ? commands.zremrangebyscore(marks, '-inf', now - maxAgeMs) : null,
    commands.publish(keys.cancelChannel, request.requestId),
  ]);
}

/** The requests of a shared job (one shard's) that were cancelled while it waited. */
export async function cancelledWhileQueued(
  redis: RedisClient,
  keys: RedisKeys,
  requests: ReadonlyArray<{ tenantId: string; requestId: string }>,
): Promise<string[]> {
  const first = requests[0];
  if (!first || requests.length === 1) return [];
  const marks = await redis.zmscore(keys.cancelled(keys.shardOf(first.tenantId)), ...requests.map((request) => request.requestId));
  return requests.filter((_, i) => marks[i] !== null && marks[i] !== undefined).map((request) => request.requestId);
}
