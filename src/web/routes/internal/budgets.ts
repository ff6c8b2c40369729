import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import type { BudgetPolicy, CreditTopUp, TenantPlan } from '../../../infra/store/repository.ts';
import {
  BudgetPolicyInputSchema,
  createBudgetPolicy,
  deleteBudgetPolicy,
  PlanInputSchema,
  setTenantPlan,
  TopUpInputSchema,
  topUpCredits,
  type BudgetAdminDeps,
} from '../../../domain/budget/budget-admin.ts';
import { ResourceNotFoundError } from '../../../errors/gateway-error.ts';
import { TenantIdSchema } from '../../../domain/tenants/tenant-id.ts';
import { actorOf } from './actor.ts';
import type { BudgetLedger } from '../../../domain/budget/budget-ledger.ts';
import type { TenantSettingsCache } from '../../../domain/tenants/tenant-settings.ts';
import { budgetsJson } from '../v1/budgets.ts';

const TenantParams = Type.Object({ tenant: TenantIdSchema });

function policyJson(policy: BudgetPolicy) {
  return {
    object: 'budget',
    id: policy.id,
    feature: policy.feature,
    window: policy.window,
    limit_micros: policy.limitMicros,
    created_at: policy.createdAt.toISOString(),
  };
}

function topUpJson(topUp: CreditTopUp) {
  return { object: 'credit.top_up', id: topUp.id, amount_micros: topUp.amountMicros, created_at: topUp.createdAt.toISOString() };
}

const Limit = (description: string, minimum = 0) =>
  Type.Union([Type.Integer({ minimum }), Type.Null()], { description: `${description}; null: the default${minimum === 0 ? ', 0: no limit' : ''}.` });

/** A tenant's plan on the wire (PUT and GET /internal/v1/tenants/{tenant}/plan). */
export const PlanSchema = Type.Object({
  object: Type.Literal('plan'),
  tenant: Type.String(),
  requests_per_minute: Limit("The tenant's requests a minute"),
  tokens_per_minute: Limit("The tenant's tokens a minute"),
  key_requests_per_minute: Limit("Each key's requests a minute"),
  key_tokens_per_minute: Limit("Each key's tokens a minute"),
  max_queued: Limit('Requests queued or running at once', 1),
  cache_hit_price_micros: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: 'What each answer served by the response cache costs (micro-units), charged to the budgets and credit; null: nothing.',
  }),
});

function planJson(plan: TenantPlan): Static<typeof PlanSchema> {
  return {
    object: 'plan',
    tenant: plan.tenantId,
    requests_per_minute: plan.requestsPerMinute,
    tokens_per_minute: plan.tokensPerMinute,
    key_requests_per_minute: plan.keyRequestsPerMinute,
    key_tokens_per_minute: plan.keyTokensPerMinute,
    max_queued: plan.maxQueued,
    cache_hit_price_micros: plan.cacheHitPriceMicros,
  };
}

/** A tenant without a plan: every limit is the configured default's. */
function noPlan(tenantId: string): TenantPlan {
  return {
    tenantId,
    requestsPerMinute: null,
    tokensPerMinute: null,
    keyRequestsPerMinute: null,
    keyTokensPerMinute: null,
    maxQueued: null,
    cacheHitPriceMicros: null,
  };
}

/**
 * Budget policies of the caller's own tenant (its admins), and, for the operator tenant's
 * admins only, other tenants' budgets, credits and plans.
 */
export async function internalBudgetRoutes(
  app: FastifyInstance,
  options: { admin: BudgetAdminDeps; ledger: BudgetLedger; settings: TenantSettingsCache },
): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  const knownTenant = async (tenantId: string) => {
    if (!(await options.admin.repository.tenants.get(tenantId))) throw new ResourceNotFoundError(`Tenant '${tenantId}'`);
  };
  typed.get('/tenants/:tenant/budgets', { schema: { params: TenantParams }, config: { permission: 'tenants.read' } }, async (request) => {
    await knownTenant(request.params.tenant);
    const settings = await options.settings.get(request.params.tenant);
    return budgetsJson(await options.ledger.snapshot(request.params.tenant, settings.policies, settings.creditEnforced));
  });
  typed.get('/tenants/:tenant/plan', { schema: { params: TenantParams }, config: { permission: 'tenants.read' } }, async (request) => {
    await knownTenant(request.params.tenant);
    return planJson((await options.admin.repository.budgets.getPlan(request.params.tenant)) ?? noPlan(request.params.tenant));
  });
  typed.post('/budgets', { schema: { body: BudgetPolicyInputSchema }, config: { permission: 'budgets.write' } }, async (request, reply) => {
    const policy = await createBudgetPolicy(options.admin, request.principal.tenantId, request.body, actorOf(request));
    return reply.code(201).send(policyJson(policy));
  });
  typed.delete(
    '/budgets/:id',
    { schema: { params: Type.Object({ id: Type.String({ minLength: 1 }) }) }, config: { permission: 'budgets.write' } },
    async (request, reply) => {
      await deleteBudgetPolicy(options.admin, request.principal.tenantId, request.params.id, actorOf(request));
      return reply.code(204).send();
    },
  );
  typed.post(
    '/tenants/:tenant/credits',
    { schema: { params: TenantParams, body: TopUpInputSchema }, config: { permission: 'tenants.operate' } },
    async (request, reply) => {
      await knownTenant(request.params.tenant);
      return reply.code(201).send(topUpJson(await topUpCredits(options.admin, request.params.tenant, request.body, actorOf(request))));
    },
  );
  typed.put(
    '/tenants/:tenant/plan',
    { schema: { params: TenantParams, body: PlanInputSchema }, config: { permission: 'tenants.operate' } },
    async (request) => {
      await knownTenant(request.params.tenant);
      return planJson(await setTenantPlan(options.admin, request.params.tenant, request.body, actorOf(request)));
    },
  );
}
