/**
 * The tenants of bench/admission-cost.ts: the "full" one (budgets, credit account, a finite plan)
 * created straight in the store, and a count of what admission left in Redis for each tenant.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createPostgresRepository } from '../src/infra/store/postgres/adapter.ts';
import { generateApiKey } from '../src/domain/access/api-key-secret.ts';
import type { TenantPlan } from '../src/infra/store/repository.ts';

/** Far more than a run can spend, so that no budget or credit check ever refuses. */
export const LARGE_MICROS = 1_000_000_000_000_000;

/** High but finite limits: the rate limiter runs on every request yet never refuses one. */
export const FULL_PLAN: Omit<TenantPlan, 'tenantId'> = {
  requestsPerMinute: 1_000_000,
  tokensPerMinute: 1_000_000_000,
  keyRequestsPerMinute: 1_000_000,
  keyTokensPerMinute: 1_000_000_000,
  maxQueued: null,
  cacheHitPriceMicros: null,
};

/** A tenant with an `app` key, as the bench uses it. */
export interface BenchTenant {
  tenantId: string;
  apiKey: string;
}

/** Creates the "full" tenant: a key, a daily and a monthly budget, a credit top-up and FULL_PLAN. */
export async function createFullTenant(databaseUrl: string): Promise<BenchTenant> {
  const repository = createPostgresRepository(databaseUrl);
  try {
    const tenant = await repository.tenants.create({ id: `bench_full_${randomBytes(4).toString('hex')}`, name: 'bench full' });
    const key = generateApiKey();
    await repository.apiKeys.create({ id: key.id, tenantId: tenant.id, role: 'app', secretHash: key.secretHash });
    await repository.budgets.createPolicy({ id: 'bud_bench_day', tenantId: tenant.id, feature: null, window: 'day', limitMicros: LARGE_MICROS });
    await repository.budgets.createPolicy({ id: 'bud_bench_month', tenantId: tenant.id, feature: null, window: 'month', limitMicros: LARGE_MICROS });
    await repository.budgets.topUp({ id: 'top_bench', tenantId: tenant.id, amountMicros: LARGE_MICROS, actor: 'bench' });
    await repository.budgets.setPlan({ tenantId: tenant.id, ...FULL_PLAN });
    return { tenantId: tenant.id, apiKey: key.secret };
  } finally {
    await repository.close();
  }
}

/** Redis keys of one tenant by kind (rate, idem, budget, budget-exp, credit, outstanding, settled, …). */
export async function countTenantKeys(redis: Redis, prefix: string, tenantId: string): Promise<Record<string, number>> {
  const head = `${prefix}:{${tenantId}}:`;
  const counts: Record<string, number> = {};
  let cursor = '0';
  // SCAN walks the whole keyspace of the shared Redis; the bound only guards against a cursor that never returns to 0.
  for (let i = 0; i < 1_000_000; i++) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${head}*`, 'COUNT', 5_000);
    for (const key of keys) {
      const kind = key.slice(head.length).split(':', 1)[0] ?? '';
      counts[kind] = (counts[kind] ?? 0) + 1;
    }
    cursor = next;
    if (cursor === '0') break;
  }
  return counts;
}
