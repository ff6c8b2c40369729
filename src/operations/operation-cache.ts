/**
 * The response cache's seam in an operation: what of its job decides the answer, and how a kept
 * answer is made from a run and replayed as the events a worker would have sent. An operation
 * without one is never cached (`x-cache: bypass`).
 */
import type { CachedAnswer, KeptCacheAnswer } from '../infra/cache/response-cache.ts';
import type { FinalEvent } from './runner.ts';

/** One event of a replay: what a worker would have published, without its sequence number. */
export interface ReplayEvent {
  type: 'chunk' | 'result' | 'done';
  payload: string;
}

/** How an operation's answers are cached. */
export interface OperationCache<Payload> {
  /** What of the job's payload decides the answer: the canonical request of the key, without what does not (`user`, `metadata`). */
  request(payload: Payload): unknown;
  /** The request samples (its temperature is above 0, or the provider's default): cached only when it asks. */
  samples(payload: Payload): boolean;
  /** What to keep of a successful run from its final event and, for a stream, the payloads it emitted; null: nothing. */
  keep(final: FinalEvent, emitted: readonly string[]): KeptCacheAnswer | null;
  /** The events that answer the request from a kept answer, streamed or not, as its worker's would have. */
  replay(cached: CachedAnswer, payload: Payload, job: { requestId: string; stream: boolean }): ReplayEvent[];
}
