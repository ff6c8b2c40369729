import type { RedisClient } from '../redis/connections.ts';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { CompletionJob } from '../queue/completion-job.ts';
import { errorToPayload, isTerminal, type CompletionEvent } from '../queue/completion-events.ts';
import type { ReplyChannel } from '../redis/reply-channel.ts';
import type { RedisKeys } from '../redis/keys.ts';
import { GatewayError, ProviderTimeoutError, QueueTimeoutError, ServiceUnavailableError } from '../errors/gateway-error.ts';
import { EventQueue } from './event-queue.ts';

/** One request in flight: its events, and a way to give it up. */
export interface Dispatch {
  events: EventQueue;
  /** The client went away: remove the waiting job, or abort the running one (a resumable one only stops relaying). */
  cancel(): void;
}

/** How one job is queued. */
export interface DispatchOptions {
  /** The tenant's outstanding requests, this one included (its queue position). */
  queued: number;
  /** An idempotent request: a client that goes away may resume it, so its job runs to the end. */
  resumable: boolean;
  /** The job was removed before any worker ran it (pickup deadline, or cancelled while waiting): undo what admission reserved. */
  onAbandoned(): void;
}

/** Deadlines of the web tier for one request. */
export interface DispatchDeadlines {
  /** A job no worker picked up by then is removed and answered 503. */
  queueDeadlineMs: number;
  /** The whole request, end to end. */
  requestTimeoutMs: number;
}

/** How jobs are queued: a tenant's requests beyond its first `fairShare` outstanding wait behind other tenants'. */
export interface QueueingPolicy {
  fairShare: number;
}

// BullMQ's largest priority (2^21); a queue position beyond it waits with the last.
const MAX_PRIORITY = 2_097_152;

/**
 * BullMQ serves its wait list (plain jobs, FIFO) before any prioritized job, and a plain add
 * costs Redis less. So a request within its tenant's fair share is added plain, and only one
 * beyond it gets its queue position as priority: a tenant's burst then waits behind every
 * other tenant's requests, and fairness costs something only when a tenant is over its share.
 */
export function jobPriority(queued: number, fairShare: number): number | undefined {
  return queued <= fairShare ? undefined : Math.min(queued, MAX_PRIORITY);
}

function synthetic(error: GatewayError): CompletionEvent {
  return { seq: 0, type: 'error', payload: errorToPayload(error) };
}

/**
 * Enqueues completion jobs and routes their events back to the waiting request through
 * the process's reply channel, enforcing the pickup deadline and the request timeout.
 */
export class CompletionDispatcher {
  readonly #queues: ReadonlyArray<Queue<CompletionJob>>;
  readonly #replies: ReplyChannel;
  readonly #commands: RedisClient;
  readonly #keys: RedisKeys;
  readonly #deadlines: DispatchDeadlines;
  readonly #policy: QueueingPolicy;
  readonly #log: Logger;

  constructor(options: { queues: ReadonlyArray<Queue<CompletionJob>>; replies: ReplyChannel; commands: RedisClient; keys: RedisKeys; deadlines: DispatchDeadlines; policy: QueueingPolicy; log: Logger }) {
    this.#queues = options.queues;
    this.#replies = options.replies;
    this.#commands = options.commands;
    this.#keys = options.keys;
    this.#deadlines = options.deadlines;
    this.#policy = options.policy;
    this.#log = options.log;
  }

  /** Enqueues the job; its events arrive in `events` until a terminal one. */
  async dispatch(job: CompletionJob, options: DispatchOptions): Promise<Dispatch> {
    const events = new EventQueue();
    let started = false;
    let finished = false;
    const finish = () => {
      finished = true;
      clearTimeout(pickup);
      clearTimeout(overall);
      subscription.close();
      events.close();
    };
    const queue = this.#queueOf(job.tenantId);
    const subscription = this.#replies.open(job.tenantId, job.requestId, (event) => {
      started = true;
      events.push(event);
      if (isTerminal(event.type)) finish();
    });
    const fail = (error: GatewayError) => {
      if (finished) return;
      events.push(synthetic(error));
      finish();
    };
    const pickup = setTimeout(() => void this.#onPickupDeadline(queue, job.requestId, () => started || finished, subscription.probe, fail, options.onAbandoned), this.#deadlines.queueDeadlineMs);
    const overall = setTimeout(() => {
      this.#cancel(queue, job.requestId, options.onAbandoned);
      fail(new ProviderTimeoutError(`The request did not finish within ${this.#deadlines.requestTimeoutMs} ms.`));
    }, this.#deadlines.requestTimeoutMs);
    try {
      const priority = jobPriority(options.queued, this.#policy.fairShare);
      await queue.add('completion', job, { jobId: job.requestId, ...(priority ? { priority } : {}), removeOnComplete: true, removeOnFail: { age: 3600 } });
    } catch (error) {
      finish();
      this.#log.error({ err: error, requestId: job.requestId }, 'enqueue failed');
      throw new ServiceUnavailableError('The gateway cannot queue requests right now; retry shortly.', 1);
    }
    return {
      events,
      cancel: () => {
        if (finished) return;
        finish();
        if (!options.resumable) this.#cancel(queue, job.requestId, options.onAbandoned);
      },
    };
  }

  /** The tenant's queue shard. */
  #queueOf(tenantId: string): Queue<CompletionJob> {
    const queue = this.#queues[this.#keys.shardOf(tenantId)];
    if (!queue) throw new Error(`no queue for the shard of tenant '${tenantId}'`);
    return queue;
  }

  async #onPickupDeadline(queue: Queue<CompletionJob>, requestId: string, heard: () => boolean, probe: () => Promise<void>, fail: (error: GatewayError) => void, onAbandoned: () => void): Promise<void> {
    await probe();
    if (heard()) return;
    // remove() refuses a locked (running) job, so a job a worker just took keeps running.
    const removed = await queue.remove(requestId).catch(() => 0);
    if (removed === 1) onAbandoned();
    if (removed === 1 && !heard()) {
      const retryAfter = Math.max(1, Math.ceil(this.#deadlines.queueDeadlineMs / 1000));
      fail(new QueueTimeoutError(this.#deadlines.queueDeadlineMs, retryAfter));
    }
  }

  #cancel(queue: Queue<CompletionJob>, requestId: string, onAbandoned: () => void): void {
    void queue
      .remove(requestId)
      .then(async (removed) => {
        if (removed === 1) onAbandoned();
        else await this.#commands.publish(this.#keys.cancelChannel, requestId);
      })
      .catch((error: unknown) => this.#log.warn({ err: error, requestId }, 'cancelling the job failed'));
  }
}
