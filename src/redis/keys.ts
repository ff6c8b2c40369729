/**
 * Every Redis key and channel name the gateway uses, built in one place.
 * Keys that a Lua script touches together share a hash tag, so the layout already
 * works on Redis Cluster (DESIGN.md, "Scale-out").
 */
export interface RedisKeys {
  /** BullMQ prefix: the whole queue lives in one slot. */
  readonly queuePrefix: string;
  /** Pub/sub channel of one web process; workers publish a request's events there. */
  replyChannel(instanceId: string): string;
  /** Pub/sub channel on which web processes ask workers to cancel a running job. */
  readonly cancelChannel: string;
  /** The request's event log (Redis Stream), for gap repair and replay. */
  events(requestId: string): string;
}

/** Builds the key names for one deployment prefix. */
export function createRedisKeys(prefix: string): RedisKeys {
  return Object.freeze({
    queuePrefix: `{${prefix}}`,
    replyChannel: (instanceId: string) => `${prefix}:reply:${instanceId}`,
    cancelChannel: `${prefix}:cancel`,
    events: (requestId: string) => `${prefix}:{${requestId}}:events`,
  });
}

/** Name of the BullMQ queue that carries completion jobs. */
export const COMPLETION_QUEUE = 'completions';
