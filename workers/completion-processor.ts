import type { Job } from 'bullmq';
import type { Logger } from 'pino';
import type { CompletionBatch, CompletionJob } from '../src/queue/completion-job.ts';
import type { Cancellations } from './cancellations.ts';
import type { RedisKeys } from '../src/redis/keys.ts';
import type { ScriptedRedis } from '../src/redis/scripts.ts';
import type { ProviderRegistry } from '../src/providers/registry.ts';
import type { ProviderTarget } from '../src/providers/types.ts';
import type { CatalogModel } from '../src/catalog/schema.ts';
import type { Outbox } from '../src/outbox/outbox.ts';
import type { UsageStatus } from '../src/store/repository.ts';
import { ClientClosedRequestError, ProviderFailedError, type GatewayError } from '../src/errors/gateway-error.ts';
import { EventPublisher, readEventLog, type EventLogState, type RequestEnding } from './publish.ts';
import { toClientError } from './upstream-failure.ts';
import { runCompletion, runStream, usageOf, type RunContext, type RunTrace } from './run-completion.ts';
import { buildUsageRecord } from './usage-record.ts';
import { backoffDelay, type RetryPolicy } from './retry.ts';
import { isUpstreamError } from '../src/providers/shared/upstream-error.ts';
import type { BudgetLedger } from '../src/budget/budget-ledger.ts';
import { IDEMPOTENCY_TTL_MS } from '../src/chat/idempotency-step.ts';
import { retryUnavailable } from '../src/redis/retry-unavailable.ts';

/** What the processor needs, built once by the worker's composition root. */
export interface ProcessorDeps {
  redis: ScriptedRedis;
  keys: RedisKeys;
  targets: ReadonlyMap<string, ProviderTarget>;
  models: Readonly<Record<string, CatalogModel>>;
  providers: ProviderRegistry;
  policy: RetryPolicy;
  eventsTtlMs: number;
  /** Lifetime of a finished request's events: long enough for gap repair and for a stalled job's re-run to see it finished. */
  finishedEventsTtlMs: number;
  outbox: Outbox;
  ledger: BudgetLedger;
  /** Cancellations of single requests, which may come before their job starts. */
  cancellations: Cancellations;
  log: Logger;
}

/** How a run ended: a final event, or the error that ends the request's events (a cancelled one's is never read). */
type Ending = { status: UsageStatus; error: null; final: { type: 'result' | 'done'; payload: string } } | { status: UsageStatus; error: GatewayError; final: null };

/**
 * Queues the usage record, then ends the request: its last event, the settlement and the
 * idempotency claim in one call. The record is in the outbox before the client can see the
 * answer, so a job that dies in between is re-run rather than left unrecorded. Each write is
 * retried while Redis is unreachable: the upstream has answered, and a master away for a few
 * seconds must not lose the record, the settlement or the answer.
 */
async function finish(deps: ProcessorDeps, ctx: { data: CompletionJob; trace: RunTrace; startedAt: number; publisher: EventPublisher }, ending: Ending): Promise<void> {
  const produced = ctx.trace.text !== '' || ctx.trace.reported !== null;
  const usage = produced ? usageOf(ctx.data, ctx.trace) : null;
  // A cancelled request's error is never read; its record says only that it was cancelled.
  const errorCode = ending.status === 'cancelled' ? null : (ending.error?.code ?? null);
  const record = buildUsageRecord(ctx.data, ctx.trace, { status: ending.status, errorCode, usage, startedAt: ctx.startedAt, endedAt: Date.now() }, deps.models);
  const claim = ctx.data.idempotencyKey;
  const requestEnding: RequestEnding = {
    outbox: deps.outbox.entry(record.tenantId, { kind: 'usage', record }),
    settlement: deps.ledger.settlement(record.tenantId, record.requestId, ctx.data.budgetKeys, record.costMicros),
    // A charged or successful request keeps its key (retries replay it); an uncharged failure frees it for a retry.
    claim: claim ? { key: claim, action: record.status === 'succeeded' || record.costMicros > 0 ? 'complete' : 'release' } : null,
  };
  if (ending.final) await ctx.publisher.finish(ending.final.type, ending.final.payload, requestEnding);
  else await ctx.publisher.finishWithError(ending.error, requestEnding);
  deps.log.info({ requestId: record.requestId, tenantId: record.tenantId, model: record.model, status: record.status, errorCode: record.errorCode, totalTokens: record.totalTokens, usageSource: record.usageSource, costMicros: record.costMicros, queueWaitMs: record.queueWaitMs, latencyMs: record.latencyMs }, 'completion finished');
}

/** The client's error for a failed run, logged; a provider refusing our key is logged as the operator's problem it is. */
function failure(deps: ProcessorDeps, data: CompletionJob, trace: RunTrace, error: unknown): GatewayError {
  const attempts = Math.max(1, trace.attempts);
  const model = trace.target?.alias ?? data.candidates[0] ?? data.requestedModel;
  const clientError = toClientError(error, { attempts, model, fallbackRetryAfterMs: backoffDelay(deps.policy, attempts, () => 0) });
  if (isUpstreamError(error) && error.kind === 'unauthorized') {
    deps.log.error({ err: error, requestId: data.requestId, model }, `the provider of '${model}' refused the gateway's key (HTTP ${error.status}): check the model's api_key_env`);
  } else {
    deps.log.warn({ err: error, requestId: data.requestId, code: clientError.code }, 'completion failed');
  }
  return clientError;
}

/** A re-run of a stream whose first run died after chunks reached the client: end it, and record what was sent. */
async function endInterrupted(deps: ProcessorDeps, data: CompletionJob, publisher: EventPublisher, log: EventLogState): Promise<void> {
  const target = (log.streamedModel && deps.targets.get(log.streamedModel)) || null;
  const trace: RunTrace = { target, attempts: 1, text: log.streamedText, reported: null, firstChunkAt: null };
  // For the client the provider call broke off, like any other mid-stream failure: 502, a retry is its to decide.
  const error = new ProviderFailedError('The stream was interrupted: the worker relaying it stopped mid-stream, and the partial output cannot be continued.');
  await finish(deps, { data, trace, startedAt: Date.now(), publisher }, { status: 'failed', error, final: null });
}

/**
 * One request of a job. BullMQ is at-least-once, so a job whose worker died runs again: the
 * re-run continues the sequence numbers, does nothing when the first run finished, and ends a
 * stream that already reached the client with an error instead of repeating it. A request
 * cancelled before it started ends at once, as cancelled, without calling the upstream.
 */
async function runRequest(deps: ProcessorDeps, data: CompletionJob, rerun: boolean, signal: AbortSignal): Promise<void> {
  const log = rerun ? await readEventLog(deps.redis, deps.keys, data.tenantId, data.requestId) : null;
  if (log?.finished) return;
  // An idempotent request's events are its stored response: they live as long as its key. Other
  // requests' events only serve gap repair, which needs them until shortly after the last one.
  const ttlMs = data.idempotencyKey ? IDEMPOTENCY_TTL_MS : deps.eventsTtlMs;
  const finalTtlMs = data.idempotencyKey ? IDEMPOTENCY_TTL_MS : deps.finishedEventsTtlMs;
  const publisher = new EventPublisher({ redis: deps.redis, keys: deps.keys, tenantId: data.tenantId, requestId: data.requestId, channel: data.replyChannel, ttlMs, finalTtlMs, lastSeq: log?.lastSeq ?? 0 });
  if (log?.sentChunks) return endInterrupted(deps, data, publisher, log);
  const trace: RunTrace = { target: null, attempts: 0, text: '', reported: null, firstChunkAt: null };
  const ctx: RunContext = { data, deps, publisher, signal, startedAt: Date.now(), trace };
  let ending: Ending;
  try {
    if (signal.aborted) throw signal.reason;
    const final = data.stream ? await runStream(ctx) : await runCompletion(ctx);
    ending = { status: 'succeeded', error: null, final };
  } catch (error) {
    if (signal.aborted) {
      ending = { status: 'cancelled', error: new ClientClosedRequestError(), final: null };
    } else {
      ending = { status: 'failed', error: failure(deps, data, trace, error), final: null };
    }
  }
  await finish(deps, ctx, ending);
}

/**
 * The BullMQ processor for completion jobs: every request of the job at once, each with its
 * own signal (its client may go away alone). It must declare three parameters: BullMQ passes
 * the cancellation signal only to processors whose `length` is at least 3.
 */
export function createCompletionProcessor(deps: ProcessorDeps) {
  return async (job: Job<CompletionBatch>, _token: string | undefined, signal: AbortSignal | undefined): Promise<void> => {
    if (!signal) throw new Error('BullMQ passed no abort signal; cancellation would not reach the upstream call');
    const rerun = job.attemptsStarted > 1;
    const { requests } = job.data;
    // A request of a shared job whose client left while the job waited is marked on its shard (a job of one is removed instead).
    if (requests.length > 1) {
      // Unreadable marks must not fail the whole job: the broadcast still reaches a running request.
      const marks = await deps.redis.zmscore(deps.keys.cancelled(deps.keys.shardOf(requests[0]!.tenantId)), ...requests.map((data) => data.requestId)).catch((error: unknown) => {
        deps.log.warn({ err: error, jobId: job.id }, 'reading the cancellation marks failed; running every request of the job');
        return [];
      });
      for (const [i, data] of requests.entries()) if (marks[i] !== null && marks[i] !== undefined) deps.cancellations.cancel(data.requestId);
    }
    const runs = requests.map(async (data) => {
      try {
        await runRequest(deps, data, rerun, deps.cancellations.start(data.requestId, signal));
      } finally {
        deps.cancellations.end(data.requestId);
      }
    });
    // Every request runs to its end before the job does; then the first failure fails the job.
    const failed = (await Promise.allSettled(runs)).find((run) => run.status === 'rejected');
    if (failed) throw failed.reason;
  };
}
