import type { FastifyInstance } from 'fastify';
import type { BudgetLedger, BudgetSnapshot } from '../../budget/budget-ledger.ts';
import type { TenantSettingsCache } from '../../tenants/tenant-settings.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

/** A budget snapshot on the wire. */
export function budgetsJson(snapshot: BudgetSnapshot) {
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
  app.get('/v1/budgets', { config: { operation: 'budgets.read' } }, async (request) => {
    const settings = await options.settings.get(request.principal.tenantId);
    return budgetsJson(await options.ledger.snapshot(request.principal.tenantId, settings.policies, settings.creditEnforced));
  });
  rejectOtherMethods(app, '/v1/budgets', ['GET']);
}
