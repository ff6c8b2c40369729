import type { Principal } from '../auth/roles.ts';
import type { CompletionJob } from '../queue/completion-job.ts';
import type { ChatCompletionRequest } from './request-schema.ts';
import type { ResolvedModel } from './resolve-model.ts';

// Set per upstream call by the worker, or the gateway's own; never forwarded as sent.
const NOT_FORWARDED = new Set(['model', 'stream', 'stream_options']);

/** Where a request came from beyond its body: its feature and the prompt version used. */
export interface RequestContext {
  feature: string | null;
  prompt: { name: string; version: number } | null;
  piiFlags: string[];
  /** The Redis key of the request's idempotency claim, which the worker completes or releases. */
  idempotencyKey: string | null;
  /** What the worker needs to settle the budget reservation. */
  budgetKeys: string[];
}

/** The job for one validated, resolved request. */
export function buildJob(requestId: string, principal: Principal, replyChannel: string, body: ChatCompletionRequest, resolved: ResolvedModel, context: RequestContext): CompletionJob {
  const forwarded: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (!NOT_FORWARDED.has(key) && value !== undefined) forwarded[key] = value;
  // The door validated the body against the same wire schemas (src/chat/request-schema.ts).
  const job: CompletionJob = {
    requestId,
    tenantId: principal.tenantId,
    keyId: principal.keyId,
    replyChannel,
    requestedModel: body.model,
    candidates: resolved.candidates.map((model) => model.alias),
    body: forwarded as CompletionJob['body'],
    stream: body.stream === true,
    includeUsage: body.stream === true && body.stream_options?.include_usage === true,
    enqueuedAt: Date.now(),
    feature: context.feature,
    prompt: context.prompt,
    piiFlags: context.piiFlags,
    idempotencyKey: context.idempotencyKey,
    budgetKeys: context.budgetKeys,
  };
  if (resolved.promptTokens !== undefined) job.promptTokens = resolved.promptTokens;
  return job;
}
