/**
 * Sets up the campaign's tenants over the gateway's own surfaces: the operator tenant and its admin
 * key are made in the store (as `gateway tenants create` and `keys create` would), everything else
 * over HTTP, so that it is audited: tenants and keys (operator), budgets (each tenant's admin), the
 * response cache (its admin) and its hit price (the operator's plan), the opening top-up.
 */
import { generateApiKey } from '../../src/domain/access/api-key-secret.ts';
import type { Repository } from '../../src/infra/store/repository.ts';
import { adminCall } from './client.ts';
import type { TrafficPlan } from './traffic-plan.ts';

/** The operator's tenant id (OPERATOR_TENANT's default). */
export const OPERATOR = 'operator';

/** A tenant's secrets: its admin key and its app keys. */
export interface TenantKeys {
  id: string;
  admin: string;
  apps: string[];
}

/** Every tenant's keys, the operator's first. */
export interface CampaignTenants {
  operator: TenantKeys;
  byId: Map<string, TenantKeys>;
}

async function expect(call: Promise<{ status: number; body: any }>, status: number, what: string): Promise<any> {
  const answer = await call;
  if (answer.status !== status) throw new Error(`setup: ${what} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** Creates the operator (in the store) and the plan's tenants (over HTTP at `origin`). */
export async function setUpTenants(repository: Repository, origin: string, plan: TrafficPlan): Promise<CampaignTenants> {
  await repository.tenants.create({ id: OPERATOR, name: 'Operator' });
  const bootstrap = generateApiKey();
  await repository.apiKeys.create({ id: bootstrap.id, tenantId: OPERATOR, role: 'admin', secretHash: bootstrap.secretHash, name: 'chaos' });
  const operator: TenantKeys = { id: OPERATOR, admin: bootstrap.secret, apps: [] };
  const byId = new Map<string, TenantKeys>();
  for (const tenant of plan.tenants) {
    await expect(adminCall(origin, operator.admin, 'POST', '/internal/v1/tenants', { id: tenant.id, name: tenant.id }), 201, `tenant ${tenant.id}`);
    const key = async (role: string, name: string) =>
      (await expect(adminCall(origin, operator.admin, 'POST', '/internal/v1/keys', { tenant: tenant.id, role, name }), 201, `${role} key of ${tenant.id}`))
        .secret as string;
    const keys: TenantKeys = {
      id: tenant.id,
      admin: await key('admin', 'chaos-admin'),
      apps: [await key('app', 'chaos-app-1'), await key('app', 'chaos-app-2')],
    };
    byId.set(tenant.id, keys);
    for (const budget of tenant.budgets) {
      const body = { window: budget.window, limit_micros: budget.limitMicros };
      await expect(adminCall(origin, keys.admin, 'POST', '/internal/v1/budgets', body), 201, `${budget.window} budget of ${tenant.id}`);
    }
    if (tenant.cacheHitPriceMicros !== null) {
      const policy = { enabled: true, default_ttl_s: 3600, max_bytes: 16 * 1024 * 1024 };
      await expect(adminCall(origin, keys.admin, 'PUT', '/internal/v1/cache-policy', policy), 200, `cache policy of ${tenant.id}`);
      const price = { cache_hit_price_micros: tenant.cacheHitPriceMicros };
      await expect(adminCall(origin, operator.admin, 'PUT', `/internal/v1/tenants/${tenant.id}/plan`, price), 200, `plan of ${tenant.id}`);
    }
    if (tenant.credit) {
      const topUp = { amount_micros: plan.openingCreditMicros, id: `chaos-opening-${tenant.id}` };
      await expect(adminCall(origin, operator.admin, 'POST', `/internal/v1/tenants/${tenant.id}/credits`, topUp), 201, `opening top-up of ${tenant.id}`);
    }
  }
  return { operator, byId };
}
