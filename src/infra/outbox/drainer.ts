import type { Logger } from 'pino';
import type { Repository, AuditEventInput, BatchLineResult, StoredResponse, UsageRecord } from '../store/repository.ts';
import type { RedisKeys } from '../redis/keys.ts';
import { outboxRelease, outboxTake, type ScriptedRedis } from '../redis/scripts.ts';
import { decodeOutboxRecord } from './outbox.ts';
import type { WebhookOutboxEntry } from '../webhooks/webhook-queue.ts';

/** Where records that are not for the store go. */
export interface OutboxSinks {
  /** Queues each event's deliveries (WebhookQueue.enqueue); idempotent per event and endpoint. */
  webhooks?: (entries: WebhookOutboxEntry[]) => Promise<unknown>;
}

/** Tuning of a drainer; the defaults suit production. */
export interface DrainerOptions {
  batchSize: number;
  /** A record taken and not acknowledged for this long goes back to the outbox. */
  leaseMs: number;
  /** Pause when the outbox is empty. */
  idleMs: number;
  /** Longest pause between attempts while the store is down. */
  maxBackoffMs: number;
}

const LEGACY_CHECK_MS = 10_000;

const DEFAULTS: DrainerOptions = { batchSize: 200, leaseMs: 30_000, idleMs: 100, maxBackoffMs: 5_000 };

/**
 * Moves outbox records into the store: takes a leased batch, writes it (idempotently: usage
 * by request id, audit by event id), then acknowledges it. When the store fails the batch
 * goes back and the drainer backs off; nothing is dropped, and a redelivery is harmless.
 */
export class OutboxDrainer {
  readonly #redis: ScriptedRedis;
  readonly #keys: RedisKeys;
  readonly #repository: Repository;
  readonly #log: Logger;
  readonly #options: DrainerOptions;
  readonly #sinks: OutboxSinks;
  #running: Promise<void> | null = null;
  #legacyDueAt = 0;
  #stopped = false;
  #wake: (() => void) | null = null;

  constructor(redis: ScriptedRedis, keys: RedisKeys, repository: Repository, log: Logger, options: Partial<DrainerOptions> = {}, sinks: OutboxSinks = {}) {
    this.#redis = redis;
    this.#keys = keys;
    this.#repository = repository;
    this.#log = log;
    this.#options = { ...DEFAULTS, ...options };
    this.#sinks = sinks;
  }

  /** Starts draining in the background. */
  start(): void {
    this.#running ??= this.#loop();
  }

  /** Stops after the batch in hand. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#running;
  }

  /** Writes one batch of every shard's outbox; returns how many records it took (0 when all are empty). Throws if the store failed. */
  async drainOnce(): Promise<number> {
    let drained = 0;
    for (let shard = 0; shard < this.#keys.queueShards; shard++) drained += await this.#drain(this.#keys.outboxItems(shard), this.#keys.outboxLeases(shard));
    return drained + (await this.#drainLegacy());
  }

  /**
   * The outbox of gateways from before the queue was sharded fills only during an upgrade: looked
   * at once every LEGACY_CHECK_MS, not on every pass of a busy drainer, and drained while it has records.
   */
  async #drainLegacy(): Promise<number> {
    if (Date.now() < this.#legacyDueAt) return 0;
    const drained = await this.#drain(this.#keys.legacyOutbox.items, this.#keys.legacyOutbox.leases);
    if (drained === 0) this.#legacyDueAt = Date.now() + LEGACY_CHECK_MS;
    return drained;
  }

  async #drain(items: string, leases: string): Promise<number> {
    const taken = await outboxTake(this.#redis, items, leases, this.#options.batchSize, Date.now(), this.#options.leaseMs);
    if (taken.length === 0) return 0;
    try {
      await this.#write(taken);
    } catch (error) {
      await outboxRelease(this.#redis, items, leases, taken);
      throw error;
    }
    await this.#redis.zrem(leases, ...taken);
    return taken.length;
  }

  async #write(taken: string[]): Promise<void> {
    const usage: UsageRecord[] = [];
    const audit: AuditEventInput[] = [];
    const webhooks: WebhookOutboxEntry[] = [];
    const responses: StoredResponse[] = [];
    const results: BatchLineResult[] = [];
    for (const text of taken) {
      try {
        const record = decodeOutboxRecord(text);
        if (record.kind === 'usage') usage.push(record.record);
        else if (record.kind === 'webhook') webhooks.push({ tenantId: record.tenantId, event: record.event });
        else if (record.kind === 'response') responses.push(record.record);
        else if (record.kind === 'batch_result') results.push(record.result);
        else audit.push(record.event);
      } catch (error) {
        this.#log.error({ err: error, record: text.slice(0, 500) }, 'dropping an outbox record that cannot be read');
      }
    }
    if (usage.length > 0) await this.#repository.usage.insertMany(usage);
    if (audit.length > 0) await this.#repository.audit.append(audit);
    // A response is in the store before its webhook event goes out: the receiver may read it there.
    if (responses.length > 0) await this.#repository.responses.put(responses);
    if (results.length > 0) await this.#repository.batches.insertResults(results);
    if (webhooks.length > 0) await this.#enqueueWebhooks(webhooks);
  }

  async #enqueueWebhooks(entries: WebhookOutboxEntry[]): Promise<void> {
    if (this.#sinks.webhooks) await this.#sinks.webhooks(entries);
    else this.#log.error({ events: entries.map((entry) => entry.event.id) }, 'dropping webhook events: this drainer has no webhook queue');
  }

  async #loop(): Promise<void> {
    let failures = 0;
    while (!this.#stopped) {
      let pause = 0;
      try {
        const drained = await this.drainOnce();
        if (failures > 0) this.#log.info({ failures }, 'outbox drains again');
        failures = 0;
        if (drained === 0) pause = this.#options.idleMs;
      } catch (error) {
        failures++;
        pause = Math.min(this.#options.maxBackoffMs, 100 * 2 ** Math.min(failures, 10));
        this.#log.warn({ err: error, failures, retryInMs: pause }, 'outbox write failed; records kept for retry');
      }
      if (pause > 0) await this.#sleep(pause);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
