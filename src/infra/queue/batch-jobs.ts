import { Queue, type JobsOptions } from 'bullmq';
import type { RedisClient } from '../redis/connections.ts';
import { BATCH_QUEUE, BATCH_STEPS_QUEUE, type RedisKeys } from '../redis/keys.ts';

/**
 * A job of the batch lane: validate a batch's input, run one segment of its lines, or write its
 * output and error files. Each has an id made of the batch's, so queueing it again while it waits
 * or runs does nothing: the supervisor re-queues whatever Redis lost without ever doubling it.
 * A segment queued `again` (by the supervisor) may have run before: its lines that ended are skipped.
 */
export type BatchJob =
  | { kind: 'validate'; tenantId: string; batchId: string }
  | { kind: 'segment'; tenantId: string; batchId: string; segment: number; again?: true }
  | { kind: 'finalize'; tenantId: string; batchId: string };

/** The job's id: BullMQ keeps one job per id. */
export function batchJobId(job: BatchJob): string {
  return job.kind === 'segment' ? `${job.batchId}.s${job.segment}` : `${job.batchId}.${job.kind}`;
}

// A finished job is kept long enough for the supervisor to see it ran (and not queue it again).
const KEEP_DONE_S = 2 * 86_400;

const OPTIONS: JobsOptions = {
  removeOnComplete: { age: KEEP_DONE_S },
  removeOnFail: { age: KEEP_DONE_S },
  // A store outage fails a step; it is tried again, and the supervisor re-queues it after that.
  attempts: 8,
  backoff: { type: 'exponential', delay: 1_000 },
};

/**
 * The batch lane's queues, per shard (a batch's jobs go to its tenant's): segments in one, the
 * short steps (validation, finalizing) in another, so that a cancel or an expiry is finished
 * while segments wait for the lane.
 */
export class BatchQueues {
  readonly #segments: ReadonlyArray<Queue<BatchJob>>;
  readonly #steps: ReadonlyArray<Queue<BatchJob>>;
  readonly #keys: RedisKeys;

  constructor(connection: RedisClient, keys: RedisKeys, onError: (error: Error) => void) {
    this.#keys = keys;
    const queues = (name: string) =>
      Array.from({ length: keys.queueShards }, (_, shard) => {
        const queue = new Queue<BatchJob>(name, { connection, prefix: keys.queuePrefix(shard) });
        queue.on('error', onError);
        return queue;
      });
    this.#segments = queues(BATCH_QUEUE);
    this.#steps = queues(BATCH_STEPS_QUEUE);
  }

  /** Queues the job unless one of its id waits, runs or finished lately. */
  async add(job: BatchJob): Promise<void> {
    await this.#queueOf(job).add(job.kind, job, { ...OPTIONS, jobId: batchJobId(job) });
  }

  /** Runs again, with its attempts afresh, a job that failed for good (its attempts spent while the store was away). */
  async retry(job: BatchJob): Promise<void> {
    const found = await this.#queueOf(job).getJob(batchJobId(job));
    await found?.retry('failed', { resetAttemptsMade: true });
  }

  /** Queues a finished job anew (a segment whose lines' results were lost with Redis, a finalizer that lost a race). */
  async requeue(job: BatchJob): Promise<void> {
    await this.#queueOf(job).remove(batchJobId(job));
    await this.add(job);
  }

  /** Where the job of that id stands; 'unknown' once removed (or lost with Redis). */
  state(job: BatchJob): Promise<string> {
    return this.#queueOf(job).getJobState(batchJobId(job));
  }

  close(): Promise<unknown> {
    return Promise.all([...this.#segments, ...this.#steps].map((queue) => queue.close()));
  }

  #queueOf(job: BatchJob): Queue<BatchJob> {
    const queue = (job.kind === 'segment' ? this.#segments : this.#steps)[this.#keys.shardOf(job.tenantId)];
    if (!queue) throw new Error(`no batch queue for tenant '${job.tenantId}'`);
    return queue;
  }
}
