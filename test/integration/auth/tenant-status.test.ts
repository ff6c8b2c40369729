/** Disabled tenants at authentication: the tenant status cache and the Authenticator over a real PostgreSQL store. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyAuthenticator } from '../../../src/web/auth/api-key-authenticator.ts';
import { generateApiKey } from '../../../src/domain/access/api-key-secret.ts';
import { Authenticator, type TokenVerifier } from '../../../src/web/auth/authenticator.ts';
import { TenantStatusCache } from '../../../src/web/auth/tenant-status.ts';
import { createPostgresRepository } from '../../../src/infra/store/postgres/adapter.ts';
import type { Repository, TenantRepository } from '../../../src/infra/store/repository.ts';
import { GatewayError, InvalidApiKeyError, InvalidTokenError, ServiceUnavailableError } from '../../../src/errors/gateway-error.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.ts';

const TTL_MS = 5_000;
let database: TestDatabase;
let repository: Repository;

beforeAll(async () => {
  database = await createTestDatabase();
  repository = createPostgresRepository(database.url);
  await repository.migrate();
  await repository.tenants.create({ id: 'acme', name: 'Acme' });
});

afterAll(async () => {
  await repository?.close();
  await database?.drop();
});

/** The tenant repository with `get` counted. */
function counted(): { tenants: TenantRepository; calls: () => number } {
  let calls = 0;
  const tenants = {
    ...repository.tenants,
    get: (id: string) => {
      calls++;
      return repository.tenants.get(id);
    },
  };
  return { tenants, calls: () => calls };
}

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe('TenantStatusCache', () => {
  it('caches the status for the TTL, and an invalidation drops it at once', async () => {
    await repository.tenants.create({ id: 'cached-co', name: 'Cached' });
    let now = 0;
    const spy = counted();
    const status = new TenantStatusCache(spy.tenants, TTL_MS, () => now);
    expect(await status.isDisabled('cached-co')).toBe(false);
    await repository.tenants.update('cached-co', { disabled: true });
    expect(await status.isDisabled('cached-co')).toBe(false);
    status.invalidate('cached-co');
    expect(await status.isDisabled('cached-co')).toBe(true);
    await repository.tenants.update('cached-co', { disabled: false });
    now += TTL_MS;
    expect(await status.isDisabled('cached-co')).toBe(false);
    expect(spy.calls()).toBe(3);
  });

  it('does not take a tenant the store does not know for disabled (JWT tenants need not be stored)', async () => {
    expect(await new TenantStatusCache(repository.tenants, TTL_MS).isDisabled('never-stored')).toBe(false);
  });

  it('answers 503 when the store is down, and does not cache the outage', async () => {
    const closed = createPostgresRepository(database.url);
    await closed.close();
    expect(await rejection(new TenantStatusCache(closed.tenants, TTL_MS).isDisabled('acme'))).toBeInstanceOf(ServiceUnavailableError);
  });
});

describe('Authenticator: disabled tenants', () => {
  const verifier = (tenantId: string): TokenVerifier => ({ verify: async () => ({ tenantId, role: 'developer', keyId: 'jwt:user-1' }) });
  const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEifQ.c2ln';

  it("refuses a disabled tenant's keys as invalid_api_key and its JWTs as invalid_token, until it is enabled", async () => {
    await repository.tenants.create({ id: 'off-co', name: 'Off' });
    const key = generateApiKey();
    await repository.apiKeys.create({ id: key.id, tenantId: 'off-co', role: 'admin', secretHash: key.secretHash });
    const authenticator = new Authenticator(new ApiKeyAuthenticator(repository, TTL_MS), verifier('off-co'), new TenantStatusCache(repository.tenants, TTL_MS));
    expect((await authenticator.authenticate(`Bearer ${key.secret}`)).tenantId).toBe('off-co');
    expect((await authenticator.authenticate(`Bearer ${jwt}`)).keyId).toBe('jwt:user-1');

    await repository.tenants.update('off-co', { disabled: true });
    authenticator.invalidateTenant('off-co');
    const keyError = await rejection(authenticator.authenticate(`Bearer ${key.secret}`));
    expect(keyError).toBeInstanceOf(InvalidApiKeyError);
    expect([keyError.status, keyError.code]).toEqual([401, 'invalid_api_key']);
    expect((keyError as InvalidApiKeyError).knownKey).toEqual({ tenantId: 'off-co', keyId: key.id, reason: 'tenant_disabled' });
    const tokenError = await rejection(authenticator.authenticate(`Bearer ${jwt}`));
    expect(tokenError).toBeInstanceOf(InvalidTokenError);
    expect([tokenError.status, tokenError.code, (tokenError as InvalidTokenError).reason]).toEqual([401, 'invalid_token', 'tenant_disabled']);

    await repository.tenants.update('off-co', { disabled: false });
    authenticator.invalidateTenant('off-co');
    expect((await authenticator.authenticate(`Bearer ${key.secret}`)).tenantId).toBe('off-co');
  });
});
