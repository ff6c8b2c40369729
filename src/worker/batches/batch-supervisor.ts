import type { Logger } from 'pino';
import type { BatchJob, BatchQueues } from '../../infra/queue/batch-jobs.ts';
import type { BatchRepository, StoredBatch } from '../../infra/store/repository.ts';

/** What the supervisor reads and moves. */
export interface SupervisorDeps {
  batches: BatchRepository;
  queues: Pick<BatchQueues, 'add' | 'state' | 'retry' | 'requeue'>;
  intervalMs: number;
  /** How long a batch whose segments all ran may lack results before its segments run again (the outbox lost with Redis). */
  stallMs: number;
  log: Logger;
}

// Batches looked at per store query.
const PAGE = 100;

const UNFINISHED = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/** Queues the job unless it waits or runs; one that failed for good is tried again. Returns where it stood. */
async function ensure(deps: SupervisorDeps, job: BatchJob): Promise<string> {
  const state = await deps.queues.state(job);
  if (state === 'unknown') await deps.queues.add(job);
  else if (state === 'failed') await deps.queues.retry(job);
  return state;
}

/** Queues the finalizer of a batch that is not final: one that ran before and left it so (it found nothing to do then) runs anew. */
async function finalize(deps: SupervisorDeps, ids: { tenantId: string; batchId: string }): Promise<void> {
  const job: BatchJob = { kind: 'finalize', ...ids };
  if ((await ensure(deps, job)) === 'completed') await deps.queues.requeue(job);
}

/** A batch as last seen: how many of its lines had a result, since when. */
interface Seen {
  resulted: number;
  since: number;
}

/**
 * Moves one batch on, whatever happened to the jobs that should have: validation queued again,
 * the finalizer queued once every line has its result. A batch whose results move is left alone
 * (its segments run); one that stood still for an interval has its segments looked at: those
 * Redis lost are queued again, and once none runs, the finalizer is queued if the window has
 * passed or the batch is being cancelled. Segments that all ran while lines still lack results for
 * `stallMs` (their outbox lost with Redis) run again.
 */
async function supervise(deps: SupervisorDeps, batch: StoredBatch, now: number, seen: Map<string, Seen>): Promise<void> {
  const ids = { tenantId: batch.tenantId, batchId: batch.id };
  if (batch.status === 'validating') {
    await ensure(deps, { kind: 'validate', ...ids });
    return;
  }
  if (batch.status === 'finalizing') {
    await finalize(deps, ids);
    return;
  }
  // A batch cancelled before validation read its input waits for it: its lines are counted first.
  if (batch.status === 'cancelling' && batch.segments.length === 0 && (await ensure(deps, { kind: 'validate', ...ids })) !== 'completed') return;
  const progress = await deps.batches.progress(batch.tenantId, batch.id);
  const resulted = progress.succeeded + progress.failed;
  if (resulted >= batch.total && batch.status === 'in_progress') {
    await finalize(deps, ids);
    return;
  }
  const last = seen.get(batch.id);
  if (!last || last.resulted !== resulted) {
    seen.set(batch.id, { resulted, since: now });
    return;
  }
  const states = await Promise.all(batch.segments.map((_, segment) => deps.queues.state({ kind: 'segment', ...ids, segment })));
  const stopping = batch.status === 'cancelling' || now > batch.expiresAt.getTime();
  if (!stopping) {
    await Promise.all(
      states.map(async (state, segment) => {
        if (state === 'unknown') await deps.queues.add({ kind: 'segment', ...ids, segment, again: true });
        else if (state === 'failed') await deps.queues.retry({ kind: 'segment', ...ids, segment });
      }),
    );
  }
  if (states.some((state) => UNFINISHED.has(state))) return;
  if (stopping) {
    await finalize(deps, ids);
    return;
  }
  if (now - last.since < deps.stallMs) return;
  seen.delete(batch.id);
  deps.log.warn({ batchId: batch.id, resulted, total: batch.total }, 'a batch whose segments all ran lacks results; running its segments again');
  await Promise.all(
    batch.segments.map(async (segment, index) => {
      const done = await deps.batches.doneLines(batch.tenantId, batch.id, segment.firstLine, segment.firstLine + segment.lines);
      if (done.length < segment.lines) await deps.queues.requeue({ kind: 'segment', ...ids, segment: index, again: true });
    }),
  );
}

/** One pass over every batch not final; returns how many were looked at. */
export async function superviseOnce(deps: SupervisorDeps, seen: Map<string, Seen>, now = Date.now()): Promise<number> {
  const active = new Set<string>();
  for (let after: string | null = null; ;) {
    const page = await deps.batches.listActive(PAGE, after);
    for (const batch of page) {
      active.add(batch.id);
      await supervise(deps, batch, now, seen).catch((error: unknown) =>
        deps.log.warn({ err: error, batchId: batch.id }, 'moving a batch on failed; trying again'),
      );
    }
    if (page.length < PAGE) break;
    after = (page[page.length - 1] as StoredBatch).id;
  }
  // Batches that ended are forgotten.
  for (const id of seen.keys()) if (!active.has(id)) seen.delete(id);
  return active.size;
}

/** Runs `superviseOnce` every `intervalMs` until the returned stop is called. */
export function startBatchSupervisor(deps: SupervisorDeps): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  let busy = false;
  const seen = new Map<string, Seen>();
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    running = superviseOnce(deps, seen)
      .catch((error: unknown) => deps.log.warn({ err: error }, 'supervising batches failed; trying again'))
      .finally(() => {
        busy = false;
      });
  }, deps.intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
