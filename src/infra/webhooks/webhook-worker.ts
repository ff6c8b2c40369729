/**
 * The worker side of deliveries: a processor that makes one attempt per run and records it, and
 * the BullMQ workers (one per queue shard, WEBHOOK_CONCURRENCY each) that run it apart from model work.
 */
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { ulid } from 'ulid';
import { auditEvent, type AuditSink } from '../../domain/audit/audit-event.ts';
import type { RedisClient } from '../redis/connections.ts';
import type { RedisKeys } from '../redis/keys.ts';
import type { WebhookEvent } from '../../domain/webhooks/webhook-event.ts';
import type { Repository, WebhookEndpoint } from '../store/repository.ts';
import type { WebhookAttempt } from './webhook-sender.ts';
import { WEBHOOK_QUEUE, webhookBackoff, type WebhookJob } from './webhook-queue.ts';

/** What the processor needs: the store, a way to send (src/infra/webhooks/webhook-sender.ts), the audit log. */
export interface WebhookProcessorDeps {
  repository: Repository;
  send(endpoint: WebhookEndpoint, event: WebhookEvent, signal?: AbortSignal): Promise<WebhookAttempt>;
  audit: AuditSink;
  log: Logger;
}

/** How a run ended, as the job's return value. */
export type WebhookOutcome = 'delivered' | 'skipped' | 'gone';

/** Raised for a failed attempt, so that BullMQ retries it on the schedule (a resend is never retried). */
export class WebhookAttemptFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookAttemptFailedError';
  }
}

/** One attempt of the job's delivery: skipped when its endpoint is gone or disabled; 410 Gone disables the endpoint. */
export function createWebhookProcessor(deps: WebhookProcessorDeps) {
  return async (job: Job<WebhookJob>, _token?: string, signal?: AbortSignal): Promise<WebhookOutcome> => {
    const { tenantId, webhookId, event } = job.data;
    const endpoint = await deps.repository.webhooks.get(tenantId, webhookId);
    if (!endpoint?.enabled) return 'skipped';
    const attempt = job.data.resend ? (await deps.repository.webhooks.lastAttempt(tenantId, webhookId, event.id)) + 1 : job.attemptsMade + 1;
    const result = await deps.send(endpoint, event, signal);
    await deps.repository.webhooks.recordDelivery({ id: `whd_${ulid().toLowerCase()}`, tenantId, webhookId, event, attempt, ...result, createdAt: new Date() });
    if (result.status === 'succeeded') return 'delivered';
    // The receiver says the endpoint is gone for good: stop sending to it rather than retry for days.
    if (result.httpStatus === 410) {
      await disableGone(deps, endpoint, event.id);
      return 'gone';
    }
    const message = `attempt ${attempt} of ${event.id} to ${webhookId} failed: ${result.error ?? 'unknown'}`;
    throw job.data.resend ? new UnrecoverableError(message) : new WebhookAttemptFailedError(message);
  };
}

async function disableGone(deps: WebhookProcessorDeps, endpoint: WebhookEndpoint, eventId: string): Promise<void> {
  await deps.repository.webhooks.update(endpoint.tenantId, endpoint.id, { enabled: false });
  deps.log.info({ tenantId: endpoint.tenantId, webhookId: endpoint.id }, 'webhook endpoint answered 410 Gone; disabled');
  await deps.audit(
    auditEvent({
      tenantId: endpoint.tenantId,
      actor: 'system',
      action: 'webhook.disabled',
      target: endpoint.id,
      outcome: 'success',
      details: { reason: 'gone', http_status: 410, event_id: eventId },
    }),
  );
}

/** What the workers run on. */
export interface WebhookWorkerOptions {
  /** A connection BullMQ duplicates for its blocking reads (the worker process's blocking one). */
  connection: RedisClient;
  keys: RedisKeys;
  concurrency: number;
  retryDelaysMs: readonly number[];
  log: Logger;
}

/** One BullMQ worker per queue shard for the `webhooks` queue; close each with `close()`. */
export function createWebhookWorkers(processor: ReturnType<typeof createWebhookProcessor>, options: WebhookWorkerOptions): Array<Worker<WebhookJob>> {
  return Array.from({ length: options.keys.queueShards }, (_, shard) => {
    const worker = new Worker<WebhookJob, WebhookOutcome>(WEBHOOK_QUEUE, processor, {
      connection: options.connection,
      prefix: options.keys.queuePrefix(shard),
      concurrency: options.concurrency,
      settings: { backoffStrategy: webhookBackoff(options.retryDelaysMs) },
      maxStalledCount: 1,
    });
    worker.on('error', (error) => options.log.error({ err: error, shard }, 'webhook worker error'));
    worker.on('failed', (job, error) => {
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) options.log.warn({ jobId: job.id, err: error }, 'webhook delivery gave up');
    });
    return worker;
  });
}
