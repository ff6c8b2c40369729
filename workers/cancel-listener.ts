import type { Redis } from 'ioredis';
import type { Worker } from 'bullmq';

/**
 * Listens for the web tier's cancellations (a client went away while its job ran) and
 * aborts the job's signal if this process runs it; the processor's undici call then
 * closes the upstream connection. One subscription per worker process.
 */
export async function listenForCancellations(subscriber: Redis, channel: string, worker: Worker): Promise<() => Promise<void>> {
  subscriber.on('message', (from: string, jobId: string) => {
    if (from === channel) worker.cancelJob(jobId, 'client disconnected');
  });
  await subscriber.subscribe(channel);
  return async () => {
    await subscriber.unsubscribe(channel).catch(() => undefined);
  };
}
