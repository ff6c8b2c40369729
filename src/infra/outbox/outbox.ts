import type { RedisClient } from '../redis/connections.ts';
import type { AuditEventInput, UsageRecord } from '../store/repository.ts';
import type { RedisKeys } from '../redis/keys.ts';

/** What goes through the outbox to the store. */
export type OutboxRecord = { kind: 'usage'; record: UsageRecord } | { kind: 'audit'; event: AuditEventInput };

/** One line of JSON per record; dates as ISO strings. */
export function encodeOutboxRecord(record: OutboxRecord): string {
  return JSON.stringify(record);
}

// A record queued by a gateway older than the token details or the operations has none; the store wants them.
const OLDER_RECORD_DEFAULTS = { operation: 'chat', cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 } as const;

/** Parses a record written by encodeOutboxRecord, reviving its dates. */
export function decodeOutboxRecord(text: string): OutboxRecord {
  const parsed = JSON.parse(text) as OutboxRecord;
  if (parsed.kind === 'usage') parsed.record = { ...OLDER_RECORD_DEFAULTS, ...parsed.record, createdAt: new Date(parsed.record.createdAt) };
  else if (parsed.kind === 'audit') parsed.event.createdAt = new Date(parsed.event.createdAt);
  else throw new Error(`unknown outbox record kind '${String((parsed as { kind: unknown }).kind)}'`);
  return parsed;
}

/**
 * The write side of the outbox: usage records and audit events go to a Redis list first,
 * so that a store outage delays them instead of losing them (DESIGN.md, Storage).
 */
export class Outbox {
  readonly #redis: RedisClient;
  readonly #keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.#redis = redis;
    this.#keys = keys;
  }

  /** Queues a tenant's record for the store on its queue shard's outbox (one hot list per shard, not one in all). */
  async push(tenantId: string, record: OutboxRecord): Promise<void> {
    const { key, record: text } = this.entry(tenantId, record);
    await this.#redis.lpush(key, text);
  }

  /** Where and as what `push` queues a record, for a script that queues it with other writes. */
  entry(tenantId: string, record: OutboxRecord): { key: string; record: string } {
    return { key: this.#keys.outboxItems(this.#keys.shardOf(tenantId)), record: encodeOutboxRecord(record) };
  }
}
