import type { RedisClient } from '../src/redis/connections.ts';
import type { Worker } from 'bullmq';

/**
 * Listens for the web tier's cancellations (a client went away while its job ran) and
 * aborts the job's signal if this process runs it; the processor's undici call then
 * closes the upstream connection. One subscription per worker process.
 */
export async function listenForCancellations(subscriber: RedisClient, channel: string, workers: readonly Worker[]): Promise<() => Promise<void>> {
  subscriber.on('message', (from: string, jobId: string) => {
    if (from !== channel) return;
    // Only the worker of the job's shard runs it; the others find nothing to cancel.
    for (const worker of workers) worker.cancelJob(jobId, 'client disconnected');
  });
  await subscriber.subscribe(channel);
  return async () => {
    await subscriber.unsubscribe(channel).catch(() => undefined);
  };
}
