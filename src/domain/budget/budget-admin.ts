import { Type, type Static } from '@sinclair/typebox';
import { ulid } from 'ulid';
import type { BudgetPolicy, Repository, TenantPlan, CreditTopUp } from '../../infra/store/repository.ts';
import { auditEvent, type AuditSink } from '../audit/audit-event.ts';
import type { Actor } from '../prompts/prompt-admin.ts';
import { ResourceNotFoundError } from '../../errors/gateway-error.ts';
import { MAX_STORED_INTEGER } from '../../infra/store/limits.ts';

/**
 * The largest amount of money one field may hold: 10^15 micro-units (a billion currency units). Far
 * above any real budget, and far below where sums of them leave exact integers (2^53) in JavaScript,
 * Lua and PostgreSQL's bigint, so that no total of top-ups or reservations can overflow.
 */
export const MAX_MICROS = 1_000_000_000_000_000;

/** A new budget policy as sent (internal API and CLI). */
export const BudgetPolicyInputSchema = Type.Object(
  {
    feature: Type.Optional(Type.Union([Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$' }), Type.Null()])),
    window: Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('month')]),
    limit_micros: Type.Integer({ minimum: 1, maximum: MAX_MICROS }),
  },
  { additionalProperties: false },
);

/** A credit top-up as sent; `id` makes a retried top-up count once. */
export const TopUpInputSchema = Type.Object(
  { amount_micros: Type.Integer({ minimum: 1, maximum: MAX_MICROS }), id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })) },
  { additionalProperties: false },
);

const Limit = Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: MAX_STORED_INTEGER }), Type.Null()]));
/** A tenant's plan as sent; an absent or null field uses the configured default, 0 means no limit. */
export const PlanInputSchema = Type.Object(
  {
    requests_per_minute: Limit,
    tokens_per_minute: Limit,
    key_requests_per_minute: Limit,
    key_tokens_per_minute: Limit,
    max_queued: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: MAX_STORED_INTEGER }), Type.Null()])),
    cache_hit_price_micros: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: MAX_MICROS }), Type.Null()])),
  },
  { additionalProperties: false },
);

/** What budget administration needs: the store, the Redis side of credits, audit, cache invalidation. */
export interface BudgetAdminDeps {
  repository: Repository;
  audit: AuditSink;
  /** Brings the live Redis balance (when that counter exists) up to the store's top-ups, after one of `amountMicros`. */
  creditRedis(tenantId: string, toppedUpMicros: number, amountMicros: number): Promise<void>;
  invalidate(tenantId: string): Promise<void>;
}

async function record(deps: BudgetAdminDeps, tenantId: string, by: Actor, action: string, target: string, details: Record<string, unknown>): Promise<void> {
  await deps.audit(auditEvent({ tenantId, actor: by.actor, action, target, outcome: 'success', requestId: by.requestId, details }));
  await deps.invalidate(tenantId);
}

/** Adds a budget policy, audited; every web process sees it at once. */
export async function createBudgetPolicy(
  deps: BudgetAdminDeps,
  tenantId: string,
  input: Static<typeof BudgetPolicyInputSchema>,
  by: Actor,
): Promise<BudgetPolicy> {
  const policy = await deps.repository.budgets.createPolicy({
    id: `bud_${ulid().toLowerCase()}`,
    tenantId,
    feature: input.feature ?? null,
    window: input.window,
    limitMicros: input.limit_micros,
  });
  await record(deps, tenantId, by, 'budget.created', policy.id, { feature: policy.feature, window: policy.window, limit_micros: policy.limitMicros });
  return policy;
}

/** Removes a budget policy, audited; 404 when the tenant has no such policy. */
export async function deleteBudgetPolicy(deps: BudgetAdminDeps, tenantId: string, id: string, by: Actor): Promise<void> {
  if (!(await deps.repository.budgets.deletePolicy(tenantId, id))) throw new ResourceNotFoundError(`Budget '${id}'`);
  await record(deps, tenantId, by, 'budget.deleted', id, {});
}

/** Tops up the credit account (created by the first top-up), in the store and in Redis, audited. */
export async function topUpCredits(deps: BudgetAdminDeps, tenantId: string, input: Static<typeof TopUpInputSchema>, by: Actor): Promise<CreditTopUp> {
  const id = input.id ?? `top_${ulid().toLowerCase()}`;
  const topUp = await deps.repository.budgets.topUp({ id, tenantId, amountMicros: input.amount_micros, actor: by.actor });
  // A retried top-up (same id) is stored once. The live balance is brought up to the store's sum, read after the
  // insert, rather than raised by this amount: a retry, or a call that sees another top-up's row, raises it once,
  // and a retry after a failed Redis call completes what the first did not.
  await deps.creditRedis(tenantId, (await deps.repository.budgets.creditToppedUp(tenantId)) ?? topUp.amountMicros, topUp.amountMicros);
  await record(deps, tenantId, by, 'credits.topped_up', topUp.id, { amount_micros: topUp.amountMicros });
  return topUp;
}

/** Replaces the tenant's plan (rate limits, queue cap and the price of a cache hit), audited. */
export async function setTenantPlan(deps: BudgetAdminDeps, tenantId: string, input: Static<typeof PlanInputSchema>, by: Actor): Promise<TenantPlan> {
  const plan = await deps.repository.budgets.setPlan({
    tenantId,
    requestsPerMinute: input.requests_per_minute ?? null,
    tokensPerMinute: input.tokens_per_minute ?? null,
    keyRequestsPerMinute: input.key_requests_per_minute ?? null,
    keyTokensPerMinute: input.key_tokens_per_minute ?? null,
    maxQueued: input.max_queued ?? null,
    cacheHitPriceMicros: input.cache_hit_price_micros ?? null,
  });
  await record(deps, tenantId, by, 'plan.updated', `tenant:${tenantId}`, { ...input });
  return plan;
}
