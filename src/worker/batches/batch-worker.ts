import { DelayedError, Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { RedisClient } from '../../infra/redis/connections.ts';
import { BATCH_QUEUE, BATCH_STEPS_QUEUE, queueWaitKeys, REQUEST_QUEUE, type RedisKeys } from '../../infra/redis/keys.ts';
import type { BatchJob } from '../../infra/queue/batch-jobs.ts';
import { runSegment, type SegmentDeps } from './run-segment.ts';
import { validateBatch, type ValidateDeps } from './validate-batch.ts';
import { finalizeBatch, type FinalizeDeps } from './finalize-batch.ts';

/** What the batch lane's processor needs. */
export interface BatchWorkerDeps {
  segment: SegmentDeps;
  validate: ValidateDeps;
  finalize: FinalizeDeps;
}

// A segment handed back by a stopping worker waits this long for another.
const HAND_BACK_DELAY_MS = 1_000;

/** The batch lane's processor: a job of each kind to its step (three parameters: BullMQ passes the signal only then). */
export function createBatchProcessor(deps: BatchWorkerDeps) {
  return async (job: Job<BatchJob>, token: string | undefined, signal: AbortSignal | undefined): Promise<void> => {
    const { data } = job;
    if (data.kind === 'validate') return validateBatch(deps.validate, data);
    if (data.kind === 'finalize') return finalizeBatch(deps.finalize, data);
    const rerun = job.attemptsStarted > 1 || data.again === true;
    const end = await runSegment(deps.segment, data, rerun, signal ?? new AbortController().signal);
    if (end === 'done') return;
    // Handed back without spending an attempt: a rolling restart must not use up a segment's retries.
    await job.updateData({ ...data, again: true });
    await job.moveToDelayed(Date.now() + HAND_BACK_DELAY_MS, token);
    throw new DelayedError();
  };
}

/**
 * The batch lane's BullMQ workers, per shard: segments (`segments` at once per process; the lines
 * they run are bounded by the lane's slots, not by this) and the short steps apart.
 */
export function createBatchWorkers(
  processor: ReturnType<typeof createBatchProcessor>,
  options: { connection: RedisClient; keys: RedisKeys; segments: number; steps: number; lockMs: number; log: Logger },
): Array<Worker<BatchJob>> {
  const workers = (queue: string, concurrency: number) =>
    Array.from({ length: options.keys.queueShards }, (_, shard) => {
      const worker = new Worker<BatchJob>(queue, processor, {
        connection: options.connection,
        prefix: options.keys.queuePrefix(shard),
        concurrency,
        lockDuration: options.lockMs,
        stalledInterval: Math.max(1000, Math.floor(options.lockMs / 2)),
        // A segment whose worker died runs again wherever it stalled, however often: its ended lines are skipped.
        maxStalledCount: 1_000,
      });
      worker.on('error', (error) => options.log.error({ err: error, shard }, 'batch worker error'));
      worker.on('failed', (job, error) => options.log.warn({ err: error, jobId: job?.id }, 'a batch lane job failed; it runs again'));
      return worker;
    });
  return [...workers(BATCH_QUEUE, options.segments), ...workers(BATCH_STEPS_QUEUE, options.steps)];
}

/** Whether live requests (plain, or prioritized: a tenant over its share, background responses) of the shard wait: two counts, one round trip. */
export function interactiveWaiting(redis: RedisClient, keys: RedisKeys) {
  return async (shard: number): Promise<boolean> => {
    const { wait, prioritized } = queueWaitKeys(keys, shard, REQUEST_QUEUE);
    const [waiting, ranked] = (await redis.pipeline().llen(wait).zcard(prioritized).exec()) ?? [];
    return Number(waiting?.[1] ?? 0) + Number(ranked?.[1] ?? 0) > 0;
  };
}
