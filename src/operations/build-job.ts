import type { Principal } from '../domain/access/roles.ts';
import type { JobCommon, JobPayloadBase } from '../infra/queue/job.ts';
import type { RequestPlan } from './web-operation.ts';
import type { TraceCarrier } from '../infra/tracing/trace-carrier.ts';

/** Where a request came from beyond its body, and what admission left for the worker to finish. */
export interface RequestContext {
  feature: string | null;
  piiFlags: string[];
  /** The Redis key of the request's idempotency claim, which the worker completes or releases. */
  idempotencyKey: string | null;
  /** What the worker needs to settle the budget reservation. */
  budgetKeys: string[];
  /** The trace context of the request's span; undefined when it is not traced. */
  traceContext?: TraceCarrier | undefined;
  /** Where its answer goes in the response cache; undefined when it is not stored. */
  cache?: JobCommon['cache'];
}

/** A request's job before dispatch, which addresses it to the process's reply channel. */
export type UnaddressedJob = Omit<JobCommon, 'replyChannel'> & JobPayloadBase;

/** The job for one validated, resolved, admitted request. */
export function buildJob(
  requestId: string,
  principal: Pick<Principal, 'tenantId' | 'keyId'>,
  payload: JobPayloadBase,
  plan: RequestPlan<unknown>,
  context: RequestContext,
): UnaddressedJob {
  const job: UnaddressedJob = {
    ...payload,
    requestId,
    tenantId: principal.tenantId,
    keyId: principal.keyId,
    requestedModel: plan.requestedModel,
    candidates: plan.candidates.map((model) => model.alias),
    stream: plan.stream,
    enqueuedAt: Date.now(),
    feature: context.feature,
    prompt: plan.prompt,
    piiFlags: context.piiFlags,
    idempotencyKey: context.idempotencyKey,
    budgetKeys: context.budgetKeys,
  };
  if (plan.promptTokens !== undefined) job.promptTokens = plan.promptTokens;
  if (plan.responseId !== undefined) job.responseId = plan.responseId;
  if (context.traceContext) job.traceContext = context.traceContext;
  if (context.cache) job.cache = context.cache;
  return job;
}
