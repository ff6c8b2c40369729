/** Anthropic's MessageBatch object, as every /v1/messages/batches route answers it. */
import type { BatchProgress, StoredBatch } from '../../infra/store/repository.ts';
import { isEnded } from './batch-object.ts';

const rfc3339 = (date: Date | null): string | null => (date === null ? null : date.toISOString());

/** Where a batch stands in Anthropic's words: still running lines, cancelled but some still running, or done. */
function processingStatus(batch: StoredBatch): 'in_progress' | 'canceling' | 'ended' {
  if (isEnded(batch)) return 'ended';
  // A cancelled batch being finalized is still cancelling: it ends once its results file is written.
  return batch.cancellingAt === null ? 'in_progress' : 'canceling';
}

/** When processing ended: the time of the batch's final status. */
function endedAt(batch: StoredBatch): Date | null {
  return batch.completedAt ?? batch.expiredAt ?? batch.cancelledAt ?? batch.failedAt;
}

/**
 * The batch's requests by where they stand. Lines that never ran are all cancelled or all expired,
 * as the batch was: its finalizer gives them their result only once it stopped for one reason.
 * Once it ended, a request without a result never ran either (one cancelled before it was
 * validated has none). A batch that failed validation ran none: its requests all count as errored.
 */
function requestCounts(batch: StoredBatch, progress: BatchProgress, requests: number) {
  if (batch.status === 'failed') return { processing: 0, succeeded: 0, errored: requests, canceled: 0, expired: 0 };
  const waiting = Math.max(0, requests - progress.succeeded - progress.failed);
  const neverRan = progress.neverRan ?? 0;
  const unrun = isEnded(batch) ? neverRan + waiting : neverRan;
  const cancelled = batch.cancellingAt !== null;
  return {
    processing: isEnded(batch) ? 0 : waiting,
    succeeded: progress.succeeded,
    errored: progress.failed - neverRan,
    canceled: cancelled ? unrun : 0,
    expired: cancelled ? 0 : unrun,
  };
}

/**
 * A batch of the `anthropic` dialect as Anthropic's Message Batches API shows it. `requests`: how
 * many it has (its input file's lines while it validates, when `batch.total` is not known yet);
 * `resultsUrl`: where its results are read, given once it ended with its results file written.
 */
export function messageBatchObject(batch: StoredBatch, progress: BatchProgress, requests: number, resultsUrl: string) {
  const ended = isEnded(batch);
  return {
    id: batch.id,
    type: 'message_batch' as const,
    processing_status: processingStatus(batch),
    request_counts: requestCounts(batch, progress, requests),
    ended_at: rfc3339(endedAt(batch)),
    created_at: rfc3339(batch.createdAt) as string,
    expires_at: rfc3339(batch.expiresAt) as string,
    archived_at: null,
    cancel_initiated_at: rfc3339(batch.cancellingAt),
    results_url: ended && batch.outputFileId !== null ? resultsUrl : null,
  };
}

/** Anthropic's answer to a deleted batch. */
export function deletedMessageBatchObject(id: string) {
  return { id, type: 'message_batch_deleted' as const };
}
