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
  /** Records waiting to be written to the store (a list: producers LPUSH, drainers take from the right). */
  readonly outboxItems: string;
  /** Records a drainer has taken and not yet acknowledged (a sorted set scored by the time taken). */
  readonly outboxLeases: string;
  /** Pub/sub channel announcing a prompt activation (`<tenant>\n<name>`), so caches drop it. */
  readonly promptInvalidations: string;
}

/** Builds the key names for one deployment prefix. */
export function createRedisKeys(prefix: string): RedisKeys {
  return Object.freeze({
    queuePrefix: `{${prefix}}`,
    replyChannel: (instanceId: string) => `${prefix}:reply:${instanceId}`,
    cancelChannel: `${prefix}:cancel`,
    events: (requestId: string) => `${prefix}:{${requestId}}:events`,
    outboxItems: `${prefix}:{outbox}:items`,
    outboxLeases: `${prefix}:{outbox}:leases`,
    promptInvalidations: `${prefix}:invalidate:prompts`,
  });
}

/** Name of the BullMQ queue that carries completion jobs. */
export const COMPLETION_QUEUE = 'completions';
