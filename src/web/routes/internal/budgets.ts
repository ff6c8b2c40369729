import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
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

function planJson(plan: TenantPlan) {
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

/**
 * Budget policies of the caller's own tenant (its admins), and, for the operator tenant's
 * admins only, other tenants' credit top-ups and plans.
 */
export async function internalBudgetRoutes(app: FastifyInstance, options: { admin: BudgetAdminDeps }): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
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
      if (!(await options.admin.repository.tenants.get(request.params.tenant))) throw new ResourceNotFoundError(`Tenant '${request.params.tenant}'`);
      return reply.code(201).send(topUpJson(await topUpCredits(options.admin, request.params.tenant, request.body, actorOf(request))));
    },
  );
  typed.put(
    '/tenants/:tenant/plan',
    { schema: { params: TenantParams, body: PlanInputSchema }, config: { permission: 'tenants.operate' } },
    async (request) => {
      if (!(await options.admin.repository.tenants.get(request.params.tenant))) throw new ResourceNotFoundError(`Tenant '${request.params.tenant}'`);
      return planJson(await setTenantPlan(options.admin, request.params.tenant, request.body, actorOf(request)));
    },
  );
}
