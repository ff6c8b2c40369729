import type { RedisClient } from '../redis/connections.ts';
import type { Cancellations } from './cancellations.ts';

/**
 * Listens for the web tier's cancellations (a client went away) and hands them to this
 * process's registry, which aborts the request if it runs here (the undici call then closes
 * the upstream connection) or remembers it for when its job starts. One subscription per
 * worker process; every process hears every cancellation, since any may take the job.
 */
export async function listenForCancellations(subscriber: RedisClient, channel: string, cancellations: Cancellations): Promise<() => Promise<void>> {
  subscriber.on('message', (from: string, requestId: string) => {
    if (from === channel) cancellations.cancel(requestId);
  });
  await subscriber.subscribe(channel);
  return async () => {
    await subscriber.unsubscribe(channel).catch(() => undefined);
  };
}
