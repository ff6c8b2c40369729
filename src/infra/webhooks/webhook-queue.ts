/**
 * The durable queue of webhook deliveries: its own BullMQ queue (`webhooks`) on each queue shard,
 * beside the request queue and never in its way. One job per event and endpoint, retried on the
 * schedule of WEBHOOK_RETRY_DELAYS_MS by BullMQ's attempts and a custom backoff.
 */
import { Queue, type BackoffStrategy, type JobsOptions } from 'bullmq';
import type { WebhookEvent } from '../../domain/webhooks/webhook-event.ts';
import type { RedisClient } from '../redis/connections.ts';
import { QUEUE_EVENTS_MAX_LEN, type RedisKeys } from '../redis/keys.ts';
import type { Repository } from '../store/repository.ts';

/** Name of the BullMQ queue of deliveries (one per shard, under the shard's prefix, so a Redis Cluster keeps it in one slot). */
export const WEBHOOK_QUEUE = 'webhooks';

/** The backoff type of a delivery's retries; the strategy (webhookBackoff) reads the schedule. */
export const WEBHOOK_BACKOFF = 'webhook-schedule';

/** What one delivery job carries. */
export interface WebhookJob {
  tenantId: string;
  webhookId: string;
  event: WebhookEvent;
  /** A resend by hand: one attempt, numbered after the event's last one. */
  resend?: true;
}

/** An event for the tenant's endpoints, as the outbox drainer hands it over. */
export interface WebhookOutboxEntry {
  tenantId: string;
  event: WebhookEvent;
}

// A finished job is kept this long so that its id still turns away a redelivered outbox record (leased for 30 s).
const KEEP_DONE_S = 3600;

/** WEBHOOK_RETRY_DELAYS_MS as milliseconds, in order. */
export function parseRetryDelays(text: string): number[] {
  return text.split(',').map((part) => Number(part.trim()));
}

/** The delay before the retry after failed attempt `attemptsMade` (1-based); -1 once the schedule is over. */
export function webhookBackoff(delays: readonly number[]): BackoffStrategy {
  return (attemptsMade) => delays[attemptsMade - 1] ?? -1;
}

/** The job of one event to one endpoint: its id makes a second enqueue of the same pair a no-op while the job is kept. */
export function deliveryJobOptions(event: WebhookEvent, webhookId: string, delays: readonly number[]): JobsOptions {
  return {
    // BullMQ refuses ':' in custom ids; event and endpoint ids are [a-z0-9_].
    jobId: `${event.id}-${webhookId}`,
    attempts: delays.length + 1,
    backoff: { type: WEBHOOK_BACKOFF },
    removeOnComplete: { age: KEEP_DONE_S },
    removeOnFail: { age: KEEP_DONE_S },
  };
}

/** Adds delivery jobs: for an event from the outbox, one per subscribed endpoint; for a resend, one. */
export class WebhookQueue {
  readonly #queues: Array<Queue<WebhookJob>>;
  readonly #keys: RedisKeys;
  readonly #repository: Repository;
  readonly #delays: readonly number[];

  constructor(deps: { connection: RedisClient; keys: RedisKeys; repository: Repository; retryDelaysMs: readonly number[]; onError(error: Error): void }) {
    this.#keys = deps.keys;
    this.#repository = deps.repository;
    this.#delays = deps.retryDelaysMs;
    this.#queues = Array.from({ length: deps.keys.queueShards }, (_, shard) => {
      const queue = new Queue<WebhookJob>(WEBHOOK_QUEUE, {
        connection: deps.connection,
        prefix: deps.keys.queuePrefix(shard),
        streams: { events: { maxLen: QUEUE_EVENTS_MAX_LEN } },
      });
      queue.on('error', deps.onError);
      return queue;
    });
  }

  #queueOf(tenantId: string): Queue<WebhookJob> {
    return this.#queues[this.#keys.shardOf(tenantId)] as Queue<WebhookJob>;
  }

  /** Enqueues each event for every enabled endpoint of its tenant subscribed to its type; returns how many jobs that made. */
  async enqueue(entries: readonly WebhookOutboxEntry[]): Promise<number> {
    // One lookup per tenant and event type of the batch, not per event: most events of a busy
    // drain are one tenant's responses ending, and most tenants have no endpoint at all.
    const groups = new Map<string, WebhookOutboxEntry[]>();
    for (const entry of entries) {
      const key = `${entry.tenantId}\n${entry.event.type}`;
      const group = groups.get(key);
      if (group) group.push(entry);
      else groups.set(key, [entry]);
    }
    let jobs = 0;
    for (const group of groups.values()) {
      const { tenantId, event: first } = group[0] as WebhookOutboxEntry;
      const endpoints = await this.#repository.webhooks.listSubscribed(tenantId, first.type);
      if (endpoints.length === 0) continue;
      await this.#queueOf(tenantId).addBulk(
        group.flatMap(({ event }) =>
          endpoints.map((endpoint) => ({
            name: event.type,
            data: { tenantId, webhookId: endpoint.id, event },
            opts: deliveryJobOptions(event, endpoint.id, this.#delays),
          })),
        ),
      );
      jobs += endpoints.length * group.length;
    }
    return jobs;
  }

  /** Sends the event to the endpoint once more, by hand: one attempt, with the same `webhook-id`. */
  async resend(tenantId: string, webhookId: string, event: WebhookEvent): Promise<void> {
    await this.#queueOf(tenantId).add(
      event.type,
      { tenantId, webhookId, event, resend: true },
      { attempts: 1, removeOnComplete: true, removeOnFail: { age: KEEP_DONE_S } },
    );
  }

  /** The queues, for a board or a test. */
  get queues(): ReadonlyArray<Queue<WebhookJob>> {
    return this.#queues;
  }

  async close(): Promise<void> {
    await Promise.all(this.#queues.map((queue) => queue.close()));
  }
}
