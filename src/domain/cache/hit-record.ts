import type { CatalogModel } from '../catalog/schema.ts';
import type { UsageRecord } from '../../infra/store/repository.ts';
import { tokenFieldsOf } from '../../infra/store/usage-fields.ts';
import type { CachedAnswer } from '../../infra/cache/response-cache.ts';

/**
 * Who asked for an answer the cache served, what they asked and what the hit costs them (the
 * tenant's price of a hit, or 0): the record's own fields, with the prompt and when it arrived.
 */
export type HitRequest = Pick<
  UsageRecord,
  'requestId' | 'tenantId' | 'keyId' | 'feature' | 'operation' | 'requestedModel' | 'stream' | 'piiFlags' | 'costMicros'
> & {
  prompt: { name: string; version: number } | null;
  /** When the request arrived (ms). */
  receivedAt: number;
};

/**
 * The usage record of a cache hit: the tokens of the answer served (what its client was told),
 * at no upstream cost, since no upstream was called; `cacheHit` tells it apart from the run that made it.
 */
export function hitRecord(request: HitRequest, cached: CachedAnswer, model: CatalogModel | undefined, endedAt: number): UsageRecord {
  const { usage } = cached;
  return {
    requestId: request.requestId,
    tenantId: request.tenantId,
    keyId: request.keyId,
    feature: request.feature,
    operation: request.operation,
    requestedModel: request.requestedModel,
    model: cached.model,
    provider: model?.provider ?? 'unknown',
    upstreamModel: model?.upstream_model ?? 'unknown',
    promptName: request.prompt?.name ?? null,
    promptVersion: request.prompt?.version ?? null,
    ...tokenFieldsOf(usage),
    usageSource: 'provider',
    costMicros: request.costMicros,
    status: 'succeeded',
    errorCode: null,
    queueWaitMs: 0,
    ttftMs: request.stream ? Math.max(0, endedAt - request.receivedAt) : null,
    latencyMs: Math.max(0, endedAt - request.receivedAt),
    stream: request.stream,
    piiFlags: request.piiFlags,
    responseId: null,
    batchId: null,
    customId: null,
    deployment: cached.deployment,
    cacheHit: true,
    createdAt: new Date(request.receivedAt),
  };
}
