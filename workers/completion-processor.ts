import type { Job } from 'bullmq';
import type { Logger } from 'pino';
import type { CompletionJob } from '../src/queue/completion-job.ts';
import type { RedisKeys } from '../src/redis/keys.ts';
import type { ScriptedRedis } from '../src/redis/scripts.ts';
import type { ProviderRegistry } from '../src/providers/registry.ts';
import type { ProviderTarget } from '../src/providers/types.ts';
import { InternalError } from '../src/errors/gateway-error.ts';
import { EventPublisher, readLastSeq } from './publish.ts';
import { CallFailed } from './call-upstream.ts';
import { toClientError } from './upstream-failure.ts';
import { runCompletion, runStream, type RunContext } from './run-completion.ts';
import type { RetryPolicy } from './retry.ts';

/** What the processor needs, built once by the worker's composition root. */
export interface ProcessorDeps {
  redis: ScriptedRedis;
  keys: RedisKeys;
  targets: ReadonlyMap<string, ProviderTarget>;
  providers: ProviderRegistry;
  policy: RetryPolicy;
  eventsTtlMs: number;
  log: Logger;
}

/**
 * Where a job (re)starts. BullMQ is at-least-once: a job whose worker died runs again.
 * A re-run continues the sequence numbers, does nothing when the first run finished,
 * and ends a stream that already reached the client with an error instead of repeating it.
 */
async function resumePoint(deps: ProcessorDeps, job: Job<CompletionJob>): Promise<{ lastSeq: number; action: 'run' | 'skip' | 'interrupted' }> {
  if (job.attemptsStarted <= 1) return { lastSeq: 0, action: 'run' };
  const { lastSeq, sentChunks, finished } = await readLastSeq(deps.redis, deps.keys, job.data.requestId);
  if (finished) return { lastSeq, action: 'skip' };
  return { lastSeq, action: sentChunks ? 'interrupted' : 'run' };
}

/**
 * The BullMQ processor for completion jobs. It must declare three parameters: BullMQ
 * passes the cancellation signal only to processors whose `length` is at least 3.
 */
export function createCompletionProcessor(deps: ProcessorDeps) {
  return async (job: Job<CompletionJob>, _token: string | undefined, signal: AbortSignal | undefined): Promise<void> => {
    if (!signal) throw new Error('BullMQ passed no abort signal; cancellation would not reach the upstream call');
    const data = job.data;
    const log = deps.log.child({ requestId: data.requestId, tenantId: data.tenantId });
    const resume = await resumePoint(deps, job);
    if (resume.action === 'skip') return;
    const publisher = new EventPublisher({ redis: deps.redis, keys: deps.keys, requestId: data.requestId, channel: data.replyChannel, ttlMs: deps.eventsTtlMs, lastSeq: resume.lastSeq });
    if (resume.action === 'interrupted') {
      log.warn('stream interrupted by a worker failure; ending it with an error');
      publisher.emitError(new InternalError('The worker serving this stream stopped mid-stream; the partial output cannot be continued.'));
      return publisher.flush();
    }
    const ctx: RunContext = { data, deps, publisher, signal, startedAt: Date.now() };
    try {
      const outcome = data.stream ? await runStream(ctx) : await runCompletion(ctx);
      log.info({ model: outcome.alias, attempts: outcome.attempts, usage: outcome.usage, usageSource: outcome.usageSource, queueWaitMs: ctx.startedAt - data.enqueuedAt, latencyMs: Date.now() - ctx.startedAt, stream: data.stream }, 'completion finished');
    } catch (error) {
      if (signal.aborted) {
        log.info('completion cancelled by the client');
        return;
      }
      const cause = error instanceof CallFailed ? error.cause : error;
      const clientError = toClientError(cause, error instanceof CallFailed ? error.attempts : 1);
      log.warn({ err: cause, code: clientError.code }, 'completion failed');
      publisher.emitError(clientError);
    }
    await publisher.flush();
  };
}
