/**
 * What the gateway says and holds after quiescence, read before its processes stop: each tenant's
 * budgets and credit (GET /v1/budgets as its admin, and the counters of windows that ended during the
 * campaign straight from Redis), the reservations still held, each audit chain's verification, the backlog.
 */
import { windowStart } from '../../src/domain/budget/windows.ts';
import { adminCall } from './client.ts';
import type { Infrastructure } from './infrastructure.ts';
import type { CreditObservation, WindowObservation } from './check-money.ts';
import { heldReservations, readBacklog, type Backlog } from './read-state.ts';
import type { CampaignTenants } from './tenants.ts';
import type { TrafficPlan } from './traffic-plan.ts';

/** Everything observed. */
export interface Observations {
  windows: WindowObservation[];
  credits: CreditObservation[];
  /** Budget reads that failed. */
  budgetErrors: string[];
  audits: Array<{ tenant: string; status: number; body: any }>;
  backlog: Backlog | null;
  backlogError: string | null;
}

const WINDOW_MS = { hour: 3_600_000, day: 86_400_000 } as const;

async function budgetsOf(origin: string, secret: string): Promise<{ status: number; body: any }> {
  let answer = await adminCall(origin, secret, 'GET', '/v1/budgets');
  for (let i = 0; i < 10 && answer.status !== 200; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    answer = await adminCall(origin, secret, 'GET', '/v1/budgets');
  }
  return answer;
}

/** Reads the observations; `startedAt` is when the campaign started (Date.now()). */
export async function observe(infra: Infrastructure, tenants: CampaignTenants, plan: TrafficPlan, startedAt: number): Promise<Observations> {
  const origin = infra.processes.webOrigins[0] as string;
  const { client, keys } = infra;
  const observations: Observations = { windows: [], credits: [], budgetErrors: [], audits: [], backlog: null, backlogError: null };
  for (const tenant of plan.tenants) {
    const secret = tenants.byId.get(tenant.id)?.admin as string;
    const answer = await budgetsOf(origin, secret);
    if (answer.status !== 200) {
      observations.budgetErrors.push(`GET /v1/budgets of ${tenant.id} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 200)}`);
      continue;
    }
    for (const budget of answer.body.data as any[]) {
      const length = WINDOW_MS[budget.window as 'hour' | 'day'];
      const endMs = Date.parse(budget.resets_at);
      const startMs = endMs - length;
      const held = await heldReservations(client, keys.budgetWindow(tenant.id, budget.id, startMs), keys.budgetExpiries(tenant.id, budget.id, startMs));
      const common = { tenant: tenant.id, policyId: budget.id, window: budget.window, limitMicros: budget.limit_micros };
      observations.windows.push({ ...common, startMs, endMs, spent: budget.spent_micros, reserved: budget.reserved_micros, held, source: 'api' });
      // Windows that ended while the campaign ran: their counters, as Redis holds them.
      for (let past = windowStart(budget.window, new Date(startedAt)).getTime(); past < startMs; past += length) {
        const hash = keys.budgetWindow(tenant.id, budget.id, past);
        const [spent, reserved] = await client.hmget(hash, 'spent', 'reserved');
        const pastHeld = await heldReservations(client, hash, keys.budgetExpiries(tenant.id, budget.id, past));
        const read = (value: string | null | undefined) => (value === null || value === undefined ? null : Number(value));
        observations.windows.push({
          ...common,
          startMs: past,
          endMs: past + length,
          spent: read(spent),
          reserved: read(reserved),
          held: pastHeld,
          source: 'counter',
        });
      }
    }
    if (answer.body.credit) {
      const held = await heldReservations(client, keys.credit(tenant.id), keys.creditExpiries(tenant.id));
      observations.credits.push({ tenant: tenant.id, balance: answer.body.credit.balance_micros, reserved: answer.body.credit.reserved_micros, held });
    }
  }
  for (const keysOf of [tenants.operator, ...tenants.byId.values()]) {
    const answer = await adminCall(origin, keysOf.admin, 'GET', '/internal/v1/audit/verify');
    observations.audits.push({ tenant: keysOf.id, status: answer.status, body: answer.body });
  }
  try {
    observations.backlog = await readBacklog(client, keys);
  } catch (error) {
    observations.backlogError = (error as Error).message;
  }
  return observations;
}
