import type { RedisClient } from '../redis/connections.ts';
import type { Logger } from 'pino';
import type { JobCommon } from './job.ts';
import { errorToPayload, isTerminal, type ReplyEvent } from '../events/reply-events.ts';
import type { ReplyChannel } from '../events/reply-channel.ts';
import type { RedisKeys } from '../redis/keys.ts';
import { type GatewayError, ProviderTimeoutError, QueueTimeoutError, RequestLostError, ServiceUnavailableError } from '../../errors/gateway-error.ts';
import { LOST_MARKER, LOST_MARKER_TTL_MS } from '../redis/scripts.ts';
import { EventQueue, type Dispatch } from '../events/event-queue.ts';
import { publishCancellation } from '../events/cancel-marks.ts';
import type { JobBatcher, QueuedBatch } from './job-batcher.ts';

/** How one job is queued. */
export interface DispatchOptions {
  /** The tenant's outstanding requests, this one included (its queue position). */
  queued: number;
  /** An idempotent request: a client that goes away may resume it, so its job runs to the end. */
  resumable: boolean;
  /** The job was removed before any worker ran it (pickup deadline, or cancelled while waiting): undo what admission reserved. */
  onAbandoned(): void;
}

/** How a background request's job is queued: nobody waits for it, and no deadline of the web tier's applies (its own is in the job). */
export type DetachedOptions = Pick<DispatchOptions, 'queued' | 'onAbandoned'>;

/** Deadlines of the web tier for one request. */
export interface DispatchDeadlines {
  /** A job no worker picked up by then is removed and answered 503. */
  queueDeadlineMs: number;
  /** The whole request, end to end. */
  requestTimeoutMs: number;
}

// How often, and how far apart, a request's job is looked for after a reconnect while Redis still refuses commands.
const RECHECKS = 5;
const RECHECK_DELAY_MS = 200;

function synthetic(error: GatewayError): ReplyEvent {
  return { seq: 0, type: 'error', payload: errorToPayload(error) };
}

/**
 * Enqueues requests' jobs (through the batcher, several to a job under load) and routes
 * their events back to the waiting request through the process's reply channel, enforcing the
 * pickup deadline and the request timeout.
 */
export class RequestDispatcher {
  readonly #batcher: JobBatcher;
  readonly #replies: ReplyChannel;
  readonly #commands: RedisClient;
  readonly #keys: RedisKeys;
  readonly #deadlines: DispatchDeadlines;
  readonly #log: Logger;

  constructor(options: { batcher: JobBatcher; replies: ReplyChannel; commands: RedisClient; keys: RedisKeys; deadlines: DispatchDeadlines; log: Logger }) {
    this.#batcher = options.batcher;
    this.#replies = options.replies;
    this.#commands = options.commands;
    this.#keys = options.keys;
    this.#deadlines = options.deadlines;
    this.#log = options.log;
  }

  /** Enqueues the job; its events arrive in `events` until a terminal one. */
  async dispatch(job: JobCommon, options: DispatchOptions): Promise<Dispatch> {
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
    const subscription = this.#replies.open(
      job.tenantId,
      job.requestId,
      (event) => {
        started = true;
        events.push(event);
        if (isTerminal(event.type)) finish();
      },
      () => once((batch) => this.#onResubscribed(batch, job.tenantId, job.requestId, () => started || finished, subscription.probe, fail)),
    );
    const fail = (error: GatewayError) => {
      if (finished) return;
      events.push(synthetic(error));
      finish();
    };
    const added = this.#batcher.add(job, options.queued, options.onAbandoned);
    // The timers act only on a job that is in Redis; a failed add is answered below. A background
    // request's client only watches it: the job runs on whatever the client does, within its own deadline.
    const once = (then: (batch: QueuedBatch) => Promise<void> | void) => void added.then(then, () => undefined);
    const pickup = job.background
      ? undefined
      : setTimeout(
          () => once((batch) => this.#onPickupDeadline(batch, job.tenantId, job.requestId, () => started || finished, subscription.probe, fail)),
          this.#deadlines.queueDeadlineMs,
        );
    const overall = job.background
      ? undefined
      : setTimeout(() => {
          once((batch) => this.#cancel(batch, job.requestId));
          fail(new ProviderTimeoutError(`The request did not finish within ${this.#deadlines.requestTimeoutMs} ms.`));
        }, this.#deadlines.requestTimeoutMs);
    try {
      await added;
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
        if (!options.resumable && !job.background) once((batch) => this.#cancel(batch, job.requestId));
      },
    };
  }

  /** Queues a background request's job; resolves once it is in Redis. Nothing waits for its events here. */
  async detach(job: JobCommon, options: DetachedOptions): Promise<void> {
    try {
      await this.#batcher.add(job, options.queued, options.onAbandoned);
    } catch (error) {
      this.#log.error({ err: error, requestId: job.requestId }, 'enqueue failed');
      throw new ServiceUnavailableError('The gateway cannot queue requests right now; retry shortly.', 1);
    }
  }

  async #onPickupDeadline(
    batch: QueuedBatch,
    tenantId: string,
    requestId: string,
    heard: () => boolean,
    probe: () => Promise<void>,
    fail: (error: GatewayError) => void,
  ): Promise<void> {
    await probe();
    if (heard()) return;
    // remove() refuses a locked (running) job, so a job a worker just took keeps running.
    if (!(await batch.remove().catch(() => false))) {
      // Not removed: a worker runs it, or it is gone (a Redis that lost its data) or failed, and then nothing will answer.
      const state = await batch.queue.getJobState(batch.jobId).catch(() => null);
      if (state !== 'unknown' && state !== 'failed') return;
      // A job that just finished is gone too, but its events are in the stream by then.
      await probe();
      if (heard()) return;
      // As for a job lost with Redis (#onResubscribed): a worker that still runs it must not charge it.
      if (!(await this.#markLost(tenantId, requestId).catch(() => true))) return;
      this.#log.warn({ requestId, jobId: batch.jobId, state }, 'the job ended or vanished without answering');
      batch.vanished();
    }
    const retryAfter = Math.max(1, Math.ceil(this.#deadlines.queueDeadlineMs / 1000));
    fail(new QueueTimeoutError(this.#deadlines.queueDeadlineMs, retryAfter));
  }

  /**
   * The reply subscription came back after a lost connection. A Redis that restarted without its
   * data has lost the jobs too: a request not yet answered whose job is gone is answered 503 at
   * once rather than at the pickup deadline. A job a worker runs, or one still queued, is waited for.
   */
  async #onResubscribed(
    batch: QueuedBatch,
    tenantId: string,
    requestId: string,
    heard: () => boolean,
    probe: () => Promise<void>,
    fail: (error: GatewayError) => void,
  ): Promise<void> {
    // The commands connection may come back a moment after the subscriber.
    for (let attempt = 0; attempt < RECHECKS; attempt++) {
      if (heard() || batch.removed) return;
      try {
        await probe();
        if (heard()) return;
        const state = await batch.queue.getJobState(batch.jobId);
        if (state !== 'unknown' && state !== 'failed') return;
        // A job that just finished is gone too, but its events are in the stream by then.
        await probe();
        if (heard()) return;
        // A worker may still run it (it took the job before Redis lost it): unless it has settled, the marker tells
        // its settlement that the client was told to send it again, so it charges nothing.
        if (!(await this.#markLost(tenantId, requestId))) continue;
        this.#log.warn({ requestId, jobId: batch.jobId, state }, 'the job was lost with Redis; answering 503');
        batch.vanished();
        fail(new RequestLostError());
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, RECHECK_DELAY_MS * (attempt + 1)));
      }
    }
  }

  /** Marks the request lost (its settled marker, set only if it has not settled); false when it had settled, and its answer is on its way. */
  async #markLost(tenantId: string, requestId: string): Promise<boolean> {
    return (await this.#commands.set(this.#keys.settled(tenantId, requestId), LOST_MARKER, 'PX', LOST_MARKER_TTL_MS, 'NX')) === 'OK';
  }

  /**
   * The client went away: when every request of the job has, the job is removed if still waiting
   * and their admissions undone. Otherwise the request is marked cancelled on its shard, for a
   * worker that takes the job later, and the workers are told, for one that runs it now; that
   * worker stops it and settles it as cancelled.
   */
  async #cancel(batch: QueuedBatch, requestId: string): Promise<void> {
    try {
      if (batch.removed) return;
      // A failed removal still leaves the marks below: the request must not run.
      if (batch.cancel(requestId) && (await batch.remove().catch(() => false))) return;
      await publishCancellation(
        this.#commands,
        this.#keys,
        { shard: batch.shard, requestId, sharesJob: batch.requestIds.length > 1 },
        this.#deadlines.requestTimeoutMs,
      );
    } catch (error) {
      this.#log.warn({ err: error, requestId }, 'cancelling the request failed');
    }
  }
}
