import { webhookOutboxRecord, type Outbox } from '../../infra/outbox/outbox.ts';
import type { BatchQueues } from '../../infra/queue/batch-jobs.ts';
import type { BatchError, BatchRepository, BatchSegment, FileRepository } from '../../infra/store/repository.ts';
import { parseBatchLine, type BodyCheck } from '../../domain/batches/batch-line.ts';
import { LineTooLong, readLines } from '../../domain/batches/read-lines.ts';

/** What validating a batch needs. */
export interface ValidateDeps {
  batches: BatchRepository;
  files: FileRepository;
  queues: Pick<BatchQueues, 'add'>;
  outbox: Outbox;
  /** The endpoint's check of one line's body (its schema, a model the catalog serves). */
  checkBody(endpoint: string): BodyCheck;
  maxLines: number;
  segmentLines: number;
  /** The longest line, as long as a live request's body may be (BODY_LIMIT_BYTES). */
  maxLineBytes: number;
}

// OpenAI reports the first errors of a file, not all of a million bad lines.
const MAX_ERRORS = 100;

/**
 * Reads the whole input once, a chunk at a time, as OpenAI validates a batch: every line parsed and
 * checked, `custom_id`s unique, the lines counted and cut into segments. Any error fails the batch
 * before a line runs (nothing is charged); otherwise it goes in progress and its segments are queued.
 */
export async function validateBatch(deps: ValidateDeps, job: { tenantId: string; batchId: string }): Promise<void> {
  const batch = await deps.batches.get(job.tenantId, job.batchId);
  if (!batch) return;
  if (batch.status === 'in_progress') {
    // Validated before the job died: its segments may not all be queued.
    await Promise.all(batch.segments.map((_, segment) => deps.queues.add({ kind: 'segment', tenantId: batch.tenantId, batchId: batch.id, segment })));
    return;
  }
  // A batch cancelled before its input was read still has its lines counted and cut: each gets its result (batch_cancelled).
  const cancelledUnread = batch.status === 'cancelling' && batch.segments.length === 0;
  if (batch.status !== 'validating' && !cancelledUnread) return;
  const errors: BatchError[] = [];
  const customIds = new Set<string>();
  const segments: BatchSegment[] = [];
  const check = deps.checkBody(batch.endpoint);
  let lines = 0;
  try {
    for await (const { text, offset } of readLines(deps.files.read(batch.tenantId, batch.inputFileId), 0, Infinity, deps.maxLineBytes)) {
      if (lines === deps.maxLines) {
        errors.push({
          code: 'too_many_requests',
          message: `The input file has more than ${deps.maxLines} lines, the most one batch may have.`,
          param: null,
          line: null,
        });
        break;
      }
      if (lines % deps.segmentLines === 0) segments.push({ firstLine: lines, lines: 0, offset });
      (segments[segments.length - 1] as BatchSegment).lines++;
      lines++;
      const parsed = parseBatchLine(text, lines, batch.endpoint, check);
      if ('code' in parsed) errors.push(parsed);
      else if (customIds.has(parsed.customId))
        errors.push({
          code: 'duplicate_custom_id',
          message: `Line ${lines}: the custom_id '${parsed.customId}' is used by an earlier line; each must be unique.`,
          param: 'custom_id',
          line: lines,
        });
      else customIds.add(parsed.customId);
      if (errors.length >= MAX_ERRORS) break;
    }
  } catch (error) {
    if (!(error instanceof LineTooLong)) throw error;
    const line = error.index + 1;
    errors.push({
      code: 'invalid_value',
      message: `Line ${line} is longer than ${deps.maxLineBytes} bytes, the most one request's body may have.`,
      param: null,
      line,
    });
  }
  if (lines === 0 && errors.length === 0) errors.push({ code: 'empty_file', message: 'The input file has no lines.', param: null, line: null });
  if (errors.length > 0) {
    const failed = await deps.batches.transition(batch.tenantId, batch.id, ['validating'], { status: 'failed', errors, failedAt: new Date() });
    if (failed) await deps.outbox.push(batch.tenantId, webhookOutboxRecord(batch.tenantId, 'batch.failed', batch.id));
  } else {
    const started = await deps.batches.transition(batch.tenantId, batch.id, ['validating'], {
      status: 'in_progress',
      total: lines,
      segments,
      inProgressAt: new Date(),
    });
    if (started) {
      await Promise.all(segments.map((_, segment) => deps.queues.add({ kind: 'segment', tenantId: batch.tenantId, batchId: batch.id, segment })));
      return;
    }
  }
  // Cancelled before, or while, its input was read: the finalizer needs its lines, not its verdict.
  await deps.batches.transition(batch.tenantId, batch.id, ['cancelling'], { total: lines, segments });
}
