/** Contract cases of BudgetRepository and UsageRepository.spentMicros. */
import { expect, it } from 'vitest';
import type { TenantPlan, UsageRecord } from '../../../src/infra/store/repository.ts';
import { uid, type StoreContext } from './context.ts';

const HOUR_START = Date.UTC(2025, 4, 1, 12);

/** A usage record of `tenantId` with the cost, feature and time that matter here. */
function spend(tenantId: string, costMicros: number, feature: string | null, createdAt: number): UsageRecord {
  return {
    requestId: `req_${uid()}${uid()}`,
    tenantId,
    keyId: 'key_a',
    feature,
    operation: 'chat',
    requestedModel: 'fast',
    model: 'fast',
    provider: 'simulator',
    upstreamModel: 'sim-fast-1',
    promptName: null,
    promptVersion: null,
    promptTokens: 10,
    completionTokens: 5,
    totalTokens: 15,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    usageSource: 'provider',
    costMicros,
    status: 'succeeded',
    errorCode: null,
    queueWaitMs: 0,
    ttftMs: null,
    latencyMs: 100,
    stream: false,
    piiFlags: [],
    responseId: null,
    batchId: null,
    customId: null,
    deployment: null,
    cacheHit: false,
    createdAt: new Date(createdAt),
  };
}

/** Registers the budget cases against `store`. */
export function budgetCases(store: StoreContext): void {
  const budgets = () => store.repo().budgets;

  it('creates policies, lists them oldest first and reads them back exactly', async () => {
    const [tenantId, u] = [`t-${uid()}`, uid()];
    const first = await budgets().createPolicy({ id: `bp_${u}_a`, tenantId, feature: null, window: 'month', limitMicros: 9_000_000_000_000 });
    expect(first).toEqual({ id: `bp_${u}_a`, tenantId, feature: null, window: 'month', limitMicros: 9_000_000_000_000, createdAt: expect.any(Date) });
    const second = await budgets().createPolicy({ id: `bp_${u}_b`, tenantId, feature: 'search', window: 'hour', limitMicros: 1 });
    const third = await budgets().createPolicy({ id: `bp_${u}_c`, tenantId, feature: 'chat', window: 'day', limitMicros: 500 });
    expect(await budgets().listPolicies(tenantId)).toEqual([first, second, third]);
  });

  it("deletes a policy once, and never another tenant's or an unknown one", async () => {
    const [a, b, u] = [`t-${uid()}`, `t-${uid()}`, uid()];
    const mine = await budgets().createPolicy({ id: `bp_${u}_a`, tenantId: a, feature: null, window: 'day', limitMicros: 10 });
    const theirs = await budgets().createPolicy({ id: `bp_${u}_b`, tenantId: b, feature: null, window: 'day', limitMicros: 20 });
    expect(await budgets().deletePolicy(a, theirs.id)).toBe(false);
    expect(await budgets().deletePolicy(a, `bp_${uid()}`)).toBe(false);
    expect(await budgets().listPolicies(b)).toEqual([theirs]);
    expect(await budgets().deletePolicy(a, mine.id)).toBe(true);
    expect(await budgets().deletePolicy(a, mine.id)).toBe(false);
    expect(await budgets().listPolicies(a)).toEqual([]);
  });

  it("lists only the tenant's own policies", async () => {
    const [a, b] = [`t-${uid()}`, `t-${uid()}`];
    const mine = await budgets().createPolicy({ id: `bp_${uid()}`, tenantId: a, feature: 'chat', window: 'hour', limitMicros: 7 });
    await budgets().createPolicy({ id: `bp_${uid()}`, tenantId: b, feature: 'chat', window: 'hour', limitMicros: 8 });
    expect(await budgets().listPolicies(a)).toEqual([mine]);
    expect(await budgets().listPolicies(`t-${uid()}`)).toEqual([]);
  });

  it('has no credit account before the first top-up, then sums every top-up', async () => {
    const [tenantId, other] = [`t-${uid()}`, `t-${uid()}`];
    expect(await budgets().creditToppedUp(tenantId)).toBeNull();
    const first = await budgets().topUp({ id: `top_${uid()}`, tenantId, amountMicros: 5_000_000_000_000, actor: 'key_admin' });
    expect(first).toEqual({ id: first.id, tenantId, amountMicros: 5_000_000_000_000, actor: 'key_admin', createdAt: expect.any(Date) });
    await budgets().topUp({ id: `top_${uid()}`, tenantId, amountMicros: 250, actor: 'cli' });
    await budgets().topUp({ id: `top_${uid()}`, tenantId: other, amountMicros: 1_000, actor: 'cli' });
    expect(await budgets().creditToppedUp(tenantId)).toBe(5_000_000_000_250);
    expect(await budgets().creditToppedUp(other)).toBe(1_000);
  });

  it('stores a repeated top-up id once and returns the stored top-up', async () => {
    const tenantId = `t-${uid()}`;
    const input = { id: `top_${uid()}`, tenantId, amountMicros: 300, actor: 'key_admin' };
    const first = await budgets().topUp(input);
    expect(await budgets().topUp(input)).toEqual(first);
    expect(await budgets().topUp({ ...input, amountMicros: 999 })).toEqual(first);
    expect(await budgets().creditToppedUp(tenantId)).toBe(300);
  });

  it('has no plan until one is set, then upserts it with null fields kept', async () => {
    const [tenantId, other] = [`t-${uid()}`, `t-${uid()}`];
    expect(await budgets().getPlan(tenantId)).toBeNull();
    const plan: TenantPlan = {
      tenantId,
      requestsPerMinute: 60,
      tokensPerMinute: null,
      keyRequestsPerMinute: 10,
      keyTokensPerMinute: null,
      maxQueued: 4,
      cacheHitPriceMicros: 250,
    };
    expect(await budgets().setPlan(plan)).toEqual(plan);
    expect(await budgets().getPlan(tenantId)).toEqual(plan);
    const changed: TenantPlan = {
      tenantId,
      requestsPerMinute: null,
      tokensPerMinute: 100_000,
      keyRequestsPerMinute: null,
      keyTokensPerMinute: 5_000,
      maxQueued: null,
      cacheHitPriceMicros: null,
    };
    expect(await budgets().setPlan(changed)).toEqual(changed);
    expect(await budgets().getPlan(tenantId)).toEqual(changed);
    expect(await budgets().getPlan(other)).toBeNull();
  });

  it("sums spend of one feature or all, since inclusive and until exclusive, never another tenant's", async () => {
    const [tenantId, other] = [`t-${uid()}`, `t-${uid()}`];
    const [since, until] = [new Date(HOUR_START), new Date(HOUR_START + 3_600_000)];
    await store
      .repo()
      .usage.insertMany([
        spend(tenantId, 1, 'chat', HOUR_START - 1),
        spend(tenantId, 10, 'chat', HOUR_START),
        spend(tenantId, 100, 'search', HOUR_START + 5),
        spend(tenantId, 1_000, null, HOUR_START + 10),
        spend(tenantId, 4_000_000_000_000, 'chat', until.getTime() - 1),
        spend(tenantId, 10_000, 'chat', until.getTime()),
        spend(other, 100_000, 'chat', HOUR_START + 1),
      ]);
    const spent = async (feature: string | null) => (await store.repo().usage.spentMicros(tenantId, feature, since, until, [])).micros;
    expect(await spent(null)).toBe(4_000_000_001_110);
    expect(await spent('chat')).toBe(4_000_000_000_010);
    expect(await spent('search')).toBe(100);
    expect(await spent('none')).toBe(0);
    expect(await store.repo().usage.spentMicros(`t-${uid()}`, null, since, until, [])).toEqual({ micros: 0, counted: [] });
  });

  it('finds the request that answered an Idempotency-Key since a time: succeeded or charged, of the tenant', async () => {
    const [tenantId, other] = [`t-${uid()}`, `t-${uid()}`];
    const keyed = (record: UsageRecord, key: string, changes: Partial<UsageRecord> = {}): UsageRecord => ({ ...record, idempotencyKey: key, ...changes });
    const answered = keyed(spend(tenantId, 10, null, HOUR_START + 10), 'k-answered');
    const free = keyed(spend(tenantId, 0, null, HOUR_START), 'k-failed', { status: 'failed' });
    const charged = keyed(spend(tenantId, 5, null, HOUR_START), 'k-charged', { status: 'cancelled' });
    const early = keyed(spend(tenantId, 10, null, HOUR_START - 1), 'k-early');
    await store.repo().usage.insertMany([answered, free, charged, early, keyed(spend(other, 10, null, HOUR_START), 'k-other')]);
    const since = new Date(HOUR_START);
    const answeredBy = (tenant: string, key: string) => store.repo().usage.answeredBy(tenant, key, since);
    expect(await answeredBy(tenantId, 'k-answered')).toBe(answered.requestId);
    expect(await answeredBy(tenantId, 'k-charged')).toBe(charged.requestId);
    expect(await answeredBy(tenantId, 'k-failed')).toBeNull();
    expect(await answeredBy(tenantId, 'k-early')).toBeNull();
    expect(await answeredBy(tenantId, 'k-other')).toBeNull();
    expect(await answeredBy(tenantId, 'k-never')).toBeNull();
  });

  it('says which of the requests asked about its sum counts: those of the window, the feature and the tenant', async () => {
    const [tenantId, other] = [`t-${uid()}`, `t-${uid()}`];
    const [since, until] = [new Date(HOUR_START), new Date(HOUR_START + 3_600_000)];
    const records = [
      spend(tenantId, 10, 'chat', HOUR_START),
      spend(tenantId, 100, 'search', HOUR_START + 5),
      spend(tenantId, 1_000, 'chat', until.getTime()),
      spend(other, 10_000, 'chat', HOUR_START + 1),
    ];
    await store.repo().usage.insertMany(records);
    const [inChat, inSearch, afterWindow, otherTenant] = records.map((record) => record.requestId);
    const asked = [inChat, inSearch, afterWindow, otherTenant, 'req_never_stored'] as string[];
    const all = await store.repo().usage.spentMicros(tenantId, null, since, until, asked);
    expect(all.micros).toBe(110);
    expect([...all.counted].sort()).toEqual([inChat, inSearch].sort());
    expect(await store.repo().usage.spentMicros(tenantId, 'chat', since, until, asked)).toEqual({ micros: 10, counted: [inChat] });
    expect(await store.repo().usage.spentMicros(tenantId, 'chat', since, until, [])).toEqual({ micros: 10, counted: [] });
  });
}
