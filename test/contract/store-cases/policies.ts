/** Contract cases of PolicyRepository (PII policies). */
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
}
