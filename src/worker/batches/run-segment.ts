import type { Logger } from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Outbox } from '../../infra/outbox/outbox.ts';
import type { BatchLineResult, BatchRepository, FileRepository, StoredBatch } from '../../infra/store/repository.ts';
import { toEnvelope } from '../../errors/to-envelope.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import type { RequestJob } from '../../operations/index.ts';
import type { Operation } from '../../operations/operation.ts';
import { operationOfEndpoint } from '../../domain/batches/batch-endpoints.ts';
import { parseBatchLine } from '../../domain/batches/batch-line.ts';
import { NO_USAGE } from '../../domain/batches/batch-object.ts';
import { admitLine, type LineAdmissionPorts, type PendingLine } from './admit-line.ts';
import type { BatchLane } from './batch-lane.ts';
import { lineRequestId } from './line-ids.ts';
import { segmentLines } from './segment-lines.ts';
import type { LineEnds } from './line-ends.ts';
import { candidatesOf } from '../../domain/catalog/load-catalog.ts';

/** What running a segment needs, built once by the worker's composition root. */
export interface SegmentDeps {
  batches: BatchRepository;
  files: FileRepository;
  lane: BatchLane;
  admission: LineAdmissionPorts;
  operations: ReadonlyMap<string, Operation>;
  /** Runs a request as the worker runs a job's (src/worker/job-processor.ts). */
  run(data: RequestJob, rerun: boolean, signal: AbortSignal): Promise<void>;
  ends: LineEnds;
  outbox: Outbox;
  shardOf(tenantId: string): number;
  /** How often a running segment reads its batch again, to see it cancelled. */
  statusPollMs: number;
  /** True once the worker is stopping: segments take no new line and hand the rest back. */
  closing(): boolean;
  log: Logger;
}

/** The result of a line that admission refused: its error, as a live request would have been answered. */
function refusedResult(pending: PendingLine, error: GatewayError): BatchLineResult {
  return {
    tenantId: pending.batch.tenantId,
    batchId: pending.batch.id,
    line: pending.line,
    customId: pending.customId,
    requestId: pending.requestId,
    status: 'failed',
    statusCode: error.status,
    body: JSON.stringify(toEnvelope(error, pending.requestId)),
    usage: NO_USAGE,
  };
}

/** Whether the batch still runs: not cancelled (as last read, at most `pollMs` ago) and within its window. */
function batchWatch(deps: SegmentDeps, batch: StoredBatch): () => Promise<boolean> {
  let status = batch.status;
  let readAt = Date.now();
  return async () => {
    if (Date.now() > batch.expiresAt.getTime()) return false;
    if (Date.now() - readAt >= deps.statusPollMs) {
      readAt = Date.now();
      // A store that cannot answer leaves the batch running: cancelling it waits for the next look.
      status = (await deps.batches.get(batch.tenantId, batch.id).catch(() => null))?.status ?? status;
    }
    return status === 'in_progress';
  };
}

/** One line through admission and the worker's run; a line held back by rate limits waits in its lane slot (the lane slows with it). */
async function runLine(deps: SegmentDeps, operation: Operation, pending: PendingLine, signal: AbortSignal): Promise<void> {
  for (;;) {
    const admitted = await admitLine(deps.admission, operation, pending);
    if (admitted.action === 'run') return deps.run(admitted.job, false, signal);
    if (admitted.action === 'refused') {
      await deps.outbox.push(pending.batch.tenantId, { kind: 'batch_result', result: refusedResult(pending, admitted.error) });
      await deps.ends.end(pending.batch.tenantId, pending.requestId);
      return;
    }
    await sleep(admitted.ms, undefined, { signal });
  }
}

/** The deployment a line goes to first (a tier's first model), which a 429 may have slowed. */
function firstDeployment(deps: SegmentDeps, model: unknown): string | null {
  if (typeof model !== 'string') return null;
  return candidatesOf(deps.admission.plan.catalog, model)?.[0]?.alias ?? model;
}

/** A segment's lines as read from its input: fewer than it has means the input went (it may not while the batch runs). */
class InputShort extends Error {
  constructor(batchId: string, read: number, expected: number) {
    super(`batch ${batchId}: read ${read} lines of a segment of ${expected}; its input file is gone`);
  }
}

/** How a segment stopped short: its worker stops (the segment is handed back) or the batch did (nothing left to do). */
export type SegmentEnd = 'done' | 'handed_back';

/**
 * Runs the lines of one segment that have no result yet, each in a slot of the batch lane, until
 * they all ended or the batch stopped (cancelled, or past its window: the lines left are the
 * finalizer's). Whatever ends the loop, the lines started are waited for before the segment ends;
 * a failed line then fails the segment, so that BullMQ runs it again. `rerun`: the segment may
 * have run before, and lines whose settlement marker says they ended are skipped.
 */
export async function runSegment(
  deps: SegmentDeps,
  job: { tenantId: string; batchId: string; segment: number },
  rerun: boolean,
  signal: AbortSignal,
): Promise<SegmentEnd> {
  const batch = await deps.batches.get(job.tenantId, job.batchId);
  if (!batch || batch.status !== 'in_progress') return 'done';
  const segment = batch.segments[job.segment];
  if (!segment) throw new Error(`batch ${batch.id} has no segment ${job.segment}`);
  const operation = deps.operations.get(operationOfEndpoint(batch.endpoint) ?? '');
  if (!operation) throw new Error(`this worker runs no operation for batch endpoint '${batch.endpoint}'`);
  const done = new Set(await deps.batches.doneLines(batch.tenantId, batch.id, segment.firstLine, segment.firstLine + segment.lines));
  if (done.size === segment.lines) return 'done';
  const lines = Array.from({ length: segment.lines }, (_, index) => segment.firstLine + index).filter((line) => !done.has(line));
  if (rerun) {
    const ended = await deps.ends.ended(
      batch.tenantId,
      lines.map((line) => lineRequestId(batch.id, line)),
    );
    lines.forEach((line, index) => ended[index] && done.add(line));
  }
  const running = new Set<Promise<void>>();
  const failures: unknown[] = [];
  const runs = batchWatch(deps, batch);
  const shard = deps.shardOf(batch.tenantId);
  let line = segment.firstLine - 1;
  let stopped = false;
  try {
    for await (const { text } of segmentLines(deps.files, batch, job.segment)) {
      line++;
      if (done.has(line)) continue;
      if (deps.closing() || !(await runs())) {
        stopped = true;
        break;
      }
      const parsed = parseBatchLine(text, line + 1, batch.endpoint, () => null);
      if ('code' in parsed) throw new Error(`line ${line + 1} of batch ${batch.id}, validated before, no longer reads: ${parsed.message}`);
      const release = await deps.lane.acquire(batch.tenantId, shard, firstDeployment(deps, parsed.body.model));
      if (deps.closing()) {
        release();
        stopped = true;
        break;
      }
      const pending: PendingLine = { batch, line, customId: parsed.customId, requestId: lineRequestId(batch.id, line), body: parsed.body };
      const run = runLine(deps, operation, pending, signal)
        .catch((error: unknown) => {
          deps.log.warn({ err: error, batchId: batch.id, line: pending.line }, 'a batch line failed to run; its segment runs again');
          failures.push(error);
        })
        .finally(() => {
          release();
          running.delete(run);
        });
      running.add(run);
    }
  } finally {
    // Lines started run to their end whatever stopped the loop: a segment run again must find them ended, not running.
    await Promise.allSettled([...running]);
  }
  if (failures.length > 0) throw failures[0];
  if (!stopped && line < segment.firstLine + segment.lines - 1) throw new InputShort(batch.id, line - segment.firstLine + 1, segment.lines);
  return deps.closing() ? 'handed_back' : 'done';
}
