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
  /** Pub/sub channel announcing a change of a tenant's budgets, credits or plan (the tenant id). */
  readonly settingsInvalidations: string;
  /** GCRA bucket of one API key in one dimension (hash: level, at). */
  keyRate(tenantId: string, keyId: string, dimension: 'requests' | 'tokens'): string;
  /** GCRA bucket of a whole tenant in one dimension (hash: level, at). */
  tenantRate(tenantId: string, dimension: 'requests' | 'tokens'): string;
  /** Idempotency claim of one tenant, by the SHA-256 (hex) of the client's key (hash: fingerprint, requestId, state, expiresAt). */
  idempotency(tenantId: string, keyDigest: string): string;
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
  /** Marker that a request's budget was settled (settlement happens once). */
  settled(tenantId: string, requestId: string): string;
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
    settingsInvalidations: `${prefix}:invalidate:settings`,
    keyRate: (tenantId: string, keyId: string, dimension: string) => `${prefix}:{${tenantId}}:rate:key:${keyId}:${dimension}`,
    tenantRate: (tenantId: string, dimension: string) => `${prefix}:{${tenantId}}:rate:tenant:${dimension}`,
    idempotency: (tenantId: string, keyDigest: string) => `${prefix}:{${tenantId}}:idem:${keyDigest}`,
    budgetWindow: (tenantId: string, policyId: string, windowStartMs: number) => `${prefix}:{${tenantId}}:budget:${policyId}:${windowStartMs}`,
    budgetExpiries: (tenantId: string, policyId: string, windowStartMs: number) => `${prefix}:{${tenantId}}:budget-exp:${policyId}:${windowStartMs}`,
    credit: (tenantId: string) => `${prefix}:{${tenantId}}:credit`,
    creditExpiries: (tenantId: string) => `${prefix}:{${tenantId}}:credit-exp`,
    outstanding: (tenantId: string) => `${prefix}:{${tenantId}}:outstanding`,
    settled: (tenantId: string, requestId: string) => `${prefix}:{${tenantId}}:settled:${requestId}`,
  });
}

/** Name of the BullMQ queue that carries completion jobs. */
export const COMPLETION_QUEUE = 'completions';
