import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { BudgetLedger, BudgetSnapshot } from '../../../domain/budget/budget-ledger.ts';
import type { TenantSettingsCache } from '../../../domain/tenants/tenant-settings.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';
import { AUTHENTICATED, errors, json, type RouteDocs } from '../../../wire/route-doc.ts';

const Micros = (description: string) => Type.Integer({ description: `${description}, in micro-units of the tenant's currency.` });

/** GET /v1/budgets's answer: each budget with its current window, and the credit account (null when credits are not enforced). */
export const BudgetsAnswerSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({
      object: Type.Literal('budget'),
      id: Type.String(),
      scope: Type.Union([Type.Literal('tenant'), Type.Literal('feature')]),
      feature: Type.Union([Type.String(), Type.Null()]),
      window: Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('month')]),
      limit_micros: Micros('The limit per window'),
      spent_micros: Micros('Settled spend of the window'),
      reserved_micros: Micros('Held by requests in flight'),
      remaining_micros: Micros('What is left'),
      resets_at: Type.String({ format: 'date-time' }),
    }),
  ),
  credit: Type.Union([Type.Object({ balance_micros: Micros('The balance'), reserved_micros: Micros('Held by requests in flight') }), Type.Null()]),
});

/** The OpenAPI document's word on the route. */
export const budgetDocs: RouteDocs = {
  'GET /v1/budgets': {
    operationId: 'listBudgets',
    summary: 'Inspect budget consumption',
    tags: ['Budgets'],
    credentials: 'bearer',
    responses: { 200: json("The tenant's budgets and credit.", BudgetsAnswerSchema), ...errors('openai', AUTHENTICATED) },
  },
};

/** A budget snapshot on the wire. */
export function budgetsJson(snapshot: BudgetSnapshot): Static<typeof BudgetsAnswerSchema> {
  return {
    object: 'list',
    data: snapshot.budgets.map((budget) => ({
      object: 'budget',
      id: budget.policy.id,
      scope: budget.policy.feature === null ? 'tenant' : 'feature',
      feature: budget.policy.feature,
      window: budget.policy.window,
      limit_micros: budget.policy.limitMicros,
      spent_micros: budget.spentMicros,
      reserved_micros: budget.reservedMicros,
      remaining_micros: budget.remainingMicros,
      resets_at: budget.resetsAt.toISOString(),
    })),
    credit: snapshot.credit === null ? null : { balance_micros: snapshot.credit.balanceMicros, reserved_micros: snapshot.credit.reservedMicros },
  };
}

/** GET /v1/budgets: each budget of the caller's tenant with its window's spend, and the credit balance. */
export async function budgetRoutes(app: FastifyInstance, options: { ledger: BudgetLedger; settings: TenantSettingsCache }): Promise<void> {
  app.get('/v1/budgets', { config: { permission: 'budgets.read' } }, async (request) => {
    const settings = await options.settings.get(request.principal.tenantId);
    return budgetsJson(await options.ledger.snapshot(request.principal.tenantId, settings.policies, settings.creditEnforced));
  });
  rejectOtherMethods(app, '/v1/budgets', ['GET']);
}
