import { setTimeout as sleep } from 'node:timers/promises';
import { isRedisUnavailable } from './connections.ts';

/** How long `retryUnavailable` keeps trying, and the pauses between tries (each double the last, up to `maxDelayMs`). */
export interface RetryUnavailableOptions {
  totalMs: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

// A restarted master answers again within seconds, and a failover with replicas takes about
// cluster-node-timeout plus an election; 15 s covers both without holding a job for long.
const DEFAULTS: RetryUnavailableOptions = { totalMs: 15_000, firstDelayMs: 100, maxDelayMs: 1_000 };

/**
 * Runs `step`, and runs it again while it fails because Redis cannot be reached, for a bounded
 * time; any other failure, or the last one, is thrown. `step` must be safe to repeat: when a
 * connection drops, a command may have run without its reply arriving.
 */
export async function retryUnavailable<T>(step: () => Promise<T>, options: RetryUnavailableOptions = DEFAULTS): Promise<T> {
  const deadline = Date.now() + options.totalMs;
  for (let delay = options.firstDelayMs; ; delay = Math.min(2 * delay, options.maxDelayMs)) {
    try {
      return await step();
    } catch (error) {
      if (!isRedisUnavailable(error) || Date.now() + delay > deadline) throw error;
      await sleep(delay);
    }
  }
}
