/**
 * The operation seam, worker half: how a job of each operation runs. The worker's job processor
 * (job-processor.ts) does what every operation shares (re-runs, cancellation, the usage record,
 * settlement, the last event); a runner calls the providers and emits the events in its client's
 * dialect.
 */
import type { ProviderRegistry } from '../providers/registry.ts';
import type { ProviderTarget } from '../providers/types.ts';
import type { JobCommon } from '../infra/queue/job.ts';
import type { Usage } from '../wire/openai-chat.ts';
import type { ResolvedUsage } from './usage.ts';
import type { KeptAnswer } from '../infra/responses/kept-answer.ts';

/** The outcome of a call that succeeded on some candidate. */
export interface CallOutcome<T> {
  value: T;
  target: ProviderTarget;
}

/** What a run learned, successful or not: what the usage record is made of. */
export interface RunTrace {
  /** The candidate tried last (the one that answered, on success). */
  target: ProviderTarget | null;
  attempts: number;
  /** What the model produced so far, as countable text; for streams, what reached the client. */
  text: string;
  /** The provider's own counts, in OpenAI's terms. */
  reported: Usage | null;
  firstChunkAt: number | null;
}

/** One request's run: its job, the worker's providers, its abort signal and trace. */
export interface RunContext<Job extends JobCommon = JobCommon> {
  readonly data: Job;
  readonly providers: ProviderRegistry;
  readonly signal: AbortSignal;
  readonly trace: RunTrace;
  /**
   * Calls the job's candidates in order, each with the worker's retries, within the request's
   * retry budget (`timeoutMs`: what is left of it); `mayRetry` is asked before each retry.
   */
  attempt<T>(call: (target: ProviderTarget, timeoutMs: number) => Promise<T>, mayRetry: () => boolean): Promise<CallOutcome<T>>;
  /**
   * Sends streamed events, each exactly as the client reads it; several sent in one call are one
   * chunk (one stream entry, one sequence number). Nothing is sent for none.
   */
  emit(...payloads: string[]): void;
  /** The usage so far: the provider's counts, else the tokenizer's. */
  usage(): ResolvedUsage;
}

/** The event that ends a successful run: the whole answer (`result`), or the end of a stream (`done`). */
export interface FinalEvent {
  type: 'result' | 'done';
  payload: string;
  /** The whole answer as an object, for an operation that keeps it (a stream's is not in its last event). */
  answer?: Record<string, unknown>;
}

/** How a request ended, for what is kept of it. */
export interface RunEnding {
  status: 'succeeded' | 'failed' | 'cancelled';
  /** A successful run's final event. */
  final: FinalEvent | null;
  /** A failed run's error, as its client reads it. */
  error: { code: string; message: string } | null;
  usage: ResolvedUsage | null;
}

/** What an event already sent carried, for a re-run that must end an interrupted stream. */
export interface SentChunk {
  /** Its countable text. */
  text: string;
  /** The catalog alias that produced it, when the event says. */
  model: string | null;
}

/** One operation as the worker runs it. */
export interface OperationRunner<Job extends JobCommon> {
  run(ctx: RunContext<Job>): Promise<FinalEvent>;
  /** The prompt's tokens by the tokenizer, for a provider that reports none. */
  countPrompt(data: Job): number;
  /** What one of its streamed events (one of a chunk's) carried. */
  readChunk(payload: string): SentChunk;
  /** What is kept of the answer, however the run ended; null (or no method): nothing is. */
  keep?(data: Job, ending: RunEnding): KeptAnswer | null;
}
