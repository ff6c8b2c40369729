/** Contract cases of TenantRepository, ApiKeyRepository and the repository's own lifecycle. */
import { expect, it } from 'vitest';
import { generateApiKey } from '../../../src/domain/access/api-key-secret.ts';
import { TenantExistsError, TenantNotFoundError, type Repository, type Role } from '../../../src/infra/store/repository.ts';
import { uid, type StoreContext } from './context.ts';

/** Registers the tenant, key and lifecycle cases against `store` of the given `kind`. */
export function tenantAndKeyCases(store: StoreContext, kind: Repository['kind']): void {
  const repo = () => store.repo();
  const newTenant = async () => repo().tenants.create({ id: `t-${uid()}`, name: 'Test tenant' });
  const newKey = async (tenantId: string, role: Role = 'developer') => {
    const key = generateApiKey();
    return repo().apiKeys.create({ id: key.id, tenantId, role, secretHash: key.secretHash });
  };

  it('reports its kind and answers ping', async () => {
    expect(repo().kind).toBe(kind);
    await expect(repo().ping()).resolves.toBeUndefined();
  });

  it('creates a tenant and reads it back', async () => {
    const id = `t-${uid()}`;
    const created = await repo().tenants.create({ id, name: 'Acme Inc' });
    expect(created).toEqual({ id, name: 'Acme Inc', disabled: false, createdAt: expect.any(Date) });
    expect(Math.abs(created.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect(await repo().tenants.get(id)).toEqual(created);
  });

  it('returns null for an unknown tenant', async () => {
    expect(await repo().tenants.get(`missing-${uid()}`)).toBeNull();
  });

  it('rejects a duplicate tenant id with TenantExistsError', async () => {
    const tenant = await newTenant();
    const duplicate = repo().tenants.create({ id: tenant.id, name: 'Other' });
    await expect(duplicate).rejects.toBeInstanceOf(TenantExistsError);
    await expect(repo().tenants.create({ id: tenant.id, name: 'Other' })).rejects.toMatchObject({ tenantId: tenant.id });
    expect((await repo().tenants.get(tenant.id))?.name).toBe('Test tenant');
  });

  it('creates a key and finds it by the hash of its secret', async () => {
    const tenant = await newTenant();
    const key = generateApiKey();
    const created = await repo().apiKeys.create({ id: key.id, tenantId: tenant.id, role: 'app', secretHash: key.secretHash });
    expect(created).toEqual({
      id: key.id,
      tenantId: tenant.id,
      role: 'app',
      name: null,
      secretHash: key.secretHash,
      createdAt: expect.any(Date),
      expiresAt: null,
      revokedAt: null,
      limits: { requestsPerMinute: null, tokensPerMinute: null, maxConcurrent: null },
    });
    expect(await repo().apiKeys.findByHash(key.secretHash)).toEqual(created);
  });

  it('returns null for an unknown hash', async () => {
    expect(await repo().apiKeys.findByHash(generateApiKey().secretHash)).toBeNull();
  });

  it('rejects a key for an unknown tenant with TenantNotFoundError', async () => {
    const tenantId = `missing-${uid()}`;
    const created = newKey(tenantId);
    await expect(created).rejects.toBeInstanceOf(TenantNotFoundError);
    await expect(newKey(tenantId)).rejects.toMatchObject({ tenantId });
  });

  it('rejects a second key with the same secret hash', async () => {
    const tenant = await newTenant();
    const first = await newKey(tenant.id);
    const again = repo().apiKeys.create({ id: generateApiKey().id, tenantId: tenant.id, role: 'admin', secretHash: first.secretHash });
    await expect(again).rejects.toThrow();
  });

  it('revokes a key, still finds it with revokedAt set, and keeps the first revocation time', async () => {
    const tenant = await newTenant();
    const key = await newKey(tenant.id);
    const revoked = await repo().apiKeys.revoke(key.id);
    expect(revoked).toEqual({ ...key, revokedAt: expect.any(Date) });
    expect(await repo().apiKeys.findByHash(key.secretHash)).toEqual(revoked);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await repo().apiKeys.revoke(key.id)).toEqual(revoked);
    expect((await repo().apiKeys.findByHash(key.secretHash))?.revokedAt).toEqual(revoked?.revokedAt);
  });

  it('returns null when revoking an unknown key', async () => {
    expect(await repo().apiKeys.revoke(`key_missing_${uid()}`)).toBeNull();
  });

  it("lists only the tenant's own keys, revoked ones included", async () => {
    const [a, b, empty] = [await newTenant(), await newTenant(), await newTenant()];
    const aKeys = [await newKey(a.id, 'admin'), await newKey(a.id, 'auditor')];
    const bKey = await newKey(b.id);
    await repo().apiKeys.revoke(aKeys[1]?.id ?? '');
    const listed = await repo().apiKeys.listByTenant(a.id);
    expect(listed.map((k) => k.id).sort()).toEqual(aKeys.map((k) => k.id).sort());
    expect(listed.find((k) => k.role === 'auditor')?.revokedAt).toBeInstanceOf(Date);
    expect(await repo().apiKeys.listByTenant(b.id)).toEqual([bKey]);
    expect(await repo().apiKeys.listByTenant(empty.id)).toEqual([]);
  });

  it('lists tenants ordered by id, with their disabled state', async () => {
    const u = uid();
    const [b, a] = [await repo().tenants.create({ id: `list-${u}-b`, name: 'B' }), await repo().tenants.create({ id: `list-${u}-a`, name: 'A' })];
    await repo().tenants.update(b.id, { disabled: true });
    const mine = (await repo().tenants.list()).filter((tenant) => tenant.id.startsWith(`list-${u}-`));
    expect(mine).toEqual([a, { ...b, disabled: true }]);
    const all = (await repo().tenants.list()).map((tenant) => tenant.id);
    expect(all).toEqual([...all].sort());
  });

  it('updates only the fields given, and answers null for an unknown tenant', async () => {
    const tenant = await newTenant();
    const disabled = await repo().tenants.update(tenant.id, { disabled: true });
    expect(disabled).toEqual({ ...tenant, disabled: true });
    expect(await repo().tenants.get(tenant.id)).toEqual(disabled);
    const renamed = await repo().tenants.update(tenant.id, { name: 'Renamed' });
    expect(renamed).toEqual({ ...tenant, name: 'Renamed', disabled: true });
    expect(await repo().tenants.update(tenant.id, { name: 'Both', disabled: false })).toEqual({ ...tenant, name: 'Both', disabled: false });
    expect(await repo().tenants.get(tenant.id)).toEqual({ ...tenant, name: 'Both', disabled: false });
    expect(await repo().tenants.update(tenant.id, {})).toEqual({ ...tenant, name: 'Both', disabled: false });
    expect(await repo().tenants.update(`missing-${uid()}`, { disabled: true })).toBeNull();
  });

  it('stores a key with a name and an expiry, and reads them back everywhere', async () => {
    const tenant = await newTenant();
    const key = generateApiKey();
    const expiresAt = new Date(Date.now() + 86_400_000);
    const created = await repo().apiKeys.create({ id: key.id, tenantId: tenant.id, role: 'app', secretHash: key.secretHash, name: 'ci deploy', expiresAt });
    expect(created).toMatchObject({ id: key.id, name: 'ci deploy', expiresAt });
    expect(await repo().apiKeys.findByHash(key.secretHash)).toEqual(created);
    expect(await repo().apiKeys.get(tenant.id, key.id)).toEqual(created);
    expect(await repo().apiKeys.listByTenant(tenant.id)).toEqual([created]);
    expect(await repo().apiKeys.revoke(key.id)).toEqual({ ...created, revokedAt: expect.any(Date) });
  });

  it('stores a key with its own limits, and reads them back everywhere', async () => {
    const tenant = await newTenant();
    const key = generateApiKey();
    const limits = { requestsPerMinute: 5, tokensPerMinute: 2_147_483_647, maxConcurrent: 1 };
    const created = await repo().apiKeys.create({ id: key.id, tenantId: tenant.id, role: 'app', secretHash: key.secretHash, limits });
    expect(created.limits).toEqual(limits);
    expect(await repo().apiKeys.findByHash(key.secretHash)).toEqual(created);
    expect(await repo().apiKeys.get(tenant.id, key.id)).toEqual(created);
    expect(await repo().apiKeys.listByTenant(tenant.id)).toEqual([created]);
    const other = generateApiKey();
    const partly = await repo().apiKeys.create({
      id: other.id,
      tenantId: tenant.id,
      role: 'app',
      secretHash: other.secretHash,
      limits: { tokensPerMinute: 7 },
    });
    expect(partly.limits).toEqual({ requestsPerMinute: null, tokensPerMinute: 7, maxConcurrent: null });
  });

  it('changes only the limits given, null clearing one, and answers null for an unknown key', async () => {
    const tenant = await newTenant();
    const key = await newKey(tenant.id);
    const set = await repo().apiKeys.setLimits(key.id, { requestsPerMinute: 2, maxConcurrent: 3 });
    expect(set).toEqual({ ...key, limits: { requestsPerMinute: 2, tokensPerMinute: null, maxConcurrent: 3 } });
    const cleared = await repo().apiKeys.setLimits(key.id, { requestsPerMinute: null, tokensPerMinute: 100 });
    expect(cleared).toEqual({ ...key, limits: { requestsPerMinute: null, tokensPerMinute: 100, maxConcurrent: 3 } });
    expect(await repo().apiKeys.setLimits(key.id, {})).toEqual(cleared);
    expect(await repo().apiKeys.findByHash(key.secretHash)).toEqual(cleared);
    expect(await repo().apiKeys.setLimits(`key_missing_${uid()}`, { maxConcurrent: 1 })).toBeNull();
    const revoked = await repo().apiKeys.revoke(key.id);
    expect(await repo().apiKeys.setLimits(key.id, { maxConcurrent: null })).toEqual({ ...revoked, limits: { ...cleared?.limits, maxConcurrent: null } });
  });

  it('gets a key only within its own tenant, revoked or not', async () => {
    const [owner, other] = [await newTenant(), await newTenant()];
    const key = await newKey(owner.id);
    expect(await repo().apiKeys.get(owner.id, key.id)).toEqual(key);
    expect(await repo().apiKeys.get(other.id, key.id)).toBeNull();
    expect(await repo().apiKeys.get(owner.id, `key_missing_${uid()}`)).toBeNull();
    const revoked = await repo().apiKeys.revoke(key.id);
    expect(await repo().apiKeys.get(owner.id, key.id)).toEqual(revoked);
  });

  it('migrates again, even concurrently, without touching the data', async () => {
    const tenant = await newTenant();
    const key = await newKey(tenant.id);
    await repo().migrate();
    await Promise.all([repo().migrate(), repo().migrate()]);
    expect(await repo().tenants.get(tenant.id)).toEqual(tenant);
    expect(await repo().apiKeys.findByHash(key.secretHash)).toEqual(key);
    await expect(repo().tenants.create({ id: tenant.id, name: 'x' })).rejects.toBeInstanceOf(TenantExistsError);
  });
}
