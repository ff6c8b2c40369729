/**
 * Every Redis key and channel name the gateway uses, built in one place.
 * Keys that a Lua script touches together share a hash tag, so that on a Redis Cluster
 * every script runs on one slot (DESIGN.md, "Scale-out"): a tenant's keys are `gw:{tenant}:…`,
 * queue shard k's are `{gw:qk}:…`.
 */
export interface RedisKeys {
  /** How many queue shards there are (QUEUE_SHARDS). */
  readonly queueShards: number;
  /** The queue shard that carries a tenant's jobs and outbox records: its fairness and caps stay on one shard. */
  shardOf(tenantId: string): number;
  /** BullMQ prefix of one queue shard: the whole shard lives in one slot. */
  queuePrefix(shard: number): string;
  /** Pub/sub channel of one web process; workers publish a request's events there. */
  replyChannel(instanceId: string): string;
  /** Pub/sub channel on which web processes ask workers to cancel a running request. */
  readonly cancelChannel: string;
  /**
   * Requests of one shard whose clients went away while their job, shared with other requests,
   * waited (sorted set: request id → when): pub/sub reaches only workers listening at that moment.
   */
  cancelled(shard: number): string;
  /** The request's event log (Redis Stream), for gap repair and replay; in its tenant's slot, so its last write joins the settlement. */
  events(tenantId: string, requestId: string): string;
  /** One shard's records waiting to be written to the store (a list: producers LPUSH, drainers take from the right). */
  outboxItems(shard: number): string;
  /** One shard's records a drainer has taken and not yet acknowledged (a sorted set scored by the time taken). */
  outboxLeases(shard: number): string;
  /**
   * The one outbox of gateways from before the queue was sharded (commit 4512ad3 and older):
   * drained too, so that an upgrade loses none of the records left in it.
   */
  readonly legacyOutbox: { items: string; leases: string };
  /** Pub/sub channel announcing a prompt activation (`<tenant>\n<name>`), so caches drop it. */
  readonly promptInvalidations: string;
  /** Pub/sub channel announcing a change of a tenant's budgets, credits or plan (the tenant id). */
  readonly settingsInvalidations: string;
  /** Pub/sub channel announcing a revoked key or a disabled or enabled tenant (the tenant id), so caches drop its keys and status. */
  readonly authInvalidations: string;
  /** One deployment's circuit breaker and pause (hash; see circuit-breaker-1.lua), shared by every worker. */
  breaker(deploymentId: string): string;
  /** Pub/sub channel announcing a breaker's change (`<deployment id>`), so workers read it at once. */
  readonly breakerChanges: string;
  /** One deployment's requests and tokens per minute (hash; see deployment-quota-1.lua), shared by every worker. */
  deploymentQuota(deploymentId: string): string;
  /** What every worker knows of an alias's deployments, for least-busy and latency routing (hash; see routing-share-1.lua). */
  routingShare(alias: string): string;
  /** When a worker last showed itself (ms, written by every worker, with an expiry): /readyz of web reads it. */
  readonly workerHeartbeat: string;
  /** The tenant's GCRA buckets: one hash field for the tenant and one per API key, each holding both dimensions. */
  rate(tenantId: string): string;
  /** Idempotency claim of one tenant, by the SHA-256 (hex) of the client's key (hash: fingerprint, requestId, state, expiresAt). */
  idempotency(tenantId: string, keyDigest: string): string;
  /** Since when (ms) the tenant's slot has kept its idempotency claims: missing after Redis came back empty. */
  idempotencySince(tenantId: string): string;
  /** One window of a budget policy (hash: spent, reserved, r:<requestId>). */
  budgetWindow(tenantId: string, policyId: string, windowStartMs: number): string;
  /** Expiry of each open reservation of that window (sorted set: requestId → ms). */
  budgetExpiries(tenantId: string, policyId: string, windowStartMs: number): string;
  /** The tenant's credit account (hash: balance, reserved, r:<requestId>). */
  credit(tenantId: string): string;
  /** Expiry of each open credit reservation (sorted set: requestId → ms). */
  creditExpiries(tenantId: string): string;
  /** The tenant's outstanding reservations, for the queue cap (sorted set: requestId → expiry ms). */
  outstanding(tenantId: string): string;
  /** One API key's requests admitted and not yet ended, for its concurrency limit (sorted set: requestId → expiry ms). */
  keyInFlight(tenantId: string, keyId: string): string;
  /** Marker that a request's budget was settled (settlement happens once). */
  settled(tenantId: string, requestId: string): string;
  /**
   * The live state of a kept response (a background or stored one; hash: status, body, and what
   * reading it back needs), in its tenant's slot so that the request's last call writes it.
   */
  response(tenantId: string, responseId: string): string;
  /** One answer of the tenant's response cache, by the SHA-256 (hex) of its request (string: the encoded entry). */
  cacheEntry(tenantId: string, digest: string): string;
  /** The tenant's response cache bookkeeping (see cache-store-4.lua): entries by age, by expiry, and their sizes with the total. */
  cacheIndex(tenantId: string): { byAge: string; byExpiry: string; sizes: string };
}

/** FNV-1a, 32 bits: a stable spread of tenant ids over shards, the same in every process. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Builds the key names for one deployment prefix and number of queue shards. */
export function createRedisKeys(prefix: string, queueShards = 1): RedisKeys {
  if (!Number.isSafeInteger(queueShards) || queueShards < 1) throw new RangeError(`invalid number of queue shards: ${queueShards}`);
  const shardTag = (shard: number) => `{${prefix}:q${shard}}`;
  return Object.freeze({
    queueShards,
    shardOf: (tenantId: string) => (queueShards === 1 ? 0 : fnv1a(tenantId) % queueShards),
    queuePrefix: shardTag,
    replyChannel: (instanceId: string) => `${prefix}:reply:${instanceId}`,
    cancelChannel: `${prefix}:cancel`,
    cancelled: (shard: number) => `${shardTag(shard)}:cancelled`,
    events: (tenantId: string, requestId: string) => `${prefix}:{${tenantId}}:ev:${requestId}`,
    outboxItems: (shard: number) => `${shardTag(shard)}:outbox:items`,
    outboxLeases: (shard: number) => `${shardTag(shard)}:outbox:leases`,
    legacyOutbox: { items: `${prefix}:{outbox}:items`, leases: `${prefix}:{outbox}:leases` },
    promptInvalidations: `${prefix}:invalidate:prompts`,
    settingsInvalidations: `${prefix}:invalidate:settings`,
    authInvalidations: `${prefix}:invalidate:auth`,
    breaker: (deploymentId: string) => `${prefix}:breaker:${deploymentId}`,
    breakerChanges: `${prefix}:breaker-changes`,
    deploymentQuota: (deploymentId: string) => `${prefix}:quota:${deploymentId}`,
    routingShare: (alias: string) => `${prefix}:routing:${alias}`,
    workerHeartbeat: `${prefix}:workers:heartbeat`,
    rate: (tenantId: string) => `${prefix}:{${tenantId}}:rate`,
    idempotency: (tenantId: string, keyDigest: string) => `${prefix}:{${tenantId}}:idem:${keyDigest}`,
    idempotencySince: (tenantId: string) => `${prefix}:{${tenantId}}:idem-since`,
    budgetWindow: (tenantId: string, policyId: string, windowStartMs: number) => `${prefix}:{${tenantId}}:budget:${policyId}:${windowStartMs}`,
    budgetExpiries: (tenantId: string, policyId: string, windowStartMs: number) => `${prefix}:{${tenantId}}:budget-exp:${policyId}:${windowStartMs}`,
    credit: (tenantId: string) => `${prefix}:{${tenantId}}:credit`,
    creditExpiries: (tenantId: string) => `${prefix}:{${tenantId}}:credit-exp`,
    outstanding: (tenantId: string) => `${prefix}:{${tenantId}}:outstanding`,
    keyInFlight: (tenantId: string, keyId: string) => `${prefix}:{${tenantId}}:inflight:${keyId}`,
    settled: (tenantId: string, requestId: string) => `${prefix}:{${tenantId}}:settled:${requestId}`,
    response: (tenantId: string, responseId: string) => `${prefix}:{${tenantId}}:resp:${responseId}`,
    cacheEntry: (tenantId: string, digest: string) => `${prefix}:{${tenantId}}:cache:${digest}`,
    cacheIndex: (tenantId: string) => ({
      byAge: `${prefix}:{${tenantId}}:cache-age`,
      byExpiry: `${prefix}:{${tenantId}}:cache-exp`,
      sizes: `${prefix}:{${tenantId}}:cache-size`,
    }),
  });
}

// The name predates every operation but chat; it is part of the queues' Redis keys, so it stays.
/** Name of the BullMQ queue that carries every operation's jobs (one per shard, each under its own prefix). */
export const REQUEST_QUEUE = 'completions';

/** Name of the BullMQ queue of the batch lane's segments (one per shard), apart from live requests. */
export const BATCH_QUEUE = 'batches';

/** Name of the BullMQ queue of a batch's short steps (one per shard): validating and finalizing it. */
export const BATCH_STEPS_QUEUE = 'batch-steps';

/** The keys of a BullMQ queue's list of waiting jobs and its set of prioritized ones (BullMQ's own layout), which the batch lane looks at. */
export function queueWaitKeys(keys: Pick<RedisKeys, 'queuePrefix'>, shard: number, queue: string): { wait: string; prioritized: string } {
  const base = `${keys.queuePrefix(shard)}:${queue}`;
  return { wait: `${base}:wait`, prioritized: `${base}:prioritized` };
}

/**
 * BullMQ appends a few entries per job to each queue's event stream (added, waiting, active,
 * completed) and keeps 10,000 by default. Nothing here reads them (no QueueEvents), so keep
 * few: memory, and the trimming each finished job does, stay small.
 */
export const QUEUE_EVENTS_MAX_LEN = 100;
