/** Budget policies, credit top-ups and tenant plans in PostgreSQL. */
import type { Pool } from 'pg';
import type { BudgetPolicy, BudgetRepository, BudgetWindow, CreditTopUp, TenantPlan } from '../repository.ts';

/** bigint columns arrive as strings. */
interface PolicyRow {
  id: string;
  tenant_id: string;
  feature: string | null;
  budget_window: BudgetWindow;
  limit_micros: string;
  created_at: Date;
}

interface TopUpRow {
  id: string;
  tenant_id: string;
  amount_micros: string;
  actor: string;
  created_at: Date;
}

interface PlanRow {
  tenant_id: string;
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
  key_requests_per_minute: number | null;
  key_tokens_per_minute: number | null;
  max_queued: number | null;
  cache_hit_price_micros: string | null;
}

const POLICY_COLUMNS = 'id, tenant_id, feature, budget_window, limit_micros, created_at';
const TOP_UP_COLUMNS = 'id, tenant_id, amount_micros, actor, created_at';
const PLAN_COLUMNS = 'tenant_id, requests_per_minute, tokens_per_minute, key_requests_per_minute, key_tokens_per_minute, max_queued, cache_hit_price_micros';

function toPolicy(row: PolicyRow): BudgetPolicy {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    feature: row.feature,
    window: row.budget_window,
    limitMicros: Number(row.limit_micros),
    createdAt: row.created_at,
  };
}

function toTopUp(row: TopUpRow): CreditTopUp {
  return { id: row.id, tenantId: row.tenant_id, amountMicros: Number(row.amount_micros), actor: row.actor, createdAt: row.created_at };
}

function toPlan(row: PlanRow): TenantPlan {
  return {
    tenantId: row.tenant_id,
    requestsPerMinute: row.requests_per_minute,
    tokensPerMinute: row.tokens_per_minute,
    keyRequestsPerMinute: row.key_requests_per_minute,
    keyTokensPerMinute: row.key_tokens_per_minute,
    maxQueued: row.max_queued,
    cacheHitPriceMicros: row.cache_hit_price_micros === null ? null : Number(row.cache_hit_price_micros),
  };
}

/** Stores a top-up once per id; a repeat returns the stored one. */
async function topUp(pool: Pool, input: { id: string; tenantId: string; amountMicros: number; actor: string }): Promise<CreditTopUp> {
  const inserted = await pool.query<TopUpRow>(
    `INSERT INTO credit_top_ups (id, tenant_id, amount_micros, actor) VALUES ($1, $2, $3, $4)
     ON CONFLICT (id) DO NOTHING RETURNING ${TOP_UP_COLUMNS}`,
    [input.id, input.tenantId, input.amountMicros, input.actor],
  );
  // A separate statement, so it sees a row that a concurrent top-up with the same id committed meanwhile.
  const row =
    inserted.rows[0] ??
    (await pool.query<TopUpRow>(`SELECT ${TOP_UP_COLUMNS} FROM credit_top_ups WHERE id = $1 AND tenant_id = $2`, [input.id, input.tenantId])).rows[0];
  if (!row) throw new Error(`Top-up id '${input.id}' belongs to another tenant.`);
  return toTopUp(row);
}

/** Inserts or replaces the tenant's plan, null fields included. */
async function setPlan(pool: Pool, plan: TenantPlan): Promise<TenantPlan> {
  const result = await pool.query<PlanRow>(
    `INSERT INTO tenant_plans (${PLAN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (tenant_id) DO UPDATE SET requests_per_minute = EXCLUDED.requests_per_minute,
       tokens_per_minute = EXCLUDED.tokens_per_minute, key_requests_per_minute = EXCLUDED.key_requests_per_minute,
       key_tokens_per_minute = EXCLUDED.key_tokens_per_minute, max_queued = EXCLUDED.max_queued,
       cache_hit_price_micros = EXCLUDED.cache_hit_price_micros
     RETURNING ${PLAN_COLUMNS}`,
    [plan.tenantId, plan.requestsPerMinute, plan.tokensPerMinute, plan.keyRequestsPerMinute, plan.keyTokensPerMinute, plan.maxQueued, plan.cacheHitPriceMicros],
  );
  return toPlan(result.rows[0] as PlanRow);
}

/** The BudgetRepository over `pool`. */
export function createBudgetRepository(pool: Pool): BudgetRepository {
  return {
    async createPolicy({ id, tenantId, feature, window, limitMicros }) {
      const result = await pool.query<PolicyRow>(
        `INSERT INTO budget_policies (id, tenant_id, feature, budget_window, limit_micros) VALUES ($1, $2, $3, $4, $5) RETURNING ${POLICY_COLUMNS}`,
        [id, tenantId, feature, window, limitMicros],
      );
      return toPolicy(result.rows[0] as PolicyRow);
    },
    async deletePolicy(tenantId, id) {
      const result = await pool.query('DELETE FROM budget_policies WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
      return (result.rowCount ?? 0) > 0;
    },
    async listPolicies(tenantId) {
      const result = await pool.query<PolicyRow>(`SELECT ${POLICY_COLUMNS} FROM budget_policies WHERE tenant_id = $1 ORDER BY created_at, id`, [tenantId]);
      return result.rows.map(toPolicy);
    },
    topUp: (input) => topUp(pool, input),
    async creditToppedUp(tenantId) {
      // sum over no rows is NULL: the tenant has no credit account.
      const result = await pool.query<{ total: string | null }>('SELECT sum(amount_micros) AS total FROM credit_top_ups WHERE tenant_id = $1', [tenantId]);
      const total = result.rows[0]?.total ?? null;
      return total === null ? null : Number(total);
    },
    async getPlan(tenantId) {
      const result = await pool.query<PlanRow>(`SELECT ${PLAN_COLUMNS} FROM tenant_plans WHERE tenant_id = $1`, [tenantId]);
      const row = result.rows[0];
      return row ? toPlan(row) : null;
    },
    setPlan: (plan) => setPlan(pool, plan),
  };
}
