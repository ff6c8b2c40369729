import type { RedisClient } from './connections.ts';

/**
 * Listens on a cache-invalidation channel with the process's existing subscriber
 * connection (one more channel, not one more connection).
 */
export async function listenForInvalidations(subscriber: RedisClient, channel: string, invalidate: (message: string) => void): Promise<void> {
  subscriber.on('message', (from: string, message: string) => {
    if (from === channel) invalidate(message);
  });
  await subscriber.subscribe(channel);
}
