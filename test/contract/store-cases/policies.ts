/** Contract cases of PolicyRepository (PII, data and response cache policies). */
import { expect, it } from 'vitest';
import { uid, type StoreContext } from './context.ts';

/** Registers the cases on a store. */
export function policyCases(store: StoreContext): void {
  const policies = () => store.repo().policies;

  it('has no PII policy until one is set, then replaces it', async () => {
    const tenantId = `t-${uid()}`;
    expect(await policies().getPii(tenantId)).toBeNull();
    expect(await policies().setPii({ tenantId, mode: 'block', critical: ['email', 'payment_card'] })).toEqual({
      tenantId,
      mode: 'block',
      critical: ['email', 'payment_card'],
    });
    await policies().setPii({ tenantId, mode: 'mask', critical: [] });
    expect(await policies().getPii(tenantId)).toEqual({ tenantId, mode: 'mask', critical: [] });
  });

  it('keeps tenants apart', async () => {
    const [a, b] = [`t-${uid()}`, `t-${uid()}`];
    await policies().setPii({ tenantId: a, mode: 'flag', critical: ['secret'] });
    expect(await policies().getPii(b)).toBeNull();
  });

  it('has no data policy until one is set, then replaces it, stamping each change', async () => {
    const tenantId = `t-${uid()}`;
    expect(await policies().getData(tenantId)).toBeNull();
    const before = Date.now();
    const first = await policies().setData({ tenantId, storeResponses: false, retentionDays: 7 });
    expect(first).toEqual({ tenantId, storeResponses: false, retentionDays: 7, updatedAt: expect.any(Date) });
    // The store's clock may differ from ours by a little.
    expect(Math.abs(first.updatedAt.getTime() - before)).toBeLessThan(60_000);
    expect(await policies().getData(tenantId)).toEqual(first);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await policies().setData({ tenantId, storeResponses: true, retentionDays: 3650 });
    expect(second).toMatchObject({ tenantId, storeResponses: true, retentionDays: 3650 });
    expect(second.updatedAt.getTime()).toBeGreaterThan(first.updatedAt.getTime());
    expect(await policies().getData(tenantId)).toEqual(second);
  });

  it('keeps data policies apart, and apart from PII policies', async () => {
    const [a, b] = [`t-${uid()}`, `t-${uid()}`];
    await policies().setData({ tenantId: a, storeResponses: false, retentionDays: 1 });
    expect(await policies().getData(b)).toBeNull();
    expect(await policies().getPii(a)).toBeNull();
    await policies().setPii({ tenantId: b, mode: 'off', critical: [] });
    expect(await policies().getData(b)).toBeNull();
  });

  it('has no cache policy until one is set, then replaces it; sizes beyond 32 bits round-trip', async () => {
    const [tenantId, other] = [`t-${uid()}`, `t-${uid()}`];
    expect(await policies().getCache(tenantId)).toBeNull();
    const first = await policies().setCache({ tenantId, enabled: true, defaultTtlS: 300, maxBytes: 8_000_000_000 });
    expect(first).toEqual({ tenantId, enabled: true, defaultTtlS: 300, maxBytes: 8_000_000_000, updatedAt: expect.any(Date) });
    expect(await policies().getCache(tenantId)).toEqual(first);
    const second = await policies().setCache({ tenantId, enabled: false, defaultTtlS: 1, maxBytes: 1024 });
    expect(second).toMatchObject({ tenantId, enabled: false, defaultTtlS: 1, maxBytes: 1024 });
    expect(await policies().getCache(tenantId)).toEqual(second);
    expect(await policies().getCache(other)).toBeNull();
    expect(await policies().getData(tenantId)).toBeNull();
  });
}
