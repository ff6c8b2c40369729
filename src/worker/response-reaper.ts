/**
 * The reaper of background responses Redis lost: a response the store says is queued or running,
 * of which Redis holds no state, lost its job with it (a Redis restarted without its data); it
 * ends failed with `response_lost`, so that a poller never waits for ever. The same timer sweeps
 * the responses past their retention. Every worker process runs it; both steps are idempotent.
 */
import type { Logger } from 'pino';
import type { ResponseRepository, UnfinishedResponse } from '../infra/store/repository.ts';
import type { ResponseStates } from '../infra/responses/response-state.ts';
import { webhookOutboxRecord, type Outbox } from '../infra/outbox/outbox.ts';
import { ResponseLostError } from '../errors/gateway-error.ts';
import { FINAL_RESPONSE_STATUSES } from '../infra/store/response-fields.ts';

/** What the reaper works with. */
export interface ReaperDeps {
  responses: ResponseRepository;
  states: ResponseStates;
  outbox: Outbox;
  /** How often it looks; a response younger than this is left alone (its state may be on its way). */
  intervalMs: number;
  /** How long a response kept only for polling stays after it was failed here. */
  pollableMs: number;
  log: Logger;
}

// Responses looked at per page, and swept, per round; pages per round: a long backlog of live
// background responses is paged through, so that a lost one behind it is not left for later.
const BATCH = 500;
const PAGES = 40;

/** One round: fails the lost responses, then sweeps; returns how many were failed. */
export async function reapOnce(deps: ReaperDeps, now = Date.now()): Promise<number> {
  let failed = 0;
  let after: UnfinishedResponse | null = null;
  for (let page = 0; page < PAGES; page++) {
    const unfinished = await deps.responses.listUnfinished(new Date(now - deps.intervalMs), BATCH, after);
    for (const response of unfinished) if (await lost(deps, response, now)) failed++;
    if (unfinished.length < BATCH) break;
    after = unfinished.at(-1) ?? null;
  }
  await deps.responses.sweep(new Date(now), BATCH);
  return failed;
}

/** Fails one response Redis holds no state of; false when Redis has it, or it ended meanwhile. */
async function lost(deps: ReaperDeps, { tenantId, id }: UnfinishedResponse, now: number): Promise<boolean> {
  if (await deps.states.exists(tenantId, id)) return false;
  const stored = await deps.responses.get(tenantId, id);
  if (!stored || FINAL_RESPONSE_STATUSES.includes(stored.status)) return false;
  const error = new ResponseLostError('response_lost', 'The gateway lost this background response with its Redis before it ended; send it again.');
  const store = stored.response.store === true;
  // The first end stays in the store, and the event of an end has one id: two reapers racing send it once.
  await deps.responses.put([
    {
      ...stored,
      status: 'failed',
      response: { ...stored.response, status: 'failed', error: { code: error.code, message: error.message } },
      expiresAt: store ? null : new Date(now + deps.pollableMs),
    },
  ]);
  await deps.outbox.push(tenantId, webhookOutboxRecord(tenantId, 'response.failed', id));
  return true;
}

/** Runs `reapOnce` every `intervalMs` until the returned stop is called. */
export function startResponseReaper(deps: ReaperDeps): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = reapOnce(deps).then(
      (failed) => {
        if (failed > 0) deps.log.warn({ failed }, 'background responses lost with Redis ended failed');
      },
      (error: unknown) => deps.log.warn({ err: error }, 'reaping background responses failed; trying again'),
    );
  }, deps.intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
