import { claimDigest } from '../domain/idempotency/idempotency-store.ts';
import type { RequestJob } from '../operations/index.ts';
import type { CatalogModel } from '../domain/catalog/schema.ts';
import { costMicros } from '../domain/catalog/pricing.ts';
import type { UsageRecord, UsageStatus } from '../infra/store/repository.ts';
import { tokenFieldsOf } from '../infra/store/usage-fields.ts';
import type { Usage } from '../wire/openai-chat.ts';
import type { ResolvedUsage } from '../operations/usage.ts';
import type { RunTrace } from '../operations/runner.ts';

const NO_USAGE: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

/**
 * The usage record of a job that reached the provider stage. A request that produced
 * nothing (no text, no counts from the provider) records zero tokens and zero cost.
 */
export function buildUsageRecord(
  data: RequestJob,
  trace: RunTrace,
  outcome: { status: UsageStatus; errorCode: string | null; usage: ResolvedUsage | null; startedAt: number; endedAt: number },
  models: Readonly<Record<string, CatalogModel>>,
): UsageRecord {
  const alias = trace.target?.alias ?? data.candidates[0] ?? data.requestedModel;
  const model = models[alias];
  const usage = outcome.usage?.usage ?? NO_USAGE;
  return {
    requestId: data.requestId,
    tenantId: data.tenantId,
    keyId: data.keyId,
    feature: data.feature,
    operation: data.operation,
    requestedModel: data.requestedModel,
    model: alias,
    provider: trace.target?.provider ?? model?.provider ?? 'unknown',
    upstreamModel: trace.target?.upstreamModel ?? model?.upstream_model ?? 'unknown',
    promptName: data.prompt?.name ?? null,
    promptVersion: data.prompt?.version ?? null,
    ...tokenFieldsOf(usage),
    usageSource: outcome.usage?.source ?? 'estimated',
    costMicros: model ? costMicros(model, usage, data.batch ? 'batch' : 'live') : 0,
    status: outcome.status,
    errorCode: outcome.errorCode,
    queueWaitMs: Math.max(0, outcome.startedAt - data.enqueuedAt),
    ttftMs: trace.firstChunkAt === null ? null : trace.firstChunkAt - data.enqueuedAt,
    latencyMs: Math.max(0, outcome.endedAt - data.enqueuedAt),
    stream: data.stream,
    piiFlags: data.piiFlags,
    responseId: data.responseId ?? null,
    batchId: data.batch?.id ?? null,
    customId: data.batch?.customId ?? null,
    deployment: trace.target?.deployment ?? null,
    cacheHit: false,
    idempotencyKey: data.idempotencyKey ? claimDigest(data.idempotencyKey) : null,
    createdAt: new Date(data.enqueuedAt),
  };
}
