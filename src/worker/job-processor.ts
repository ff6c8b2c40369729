import type { Job } from 'bullmq';
import type { Logger } from 'pino';
import type { JobBatch } from '../infra/queue/job.ts';
import type { RequestJob } from '../operations/index.ts';
import type { Operation } from '../operations/operation.ts';
import type { Cancellations } from '../infra/events/cancellations.ts';
import type { RedisKeys } from '../infra/redis/keys.ts';
import type { ScriptedRedis } from '../infra/redis/scripts.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { ProviderTarget } from '../providers/types.ts';
import type { CatalogModel } from '../domain/catalog/schema.ts';
import { webhookOutboxRecord, type Outbox } from '../infra/outbox/outbox.ts';
import type { BatchLineResult, UsageRecord, UsageStatus } from '../infra/store/repository.ts';
import { toEnvelope } from '../errors/to-envelope.ts';
import {
  ClientClosedRequestError,
  ProviderFailedError,
  QueueTimeoutError,
  RequestLostError,
  ResponseLostError,
  type GatewayError,
} from '../errors/gateway-error.ts';
import { EventPublisher, type RequestEnding } from '../infra/events/event-publisher.ts';
import { readEventLog, type EventLogState } from '../infra/events/event-log.ts';
import { cancelledWhileQueued } from '../infra/events/cancel-marks.ts';
import { groupPayloads } from '../infra/events/reply-events.ts';
import { toClientError } from './upstream-failure.ts';
import type { FinalEvent, RunContext, RunTrace } from '../operations/runner.ts';
import { stateEnding, type ResponseStates } from '../infra/responses/response-state.ts';
import type { StateEnding } from '../infra/redis/scripts.ts';
import { liveOf, storedRecordOf, type KeptAnswer } from '../infra/responses/kept-answer.ts';
import { resolveUsage, type ResolvedUsage } from '../operations/usage.ts';
import { callWithRetries } from './call-upstream.ts';
import type { TargetPool } from '../domain/catalog/targets.ts';
import type { DeploymentRouter } from './routing/deployment-router.ts';
import { buildUsageRecord } from './usage-record.ts';
import { keepInCache } from './keep-in-cache.ts';
import { backoffDelay, type RetryPolicy } from './retry.ts';
import { isUpstreamError } from '../providers/shared/upstream-error.ts';
import type { BudgetLedger } from '../domain/budget/budget-ledger.ts';
import { IDEMPOTENCY_TTL_MS } from '../domain/idempotency/idempotency-store.ts';
import type { WorkerMetrics } from '../infra/metrics/worker-metrics.ts';
import type { Tracing } from '../infra/tracing/tracing.ts';
import { inRequestSpan, recordRunOutcome } from '../infra/tracing/request-span.ts';

/** What the processor needs, built once by the worker's composition root. */
export interface ProcessorDeps {
  redis: ScriptedRedis;
  keys: RedisKeys;
  /** Every catalog alias's deployments. */
  pools: ReadonlyMap<string, TargetPool>;
  /** Picks a deployment for each attempt and counts how it ended in the deployment's breaker. */
  router: DeploymentRouter;
  models: Readonly<Record<string, CatalogModel>>;
  providers: ProviderRegistry;
  /** The operations it runs, by job kind (src/operations/index.ts lists the gateway's). */
  operations: ReadonlyMap<string, Operation>;
  policy: RetryPolicy;
  eventsTtlMs: number;
  /** Lifetime of a finished request's events: long enough for gap repair and for a stalled job's re-run to see it finished. */
  finishedEventsTtlMs: number;
  outbox: Outbox;
  ledger: BudgetLedger;
  /** The live state of kept responses (background and stored ones). */
  states: ResponseStates;
  /** How long Redis keeps a finished response: a background one for polling, a stored one until the outbox has carried it to the store. */
  keptTtlMs: { background: number; stored: number };
  /** Cancellations of single requests, which may come before their job starts. */
  cancellations: Cancellations;
  /** Null when the process keeps no metrics (no METRICS_PORT). */
  metrics: WorkerMetrics | null;
  /** Off: requests run with no span. */
  tracing: Tracing;
  /** A batch line's attempt was refused 429 by a deployment (its catalog alias): the batch lane slows down there. */
  onBatchRateLimited?(alias: string, retryAfterMs: number | null): void;
  log: Logger;
}

// Long enough for a finish call repeated after a lost reply to find its own end; nothing else reads a batch line's events.
const BATCH_LINE_EVENTS_TTL_MS = 10_000;

/** How a run ended: a final event, or the error that ends the request's events (a cancelled one's is never read). */
type Ending = { status: UsageStatus; error: null; final: FinalEvent } | { status: UsageStatus; error: GatewayError; final: null };

/**
 * Queues the usage record, then ends the request: its last event, the settlement and the
 * idempotency claim in one call. The record is in the outbox before the client can see the
 * answer, so a job that dies in between is re-run rather than left unrecorded. Each write is
 * retried while Redis is unreachable: the upstream has answered, and a master away for a few
 * seconds must not lose the record, the settlement or the answer.
 */
async function finish(deps: ProcessorDeps, ctx: RequestRun, ending: Ending, lost = false): Promise<void> {
  // An answer costs its prompt even when it produced no text (embeddings, an empty completion); one whose client was
  // told it was lost costs nothing, whatever the upstream produced.
  const produced = !lost && (ending.status === 'succeeded' || ctx.trace.text !== '' || ctx.trace.reported !== null);
  const usage = produced ? ctx.usage() : null;
  // A cancelled request's error is never read; its record says only that it was cancelled.
  const errorCode = ending.status === 'cancelled' ? null : (ending.error?.code ?? null);
  const record = buildUsageRecord(ctx.data, ctx.trace, { status: ending.status, errorCode, usage, startedAt: ctx.startedAt, endedAt: Date.now() }, deps.models);
  if (record.deployment !== null) deps.router.spent(record.deployment, record.totalTokens);
  const claim = ctx.data.idempotencyKey;
  const usageEntry = deps.outbox.entry(record.tenantId, { kind: 'usage', record });
  const records = [usageEntry.record];
  // A batch line's result goes with its usage record: both land, or the line runs again.
  if (ctx.data.batch) records.push(deps.outbox.entry(record.tenantId, { kind: 'batch_result', result: lineResult(ctx.data, ending, record) }).record);
  const kept = lost ? null : (ctx.runner.keep?.(ctx.data, { status: ending.status, final: ending.final, error: ending.error, usage }) ?? null);
  const requestEnding: RequestEnding = {
    outbox: { key: usageEntry.key, records },
    // A batch line's marker is also how its batch knows it ended (line-ends.ts): it keeps the day's lifetime.
    settlement: deps.ledger.settlement(
      record.tenantId,
      record.requestId,
      ctx.data.budgetKeys,
      record.costMicros,
      ctx.data.batch ? undefined : ctx.publisher.finalTtlMs,
    ),
    // A charged or successful request keeps its key (retries replay it); an uncharged failure frees it for a retry.
    claim: claim ? { key: claim, action: !lost && (record.status === 'succeeded' || record.costMicros > 0) ? 'complete' : 'release' } : null,
    state: kept ? keptState(deps, ctx.data, kept) : null,
  };
  if (ending.final && ctx.trace.target) ctx.publisher.route(ctx.trace.target.deployment);
  const ended = ending.final
    ? await ctx.publisher.finish(ending.final.type, ending.final.payload, requestEnding)
    : await ctx.publisher.finishWithError(ending.error, requestEnding, lost);
  // The web answered it "lost with Redis, send it again" while this worker ran it: nothing was written, and it ends
  // as what its client was told, uncharged, its key free for the retry.
  if (ended.lost) return finish(deps, ctx, { status: 'failed', error: new RequestLostError(), final: null }, true);
  deps.metrics?.finished(record);
  recordRunOutcome(deps.tracing, record, ctx.trace.attempts);
  deps.log.info(
    {
      requestId: record.requestId,
      tenantId: record.tenantId,
      model: record.model,
      status: record.status,
      errorCode: record.errorCode,
      totalTokens: record.totalTokens,
      usageSource: record.usageSource,
      costMicros: record.costMicros,
      queueWaitMs: record.queueWaitMs,
      latencyMs: record.latencyMs,
    },
    'completion finished',
  );
}

/** A batch line's result: the body a live request would have been answered, and its tokens. */
function lineResult(data: RequestJob, ending: Ending, record: UsageRecord): BatchLineResult {
  const line = data.batch as NonNullable<RequestJob['batch']>;
  const usage = {
    inputTokens: record.promptTokens,
    cachedTokens: record.cachedTokens,
    outputTokens: record.completionTokens,
    reasoningTokens: record.reasoningTokens,
    totalTokens: record.totalTokens,
  };
  const common = { tenantId: data.tenantId, batchId: line.id, line: line.line, customId: line.customId, requestId: data.requestId, usage };
  if (ending.final) return { ...common, status: 'succeeded', statusCode: 200, body: ending.final.payload };
  return { ...common, status: 'failed', statusCode: ending.error.status, body: JSON.stringify(toEnvelope(ending.error, data.requestId)) };
}

/** What goes to the outbox with the usage record: the response for the store, and a background one's webhook event. */
function keptRecords(deps: ProcessorDeps, data: RequestJob, kept: KeptAnswer): string[] {
  const record = storedRecordOf(data.tenantId, kept, new Date(Date.now() + deps.keptTtlMs.background));
  const records = [deps.outbox.entry(data.tenantId, { kind: 'response', record }).record];
  if (kept.background && kept.status !== 'queued' && kept.status !== 'in_progress')
    records.push(deps.outbox.entry(data.tenantId, webhookOutboxRecord(data.tenantId, `response.${kept.status}`, kept.id)).record);
  return records;
}

/** The kept response's state, and the records written only with it (a response already final, or lost with Redis, gets neither). */
function keptState(deps: ProcessorDeps, data: RequestJob, kept: KeptAnswer): StateEnding {
  const live = liveOf(kept, data.requestId, deps.keys.shardOf(data.tenantId));
  const ttlMs = kept.background ? deps.keptTtlMs.background : deps.keptTtlMs.stored;
  return { ...stateEnding(deps.keys, data.tenantId, kept.id, live, ttlMs), mustExist: kept.background, records: keptRecords(deps, data, kept) };
}

/** The client's error for a failed run, logged; a provider refusing our key is logged as the operator's problem it is. */
function failure(deps: ProcessorDeps, data: RequestJob, trace: RunTrace, error: unknown): GatewayError {
  const attempts = Math.max(1, trace.attempts);
  const model = trace.target?.alias ?? data.candidates[0] ?? data.requestedModel;
  const clientError = toClientError(error, { attempts, model, fallbackRetryAfterMs: backoffDelay(deps.policy, attempts, () => 0) });
  if (isUpstreamError(error) && error.kind === 'unauthorized') {
    deps.log.error(
      { err: error, requestId: data.requestId, model },
      `the provider of '${model}' refused the gateway's key (HTTP ${error.status}): check the model's api_key_env`,
    );
  } else {
    deps.log.warn({ err: error, requestId: data.requestId, code: clientError.code }, 'completion failed');
  }
  return clientError;
}

/** One request as the processor follows it: its job, its publisher and trace, when it started. */
interface RequestRun {
  data: RequestJob;
  runner: Operation['runner'];
  trace: RunTrace;
  startedAt: number;
  publisher: EventPublisher;
  usage(): ResolvedUsage;
  /** What a stream emitted, kept only when its answer goes to the response cache. */
  emitted: string[] | null;
}

/** What the processor runs a request with: its operation's runner, and its span's operation name. */
type RequestOperation = Pick<Operation, 'runner'> & { genAiOperation: string };

/**
 * The operation of a job's kind; jobs queued before there were several are chat completions. A
 * kind this worker does not know (a newer web tier's) fails its request as a failed run does.
 */
function operationOf(deps: ProcessorDeps, data: RequestJob): RequestOperation {
  const kind = data.operation ?? 'chat';
  const operation = deps.operations.get(kind);
  if (operation) return operation;
  const unknown = (): never => {
    throw new Error(`this worker runs no operation of kind '${kind}': are web and worker of the same release?`);
  };
  return { genAiOperation: kind, runner: { run: unknown, countPrompt: unknown, readChunk: unknown } };
}

function requestRun(deps: ProcessorDeps, data: RequestJob, runner: Operation['runner'], publisher: EventPublisher, trace: RunTrace): RequestRun {
  return {
    data,
    runner,
    trace,
    publisher,
    startedAt: Date.now(),
    emitted: data.cache && data.stream ? [] : null,
    usage: () => resolveUsage(trace.reported, () => data.promptTokens ?? runner.countPrompt(data), trace.text),
  };
}

function poolsOf(deps: ProcessorDeps, data: RequestJob): TargetPool[] {
  return data.candidates.map((alias) => {
    const pool = deps.pools.get(alias);
    if (!pool) throw new Error(`catalog alias '${alias}' is unknown to this worker; are web and worker on the same catalog?`);
    return pool;
  });
}

/** The target an interrupted stream is charged to: the deployment its events named, else its alias's first. */
function streamedTarget(deps: ProcessorDeps, log: EventLogState): ProviderTarget | null {
  const targets = (log.streamedModel && deps.pools.get(log.streamedModel)?.targets) || [];
  return targets.find((target) => target.deployment === log.streamedDeployment) ?? targets[0] ?? null;
}

/** One upstream attempt, timed for the metrics whatever its outcome. */
async function timedAttempt<T>(metrics: WorkerMetrics, target: ProviderTarget, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    const value = await call();
    metrics.attempted(target, (performance.now() - started) / 1000, undefined, false);
    return value;
  } catch (error) {
    metrics.attempted(target, (performance.now() - started) / 1000, error, signal.aborted);
    throw error;
  }
}

/** Tells the batch lane of a 429, and passes the outcome on as it was. */
async function slowedOn429<T>(attempt: Promise<T>, target: ProviderTarget, slow: NonNullable<ProcessorDeps['onBatchRateLimited']>): Promise<T> {
  try {
    return await attempt;
  } catch (error) {
    if (isUpstreamError(error) && error.kind === 'rate_limited') slow(target.alias, error.retryAfterMs);
    throw error;
  }
}

/** What a runner works with: the request's run, the providers, and its attempts recorded in the trace. */
function runContext(deps: ProcessorDeps, run: RequestRun, signal: AbortSignal): RunContext {
  const { data, trace } = run;
  return {
    data,
    providers: deps.providers,
    signal,
    trace,
    attempt: (call, mayRetry) => {
      let previous: ProviderTarget | null = null;
      return callWithRetries(
        poolsOf(deps, data),
        deps.router,
        deps.policy,
        signal,
        (target, timeoutMs) => {
          deps.metrics?.attempting(target, previous);
          previous = target;
          trace.target = target;
          trace.attempts++;
          const attempt = deps.metrics ? timedAttempt(deps.metrics, target, signal, () => call(target, timeoutMs)) : call(target, timeoutMs);
          return data.batch && deps.onBatchRateLimited ? slowedOn429(attempt, target, deps.onBatchRateLimited) : attempt;
        },
        mayRetry,
        { pauses: !data.batch, firstTokenAt: () => trace.firstChunkAt },
      );
    },
    emit: (...payloads) => {
      if (payloads.length === 0) return;
      if (trace.target) run.publisher.route(trace.target.deployment);
      run.publisher.emit(groupPayloads(payloads));
      run.emitted?.push(...payloads);
      trace.firstChunkAt ??= Date.now();
    },
    usage: run.usage,
  };
}

/** A re-run of a stream whose first run died after chunks reached the client: end it, and record what was sent. */
async function endInterrupted(deps: ProcessorDeps, run: RequestRun, log: EventLogState): Promise<void> {
  run.trace.target = streamedTarget(deps, log);
  run.trace.text = log.streamedText;
  // For the client the provider call broke off, like any other mid-stream failure: 502, a retry is its to decide.
  const error = new ProviderFailedError('The stream was interrupted: the worker relaying it stopped mid-stream, and the partial output cannot be continued.');
  await finish(deps, run, { status: 'failed', error, final: null });
}

/**
 * A background response is marked running as a worker starts it; one cancelled or deleted while it
 * waited, one whose state is gone (lost with Redis, or deleted longer ago than a tombstone lasts),
 * or one past its deadline, ends without calling the upstream (the ending returned).
 */
async function startBackground(deps: ProcessorDeps, data: RequestJob): Promise<Ending | null> {
  const deadlineAt = data.background?.deadlineAt ?? Infinity;
  const found = data.responseId ? await deps.states.start(data.tenantId, data.responseId) : null;
  if (found === 'cancelled' || found === 'deleted') return { status: 'cancelled', error: new ClientClosedRequestError(), final: null };
  if (found === null) {
    const error = new ResponseLostError('response_lost', 'The gateway no longer holds this background response; it was not run.');
    return { status: 'failed', error, final: null };
  }
  if (Date.now() <= deadlineAt) return null;
  const waitedMs = Math.max(0, deadlineAt - data.enqueuedAt);
  return { status: 'failed', error: new QueueTimeoutError(waitedMs, 1), final: null };
}

/**
 * One request of a job. BullMQ is at-least-once, so a job whose worker died runs again: the
 * re-run continues the sequence numbers, does nothing when the first run finished, and ends a
 * stream that already reached the client with an error instead of repeating it. A request
 * cancelled before it started ends at once, as cancelled, without calling the upstream.
 */
async function runRequest(deps: ProcessorDeps, data: RequestJob, runner: Operation['runner'], rerun: boolean, signal: AbortSignal): Promise<void> {
  const log = rerun ? await readEventLog(deps.redis, deps.keys, data, runner.readChunk) : null;
  if (log?.finished) return;
  // An idempotent request's events are its stored response: they live as long as its key. A
  // background response's are read by whoever resumes its stream, as long as it can be polled.
  // Other requests' events only serve gap repair, which needs them until shortly after the last one.
  const keptMs = data.background ? deps.keptTtlMs.background : 0;
  const ttlMs = Math.max(data.idempotencyKey ? IDEMPOTENCY_TTL_MS : deps.eventsTtlMs, deps.eventsTtlMs + keptMs);
  // A batch line's events have no reader (its end is known by its settlement marker, its answer is in its result): they go soon.
  const finalTtlMs = data.batch ? BATCH_LINE_EVENTS_TTL_MS : Math.max(data.idempotencyKey ? IDEMPOTENCY_TTL_MS : deps.finishedEventsTtlMs, keptMs);
  const publisher = new EventPublisher({
    redis: deps.redis,
    keys: deps.keys,
    tenantId: data.tenantId,
    requestId: data.requestId,
    channel: data.replyChannel,
    ttlMs,
    finalTtlMs,
    lastSeq: log?.lastSeq ?? 0,
  });
  const trace: RunTrace = { target: null, attempts: log?.sentChunks ? 1 : 0, text: '', reported: null, firstChunkAt: null };
  const run = requestRun(deps, data, runner, publisher, trace);
  if (log?.sentChunks) return endInterrupted(deps, run, log);
  const unstarted = data.background ? await startBackground(deps, data) : null;
  if (unstarted) return finish(deps, run, unstarted);
  let ending: Ending;
  try {
    if (signal.aborted) throw signal.reason;
    ending = { status: 'succeeded', error: null, final: await runner.run(runContext(deps, run, signal)) };
  } catch (error) {
    if (signal.aborted) {
      ending = { status: 'cancelled', error: new ClientClosedRequestError(), final: null };
    } else {
      ending = { status: 'failed', error: failure(deps, data, trace, error), final: null };
    }
  }
  await finish(deps, run, ending);
  if (ending.final) {
    const answer = { final: ending.final, emitted: run.emitted ?? [], deployment: trace.target?.deployment ?? null };
    await keepInCache(deps, deps.operations.get(data.operation)?.cache, data, answer);
  }
}

/**
 * Ends the background requests of a job BullMQ gave up on (its worker stopped past the stall limit,
 * or its processor failed before their end was written): as failed, charged for what a stream had
 * sent; one that had ended is left alone.
 */
export function createLostJobHandler(deps: ProcessorDeps) {
  return async (job: Job<JobBatch<RequestJob>> | undefined): Promise<void> => {
    const requests = job?.data.requests.filter((data) => data.background) ?? [];
    await Promise.all(
      requests.map(async (data) => {
        const { runner } = operationOf(deps, data);
        const log = await readEventLog(deps.redis, deps.keys, data, runner.readChunk);
        if (log.finished) return;
        const publisher = new EventPublisher({
          redis: deps.redis,
          keys: deps.keys,
          tenantId: data.tenantId,
          requestId: data.requestId,
          channel: data.replyChannel,
          ttlMs: deps.keptTtlMs.background,
          finalTtlMs: deps.keptTtlMs.background,
          lastSeq: log.lastSeq,
        });
        // What reached a stream's client is charged, as for any stream interrupted.
        const target = streamedTarget(deps, log);
        const trace: RunTrace = { target, attempts: log.sentChunks ? 1 : 0, text: log.streamedText, reported: null, firstChunkAt: null };
        const error = new ResponseLostError('worker_lost', 'The worker running this response stopped and it could not be resumed; send it again.');
        await finish(deps, requestRun(deps, data, runner, publisher, trace), { status: 'failed', error, final: null });
      }),
    );
  };
}

/**
 * Runs one request to its end (`rerun`: it may have run before), as a job's or as a batch line:
 * each with its own signal, which a cancellation of the request aborts as well as `signal`.
 */
export function createRequestRunner(deps: ProcessorDeps) {
  return async (data: RequestJob, rerun: boolean, signal: AbortSignal): Promise<void> => {
    deps.metrics?.runStarted();
    try {
      const requestSignal = deps.cancellations.start(data.requestId, signal);
      const { runner, genAiOperation } = operationOf(deps, data);
      const run = () => runRequest(deps, data, runner, rerun, requestSignal);
      await (deps.tracing.enabled ? inRequestSpan(deps.tracing, data, genAiOperation, run) : run());
    } finally {
      deps.cancellations.end(data.requestId);
      deps.metrics?.runEnded();
    }
  };
}

/**
 * The BullMQ processor of the request queue: every request of the job at once, each with its
 * own signal (its client may go away alone). It must declare three parameters: BullMQ passes
 * the cancellation signal only to processors whose `length` is at least 3.
 */
export function createJobProcessor(deps: ProcessorDeps) {
  const run = createRequestRunner(deps);
  return async (job: Job<JobBatch<RequestJob>>, _token: string | undefined, signal: AbortSignal | undefined): Promise<void> => {
    if (!signal) throw new Error('BullMQ passed no abort signal; cancellation would not reach the upstream call');
    const rerun = job.attemptsStarted > 1;
    const { requests } = job.data;
    // Unreadable marks must not fail the whole job: the broadcast still reaches a running request.
    const cancelled = await cancelledWhileQueued(deps.redis, deps.keys, requests).catch((error: unknown) => {
      deps.log.warn({ err: error, jobId: job.id }, 'reading the cancellation marks failed; running every request of the job');
      return [];
    });
    for (const requestId of cancelled) deps.cancellations.cancel(requestId);
    const runs = requests.map((data) => run(data, rerun, signal));
    // Every request runs to its end before the job does; then the first failure fails the job.
    const failed = (await Promise.allSettled(runs)).find((run) => run.status === 'rejected');
    if (failed) throw failed.reason;
  };
}
