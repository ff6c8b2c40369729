/**
 * What the survival suites of background responses share: polling many responses to their end,
 * a tenant's usage records by request, and its budget's counters.
 */
import { APIError, type OpenAI } from 'openai';
import type { Response } from 'openai/resources/responses/responses';
import { call, eventually } from './http.ts';

/** A usage record as GET /v1/usage lists it (the fields these suites read). */
export interface UsageRow {
  request_id: string;
  response_id: string | null;
  status: 'succeeded' | 'failed' | 'cancelled';
  error_code: string | null;
  cost_micros: number;
}

/** The request id a background response is made by: its id is `resp_<request id>`. */
export function requestIdOf(responseId: string): string {
  return responseId.slice('resp_'.length);
}

/** Whether a response has ended (neither queued nor running). */
export function ended(response: Response): boolean {
  return response.status !== 'queued' && response.status !== 'in_progress';
}

/** A poll: the response, or null while the gateway answers 503 (its Redis reconnecting). */
async function poll(client: OpenAI, id: string): Promise<Response | null> {
  return client.responses.retrieve(id).catch((error: unknown) => {
    if (error instanceof APIError && error.status === 503) return null;
    throw error;
  });
}

/** Polls every response until each has ended (a 503 is polled again); returns them by id. Fails naming those still unfinished. */
export async function settleAll(client: OpenAI, ids: readonly string[], timeoutMs: number): Promise<Map<string, Response>> {
  const last = new Map<string, Response>();
  const open = () => ids.filter((id) => !last.has(id) || !ended(last.get(id) as Response));
  await eventually(
    async () => {
      for (const response of await Promise.all(open().map((id) => poll(client, id)))) if (response) last.set(response.id, response);
      return open().length === 0;
    },
    timeoutMs,
    `${ids.length} responses to end`,
  ).catch((error: unknown) => {
    const stuck = open().map((id) => `${id}: ${last.get(id)?.status}`);
    throw new Error(`${(error as Error).message}; ${stuck.length} not ended: ${stuck.slice(0, 5).join(', ')}`);
  });
  return last;
}

/** Every usage record of the caller's tenant today (one page of up to 1,000). */
export async function usageRows(origin: string, secret: string): Promise<UsageRow[]> {
  const today = new Date().toISOString().slice(0, 10);
  const page = await call(origin, secret, 'GET', `/v1/usage?since=${today}&limit=1000`);
  if (page.status !== 200) throw new Error(`GET /v1/usage answered ${page.status}: ${JSON.stringify(page.body)}`);
  return page.body.data as UsageRow[];
}

/** Waits until the tenant has a usage record for each of `requestIds` (the outbox carries them), then returns every record. */
export async function usageOfAll(origin: string, secret: string, requestIds: readonly string[], timeoutMs = 10_000): Promise<UsageRow[]> {
  let rows: UsageRow[] = [];
  await eventually(
    async () => {
      rows = await usageRows(origin, secret);
      const seen = new Set(rows.map((row) => row.request_id));
      return requestIds.every((id) => seen.has(id));
    },
    timeoutMs,
    `the usage records of ${requestIds.length} requests`,
  );
  return rows;
}

/** A budget's counters as GET /v1/budgets shows them. */
export interface BudgetCounters {
  spent_micros: number;
  reserved_micros: number;
}

/**
 * The tenant's one budget now. Read before any request, it makes Redis's counters exist (built
 * from the store); from then on only reservations and settlements move them, so a spend equal to
 * the usage records' cost means each request was settled once.
 */
export async function budgetNow(origin: string, secret: string): Promise<BudgetCounters> {
  const answer = await call(origin, secret, 'GET', '/v1/budgets');
  if (answer.status !== 200 || answer.body.data.length !== 1) throw new Error(`GET /v1/budgets answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body.data[0] as BudgetCounters;
}

/** The tenant's one budget once nothing is reserved any more. */
export async function settledBudget(origin: string, secret: string, timeoutMs = 10_000): Promise<BudgetCounters> {
  let budget: BudgetCounters | undefined;
  await eventually(
    async () => {
      budget = await budgetNow(origin, secret);
      return budget.reserved_micros === 0;
    },
    timeoutMs,
    'every reservation settled',
  );
  return budget as BudgetCounters;
}
