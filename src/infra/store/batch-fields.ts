/** What both adapters share about batches: which statuses are active, a list's page, a line's result as stored, and which of a set of results is kept. */
import type { BatchLineResult, BatchStatus, StoredBatch } from './repository.ts';

/** The statuses of a batch not final yet: what the supervisor looks at. */
export const ACTIVE_BATCH_STATUSES = ['validating', 'in_progress', 'finalizing', 'cancelling'] as const satisfies readonly BatchStatus[];

/**
 * A page of a list from the `limit + 1` batches read (one more tells whether there are more),
 * newest first. A page before a batch reads the nearest newer ones oldest first: it is turned round.
 */
export function batchPage(found: StoredBatch[], limit: number, readOldestFirst: boolean): { batches: StoredBatch[]; hasMore: boolean } {
  const shown = found.slice(0, limit);
  return { batches: readOldestFirst ? shown.reverse() : shown, hasMore: found.length > limit };
}

/**
 * The first result of each line, in their order: a line given twice in one call keeps its first,
 * as a line already stored does, whatever order the store happens to insert rows in.
 */
export function firstPerLine(results: readonly BatchLineResult[]): BatchLineResult[] {
  const seen = new Set<string>();
  return results.filter((result) => {
    const key = JSON.stringify([result.batchId, result.line]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A line's result as both stores keep it (a PostgreSQL row, a MongoDB document). */
export interface BatchResultFields {
  tenant_id: string;
  batch_id: string;
  line: number;
  custom_id: string;
  request_id: string;
  status: 'succeeded' | 'failed';
  status_code: number;
  body: string;
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  total_tokens: number;
}

/** The stored fields of a result. */
export function resultFields(result: BatchLineResult): BatchResultFields {
  return {
    tenant_id: result.tenantId,
    batch_id: result.batchId,
    line: result.line,
    custom_id: result.customId,
    request_id: result.requestId,
    status: result.status,
    status_code: result.statusCode,
    body: result.body,
    input_tokens: result.usage.inputTokens,
    cached_tokens: result.usage.cachedTokens,
    output_tokens: result.usage.outputTokens,
    reasoning_tokens: result.usage.reasoningTokens,
    total_tokens: result.usage.totalTokens,
  };
}

/** A result from its stored fields. */
export function resultOf(fields: BatchResultFields): BatchLineResult {
  return {
    tenantId: fields.tenant_id,
    batchId: fields.batch_id,
    line: fields.line,
    customId: fields.custom_id,
    requestId: fields.request_id,
    status: fields.status,
    statusCode: fields.status_code,
    body: fields.body,
    usage: {
      inputTokens: fields.input_tokens,
      cachedTokens: fields.cached_tokens,
      outputTokens: fields.output_tokens,
      reasoningTokens: fields.reasoning_tokens,
      totalTokens: fields.total_tokens,
    },
  };
}
