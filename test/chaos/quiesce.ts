/**
 * Quiescence: traffic's flows have ended (every answer read, every background response polled to its
 * end or given up on), the queue and the outbox are empty, and no budget or credit holds a reservation,
 * twice in a row; or the bound passed, and the invariants say what was left.
 */
import { adminCall } from './client.ts';
import type { Infrastructure } from './infrastructure.ts';
import { readBacklog, type Backlog } from './read-state.ts';
import type { CampaignTenants } from './tenants.ts';

/** How quiescence went. */
export interface Quiescence {
  /** ms the flows took to end after traffic did. */
  flowsMs: number;
  /** ms waited for the backlog and reservations after that. */
  settleMs: number;
  quiet: boolean;
  backlog: Backlog | null;
  reserved: number | null;
}

const FLOWS_BOUND_MS = 90_000;
const SETTLE_BOUND_MS = 40_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Micro-units reserved over every tenant's budgets and credit, as GET /v1/budgets says (null: unreadable). */
export async function reservedNow(origin: string, tenants: CampaignTenants): Promise<number | null> {
  let total = 0;
  for (const tenant of tenants.byId.values()) {
    const answer = await adminCall(origin, tenant.admin, 'GET', '/v1/budgets');
    if (answer.status !== 200) return null;
    total += (answer.body.data as Array<{ reserved_micros: number }>).reduce((sum, b) => sum + b.reserved_micros, 0);
    total += answer.body.credit?.reserved_micros ?? 0;
  }
  return total;
}

/** Waits for quiescence (bounded) and says how it went. */
export async function quiesce(
  flows: Promise<void>,
  infra: Infrastructure,
  tenants: CampaignTenants,
  clock: () => number,
  log: (line: string) => void,
): Promise<Quiescence> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const bounded = await Promise.race([flows.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), FLOWS_BOUND_MS)))]);
  clearTimeout(timer);
  const flowsMs = Date.now() - started;
  if (!bounded) log(`${(clock() / 1000).toFixed(1)}s  flows still running after ${FLOWS_BOUND_MS} ms; judging anyway`);
  const settling = Date.now();
  let calm = 0;
  let backlog: Backlog | null = null;
  let reserved: number | null = null;
  while (Date.now() - settling < SETTLE_BOUND_MS) {
    backlog = await readBacklog(infra.client, infra.keys).catch(() => null);
    reserved = await reservedNow(infra.processes.webOrigins[0] as string, tenants);
    const quiet = backlog !== null && backlog.outboxItems + backlog.outboxLeases + backlog.queued + backlog.active === 0 && reserved === 0;
    calm = quiet ? calm + 1 : 0;
    if (calm >= 2) break;
    await sleep(500);
  }
  const settleMs = Date.now() - settling;
  log(
    `${(clock() / 1000).toFixed(1)}s  ${calm >= 2 ? 'quiet' : 'not quiet'} after ${flowsMs + settleMs} ms` +
      (backlog ? ` (outbox ${backlog.outboxItems}+${backlog.outboxLeases}, queue ${backlog.queued}+${backlog.active}, reserved ${reserved ?? '?'})` : ''),
  );
  return { flowsMs, settleMs, quiet: calm >= 2, backlog, reserved };
}
