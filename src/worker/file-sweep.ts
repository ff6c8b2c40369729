/**
 * The sweep of files past their expiry (a batch's input and output after FILE_TTL_S, an upload's
 * `expires_after`) and of what uploads a crash cut short left. Every worker process runs it; the
 * store's sweep is idempotent, so two workers sweeping at once only share the work.
 */
import type { Logger } from 'pino';
import type { FileRepository } from '../infra/store/repository.ts';

/** What the sweep works with. */
export interface FileSweepDeps {
  files: FileRepository;
  /** How often it sweeps (FILES_SWEEP_INTERVAL_MS). */
  intervalMs: number;
  log: Logger;
}

// Files removed per store call, and calls per round: a long backlog is worked off over a few
// rounds rather than in one long one.
const BATCH = 100;
const CALLS = 20;

/** One round: removes expired files until none is left or the round's share is done; returns how many went. */
export async function sweepFilesOnce(files: FileRepository, now = new Date()): Promise<number> {
  let removed = 0;
  for (let call = 0; call < CALLS; call++) {
    const swept = await files.sweep(now, BATCH);
    removed += swept;
    if (swept < BATCH) break;
  }
  return removed;
}

/** Runs `sweepFilesOnce` every `intervalMs` (a round still running is not doubled) until the returned stop is called. */
export function startFileSweep(deps: FileSweepDeps): () => Promise<void> {
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (running) return;
    running = sweepFilesOnce(deps.files)
      .then(
        (removed) => {
          if (removed > 0) deps.log.info({ removed }, 'expired files removed');
        },
        (error: unknown) => deps.log.warn({ err: error }, 'sweeping expired files failed; trying again'),
      )
      .finally(() => (running = null));
  }, deps.intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
