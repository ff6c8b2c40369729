import type { BatchProgress, BatchStatus, BatchUsage, StoredBatch } from '../../infra/store/repository.ts';

function seconds(date: Date | null): number | null {
  return date === null ? null : Math.floor(date.getTime() / 1000);
}

/** Tokens in the Batch API's `usage` shape. */
function usageObject(usage: BatchUsage) {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.totalTokens,
  };
}

/**
 * A batch as OpenAI's Batch API shows it. `progress`: its results so far, for a batch still
 * running; an ended batch's counts and usage are its own.
 */
export function openAiBatchObject(batch: StoredBatch, progress: BatchProgress) {
  const usage = batch.usage ?? progress.usage;
  return {
    id: batch.id,
    object: 'batch' as const,
    endpoint: batch.endpoint,
    errors: batch.errors.length === 0 ? null : { object: 'list' as const, data: batch.errors },
    input_file_id: batch.inputFileId,
    completion_window: batch.completionWindow,
    status: batch.status,
    output_file_id: batch.outputFileId,
    error_file_id: batch.errorFileId,
    created_at: seconds(batch.createdAt) as number,
    in_progress_at: seconds(batch.inProgressAt),
    expires_at: seconds(batch.expiresAt),
    finalizing_at: seconds(batch.finalizingAt),
    completed_at: seconds(batch.completedAt),
    failed_at: seconds(batch.failedAt),
    expired_at: seconds(batch.expiredAt),
    cancelling_at: seconds(batch.cancellingAt),
    cancelled_at: seconds(batch.cancelledAt),
    request_counts: { total: batch.total, completed: progress.succeeded, failed: progress.failed },
    usage: usageObject(usage),
    metadata: batch.metadata,
  };
}

/** No tokens: a line refused, or never run. */
export const NO_USAGE: BatchUsage = { inputTokens: 0, cachedTokens: 0, outputTokens: 0, reasoningTokens: 0, totalTokens: 0 };

/** Nothing run yet. */
export const NO_PROGRESS: BatchProgress = { succeeded: 0, failed: 0, usage: NO_USAGE };

/** What a batch just created (validating) has not got yet: no lines, no files, no usage, no later timestamp (its empty arrays are its own). */
export const NOT_YET_VALIDATED = {
  total: 0,
  outputFileId: null,
  errorFileId: null,
  usage: null,
  inProgressAt: null,
  finalizingAt: null,
  completedAt: null,
  failedAt: null,
  expiredAt: null,
  cancellingAt: null,
  cancelledAt: null,
} satisfies Partial<StoredBatch>;

/** The statuses of a batch that will change no more. */
export type EndedStatus = Extract<BatchStatus, 'completed' | 'failed' | 'expired' | 'cancelled'>;

/** Whether the batch will change no more. */
export function isEnded<B extends Pick<StoredBatch, 'status'>>(batch: B): batch is B & { status: EndedStatus } {
  return batch.status === 'completed' || batch.status === 'failed' || batch.status === 'expired' || batch.status === 'cancelled';
}
