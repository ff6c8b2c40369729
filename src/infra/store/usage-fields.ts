/** The snake_case form of a usage record: the PostgreSQL columns, the MongoDB fields and the API's names. */
import type { UsageRecord } from './repository.ts';
import type { Usage } from '../../wire/openai-chat.ts';

/** A usage record with snake_case field names. */
export interface UsageFields {
  request_id: string;
  tenant_id: string;
  key_id: string;
  feature: string | null;
  operation: UsageRecord['operation'];
  requested_model: string;
  model: string;
  provider: string;
  upstream_model: string;
  prompt_name: string | null;
  prompt_version: number | null;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  usage_source: UsageRecord['usageSource'];
  cost_micros: number;
  status: UsageRecord['status'];
  error_code: string | null;
  queue_wait_ms: number;
  ttft_ms: number | null;
  latency_ms: number;
  stream: boolean;
  pii_flags: string[];
  response_id: string | null;
  batch_id: string | null;
  custom_id: string | null;
  deployment: string | null;
  cache_hit: boolean;
  idempotency_key: string | null;
  created_at: Date;
}

/** camelCase → snake_case. */
export function toUsageFields(record: UsageRecord): UsageFields {
  return {
    request_id: record.requestId,
    tenant_id: record.tenantId,
    key_id: record.keyId,
    feature: record.feature,
    operation: record.operation,
    requested_model: record.requestedModel,
    model: record.model,
    provider: record.provider,
    upstream_model: record.upstreamModel,
    prompt_name: record.promptName,
    prompt_version: record.promptVersion,
    prompt_tokens: record.promptTokens,
    completion_tokens: record.completionTokens,
    total_tokens: record.totalTokens,
    cached_tokens: record.cachedTokens,
    cache_write_tokens: record.cacheWriteTokens,
    reasoning_tokens: record.reasoningTokens,
    usage_source: record.usageSource,
    cost_micros: record.costMicros,
    status: record.status,
    error_code: record.errorCode,
    queue_wait_ms: record.queueWaitMs,
    ttft_ms: record.ttftMs,
    latency_ms: record.latencyMs,
    stream: record.stream,
    pii_flags: record.piiFlags,
    response_id: record.responseId,
    batch_id: record.batchId,
    custom_id: record.customId,
    deployment: record.deployment,
    cache_hit: record.cacheHit,
    idempotency_key: record.idempotencyKey ?? null,
    created_at: record.createdAt,
  };
}

/** snake_case → camelCase; absent optional fields (MongoDB may omit nulls) become null. */
export function fromUsageFields(fields: UsageFields): UsageRecord {
  return {
    requestId: fields.request_id,
    tenantId: fields.tenant_id,
    keyId: fields.key_id,
    feature: fields.feature ?? null,
    // Records written before operations existed are chat completions.
    operation: fields.operation ?? 'chat',
    requestedModel: fields.requested_model,
    model: fields.model,
    provider: fields.provider,
    upstreamModel: fields.upstream_model,
    promptName: fields.prompt_name ?? null,
    promptVersion: fields.prompt_version ?? null,
    promptTokens: fields.prompt_tokens,
    completionTokens: fields.completion_tokens,
    totalTokens: fields.total_tokens,
    // Records written before these counts existed have none.
    cachedTokens: fields.cached_tokens ?? 0,
    cacheWriteTokens: fields.cache_write_tokens ?? 0,
    reasoningTokens: fields.reasoning_tokens ?? 0,
    usageSource: fields.usage_source,
    costMicros: Number(fields.cost_micros),
    status: fields.status,
    errorCode: fields.error_code ?? null,
    queueWaitMs: fields.queue_wait_ms,
    ttftMs: fields.ttft_ms ?? null,
    latencyMs: fields.latency_ms,
    stream: fields.stream,
    piiFlags: fields.pii_flags,
    // Records written before responses were stored name none.
    responseId: fields.response_id ?? null,
    // Nor do those written before batches existed.
    batchId: fields.batch_id ?? null,
    customId: fields.custom_id ?? null,
    // And those written before deployment pools.
    deployment: fields.deployment ?? null,
    // And those written before the response cache.
    cacheHit: fields.cache_hit ?? false,
    // Only a request that sent an Idempotency-Key has one.
    ...(fields.idempotency_key ? { idempotencyKey: fields.idempotency_key } : {}),
    createdAt: fields.created_at,
  };
}

/** A usage record's token counts, read from the usage an answer reported (details absent: 0). */
export function tokenFieldsOf(
  usage: Usage,
): Pick<UsageRecord, 'promptTokens' | 'completionTokens' | 'totalTokens' | 'cachedTokens' | 'cacheWriteTokens' | 'reasoningTokens'> {
  return {
    promptTokens: usage.prompt_tokens,
    completionTokens: usage.completion_tokens,
    totalTokens: usage.total_tokens,
    cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWriteTokens: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    reasoningTokens: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}
