/**
 * Whether some worker takes jobs: every worker writes the time into one key, with the window as
 * its expiry, a few times per window; the web tier's /readyz reads it. A worker that stops (or
 * whose event loop is stuck) lets the key expire, so the web reports the queue down within one
 * window of the last worker going away.
 */
import type { RedisClient } from '../redis/connections.ts';
import type { Dependency } from './readiness.ts';

/**
 * Starts a worker's heartbeat; the returned stop ends it. It beats only while `takingJobs` says
 * the worker can take jobs (its BullMQ workers run and their connection is up), not merely while
 * the process lives. A failed write is retried at the next beat.
 */
export function startHeartbeat(redis: RedisClient, key: string, windowMs: number, takingJobs: () => boolean, onError: (error: Error) => void): () => void {
  const beat = () => {
    if (takingJobs()) void redis.set(key, String(Date.now()), 'PX', windowMs).catch(onError);
  };
  beat();
  const timer = setInterval(beat, Math.max(100, Math.floor(windowMs / 3)));
  timer.unref();
  return () => clearInterval(timer);
}

/** The queue as a dependency of the web tier: up while a worker has shown itself within the window. */
export function workerPresence(redis: RedisClient, key: string, windowMs: number): Dependency {
  return {
    name: 'queue',
    required: false,
    async probe() {
      const seen = await lastWorkerBeat(redis, key);
      if (seen === null) throw new Error(`no worker has shown itself in the last ${windowMs / 1000} s`);
      return { worker_seen_ms_ago: Math.max(0, Date.now() - seen) };
    },
  };
}

/** When a worker last showed itself (ms), whichever it was; null when none has within the window. */
export async function lastWorkerBeat(redis: RedisClient, key: string): Promise<number | null> {
  const seen = await redis.get(key);
  return seen === null ? null : Number(seen);
}
