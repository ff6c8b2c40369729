import { webhookOutboxRecord, type Outbox } from '../../infra/outbox/outbox.ts';
import type { BatchLineResult, BatchProgress, BatchRepository, BatchStatus, FileRepository, StoredBatch } from '../../infra/store/repository.ts';
import { parseBatchLine } from '../../domain/batches/batch-line.ts';
import { segmentLines } from './segment-lines.ts';
import { anthropicResultLine, NEVER_RAN, openAiResultLine, UNRUN } from '../../domain/batches/result-lines.ts';
import { lineRequestId } from './line-ids.ts';
import type { LineEnds } from './line-ends.ts';
import { toEnvelope } from '../../errors/to-envelope.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { isEnded, NO_USAGE } from '../../domain/batches/batch-object.ts';

/** What finishing a batch needs. */
export interface FinalizeDeps {
  batches: BatchRepository;
  files: FileRepository;
  ends: LineEnds;
  outbox: Outbox;
  /** How long output and error files live. */
  fileTtlMs: number;
}

/** Thrown while a line that ended has its result still on the way to the store: the finalizer runs again shortly. */
export class ResultsInFlight extends Error {
  constructor(batchId: string) {
    super(`lines of batch ${batchId} ended but their results are not in the store yet`);
  }
}

/** Thrown when another process moved the batch on meanwhile (a cancel): the finalizer runs again and sees it. */
class MovedMeanwhile extends Error {
  constructor(batchId: string) {
    super(`batch ${batchId} changed while it was being finalized`);
  }
}

// Results are read, and unrun lines written, this many at a time (a result holds its whole answer).
const PAGE = 200;

type Ending = Extract<BatchStatus, 'completed' | 'expired' | 'cancelled'>;

/** How the batch ends: cancelled if it was ever cancelled; expired if a line never ran (its result says so once recorded); else completed. */
function endingOf(batch: StoredBatch, progress: BatchProgress): Ending {
  if (batch.cancellingAt !== null) return 'cancelled';
  return progress.succeeded + progress.failed < batch.total || (progress.neverRan ?? 0) > 0 ? 'expired' : 'completed';
}

async function* resultsOf(deps: FinalizeDeps, batch: StoredBatch): AsyncGenerator<BatchLineResult> {
  for (let after = -1; ;) {
    const page = await deps.batches.readResults(batch.tenantId, batch.id, after, PAGE);
    yield* page;
    if (page.length < PAGE) return;
    after = (page[page.length - 1] as BatchLineResult).line;
  }
}

async function* encoded(results: AsyncIterable<BatchLineResult>, keep: (result: BatchLineResult) => boolean, line: (result: BatchLineResult) => string) {
  for await (const result of results) if (keep(result)) yield Buffer.from(line(result));
}

/**
 * Gives every line that never ran (the batch expired or was cancelled) its result, from the input
 * (its custom_id). A line that ended but whose result is not in the store yet would be given the
 * wrong one: its events say it ended, and then the finalizer waits for the outbox and runs again.
 */
async function recordUnrun(deps: FinalizeDeps, batch: StoredBatch, ending: 'expired' | 'cancelled'): Promise<void> {
  const { code, message } = UNRUN[ending];
  let pending: BatchLineResult[] = [];
  const flush = async () => {
    if (pending.length === 0) return;
    const ended = await deps.ends.ended(
      batch.tenantId,
      pending.map((result) => result.requestId),
    );
    if (ended.some(Boolean)) throw new ResultsInFlight(batch.id);
    await deps.batches.insertResults(pending);
    pending = [];
  };
  for (const [index, segment] of batch.segments.entries()) {
    const end = segment.firstLine + segment.lines;
    const done = new Set(await deps.batches.doneLines(batch.tenantId, batch.id, segment.firstLine, end));
    if (done.size === segment.lines) continue;
    let line = segment.firstLine - 1;
    for await (const { text } of segmentLines(deps.files, batch, index)) {
      line++;
      if (done.has(line)) continue;
      const parsed = parseBatchLine(text, line + 1, batch.endpoint, () => null);
      const customId = 'code' in parsed ? '' : parsed.customId;
      const requestId = lineRequestId(batch.id, line);
      const body = JSON.stringify(toEnvelope(new GatewayError(400, 'invalid_request_error', code, message), requestId));
      pending.push({ tenantId: batch.tenantId, batchId: batch.id, line, customId, requestId, status: 'failed', statusCode: NEVER_RAN, body, usage: NO_USAGE });
      if (pending.length >= PAGE) await flush();
    }
  }
  await flush();
}

/** Writes one file of the batch's results (those `keep` picks); null when none would be in it. */
async function writeFile(
  deps: FinalizeDeps,
  batch: StoredBatch,
  name: string,
  keep: (result: BatchLineResult) => boolean,
  line: (result: BatchLineResult) => string,
) {
  const createdAt = new Date();
  const file = await deps.files.create(
    {
      id: `file-${batch.id.slice(batch.id.indexOf('_') + 1)}-${name}`,
      tenantId: batch.tenantId,
      purpose: 'batch_output',
      filename: `${batch.id}_${name}.jsonl`,
      createdAt,
      expiresAt: new Date(createdAt.getTime() + deps.fileTtlMs),
    },
    encoded(resultsOf(deps, batch), keep, line),
  );
  return file.id;
}

/**
 * Ends a batch whose lines all ended, or that expired or was cancelled once its segments stopped:
 * finalizing, every unrun line's result, the output and error files (Anthropic's: one results
 * file) streamed from the store, the usage summed, then its final status and webhook event. Every
 * step may run again (the files have ids of the batch's own), so a finalizer that dies is re-run.
 */
export async function finalizeBatch(deps: FinalizeDeps, job: { tenantId: string; batchId: string }): Promise<void> {
  let batch = await deps.batches.get(job.tenantId, job.batchId);
  if (!batch) return;
  // Ended already: its event goes again (its id is the end's, so a receiver gets it once), in case the push after the end was lost.
  if (isEnded(batch)) {
    await deps.outbox.push(batch.tenantId, webhookOutboxRecord(batch.tenantId, `batch.${batch.status}`, batch.id));
    return;
  }
  if (batch.status === 'in_progress' || batch.status === 'cancelling') {
    const moved = await deps.batches.transition(batch.tenantId, batch.id, [batch.status], { status: 'finalizing', finalizingAt: new Date() });
    if (!moved) throw new MovedMeanwhile(batch.id);
    batch = moved;
  }
  if (batch.status !== 'finalizing') return;
  const before = await deps.batches.progress(batch.tenantId, batch.id);
  const ending = endingOf(batch, before);
  if (ending !== 'completed') await recordUnrun(deps, batch, ending);
  const progress = ending === 'completed' ? before : await deps.batches.progress(batch.tenantId, batch.id);
  let outputFileId: string | null = null;
  let errorFileId: string | null = null;
  if (batch.dialect === 'anthropic') {
    outputFileId = await writeFile(deps, batch, 'results', () => true, anthropicResultLine);
  } else {
    if (progress.succeeded > 0) outputFileId = await writeFile(deps, batch, 'output', (result) => result.status === 'succeeded', openAiResultLine);
    if (progress.failed > 0) errorFileId = await writeFile(deps, batch, 'errors', (result) => result.status === 'failed', openAiResultLine);
  }
  const at = new Date();
  const stamp = ending === 'completed' ? { completedAt: at } : ending === 'expired' ? { expiredAt: at } : { cancelledAt: at };
  const ended = await deps.batches.transition(batch.tenantId, batch.id, ['finalizing'], {
    status: ending,
    outputFileId,
    errorFileId,
    usage: progress.usage,
    ...stamp,
  });
  if (!ended) throw new MovedMeanwhile(batch.id);
  await deps.outbox.push(batch.tenantId, webhookOutboxRecord(batch.tenantId, `batch.${ending}`, batch.id));
}
