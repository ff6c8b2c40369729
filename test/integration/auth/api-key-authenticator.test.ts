/** API key authentication against a real PostgreSQL store, with an injected clock for the cache. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyAuthenticator } from '../../../src/web/auth/api-key-authenticator.ts';
import { generateApiKey } from '../../../src/domain/access/api-key-secret.ts';
import { createPostgresRepository } from '../../../src/infra/store/postgres/adapter.ts';
import type { Repository, Role } from '../../../src/infra/store/repository.ts';
import { GatewayError, InvalidApiKeyError, MissingApiKeyError, ServiceUnavailableError } from '../../../src/errors/gateway-error.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.ts';

const TTL_MS = 5_000;
let database: TestDatabase;
let repository: Repository;

beforeAll(async () => {
  database = await createTestDatabase();
  repository = createPostgresRepository(database.url);
  await repository.migrate();
  await repository.tenants.create({ id: 'acme', name: 'Acme' });
  await repository.tenants.create({ id: 'globex', name: 'Globex' });
});

afterAll(async () => {
  await repository?.close();
  await database?.drop();
});

async function issue(tenantId: string, role: Role): Promise<{ id: string; secret: string }> {
  const key = generateApiKey();
  await repository.apiKeys.create({ id: key.id, tenantId, role, secretHash: key.secretHash });
  return { id: key.id, secret: key.secret };
}

/** The real repository with findByHash counted (and, when given, answered by another repository). */
function counted(target: () => Repository = () => repository): { repository: Repository; calls: () => number } {
  let calls = 0;
  const apiKeys = {
    ...repository.apiKeys,
    findByHash: (hash: string) => {
      calls++;
      return target().apiKeys.findByHash(hash);
    },
  };
  return { repository: { ...repository, apiKeys }, calls: () => calls };
}

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe('ApiKeyAuthenticator: the header', () => {
  it.each([undefined, '', '   '])('answers a missing header (%j) with MissingApiKeyError', async (header) => {
    const error = await rejection(new ApiKeyAuthenticator(repository, TTL_MS).authenticate(header));
    expect(error).toBeInstanceOf(MissingApiKeyError);
    expect([error.status, error.type, error.code]).toEqual([401, 'authentication_error', 'missing_api_key']);
  });

  it.each(['Basic x', 'Bearer', 'Bearer a b', 'gwk_abc'])('answers %j with InvalidApiKeyError', async (header) => {
    const error = await rejection(new ApiKeyAuthenticator(repository, TTL_MS).authenticate(header));
    expect(error).toBeInstanceOf(InvalidApiKeyError);
    expect([error.status, error.code]).toEqual([401, 'invalid_api_key']);
  });

  it('rejects a token without the gwk_ prefix without asking the store', async () => {
    const spy = counted();
    const error = await rejection(new ApiKeyAuthenticator(spy.repository, TTL_MS).authenticate('Bearer sk-proj-abc'));
    expect(error).toBeInstanceOf(InvalidApiKeyError);
    expect(spy.calls()).toBe(0);
  });
});

describe('ApiKeyAuthenticator: lookups', () => {
  it('answers an unknown gwk_ key with InvalidApiKeyError', async () => {
    const error = await rejection(new ApiKeyAuthenticator(repository, TTL_MS).authenticate(`Bearer ${generateApiKey().secret}`));
    expect(error).toBeInstanceOf(InvalidApiKeyError);
  });

  it('resolves a valid key to its principal, case-insensitively on the scheme', async () => {
    const developer = await issue('acme', 'developer');
    const auditor = await issue('globex', 'auditor');
    const authenticator = new ApiKeyAuthenticator(repository, TTL_MS);
    // A key issued without limits of its own carries none: the plan's apply.
    const limits = { requestsPerMinute: null, tokensPerMinute: null, maxConcurrent: null };
    expect(await authenticator.authenticate(`Bearer ${developer.secret}`)).toEqual({ tenantId: 'acme', role: 'developer', keyId: developer.id, limits });
    expect(await authenticator.authenticate(`bearer   ${auditor.secret}  `)).toEqual({ tenantId: 'globex', role: 'auditor', keyId: auditor.id, limits });
  });

  it('keeps a revoked key working until the TTL passes, then refuses it', async () => {
    const key = await issue('acme', 'app');
    let now = 1_000_000;
    const spy = counted();
    const authenticator = new ApiKeyAuthenticator(spy.repository, TTL_MS, () => now);
    expect((await authenticator.authenticate(`Bearer ${key.secret}`)).keyId).toBe(key.id);
    expect(await repository.apiKeys.revoke(key.id)).toMatchObject({ id: key.id, revokedAt: expect.any(Date) });
    now += TTL_MS - 1;
    expect((await authenticator.authenticate(`Bearer ${key.secret}`)).role).toBe('app');
    expect(spy.calls()).toBe(1);
    now += 1;
    expect(await rejection(authenticator.authenticate(`Bearer ${key.secret}`))).toBeInstanceOf(InvalidApiKeyError);
    expect(spy.calls()).toBe(2);
  });

  it('refuses a key revoked before its first use', async () => {
    const key = await issue('acme', 'admin');
    await repository.apiKeys.revoke(key.id);
    expect(await rejection(new ApiKeyAuthenticator(repository, TTL_MS).authenticate(`Bearer ${key.secret}`))).toBeInstanceOf(InvalidApiKeyError);
  });

  it('caches unknown keys too, for the TTL', async () => {
    let now = 5_000_000;
    const spy = counted();
    const authenticator = new ApiKeyAuthenticator(spy.repository, TTL_MS, () => now);
    const key = generateApiKey();
    for (let i = 0; i < 3; i++) await rejection(authenticator.authenticate(`Bearer ${key.secret}`));
    expect(spy.calls()).toBe(1);
    // Created after the first lookup: still unknown to this process until the entry expires.
    await repository.apiKeys.create({ id: key.id, tenantId: 'acme', role: 'developer', secretHash: key.secretHash });
    expect(await rejection(authenticator.authenticate(`Bearer ${key.secret}`))).toBeInstanceOf(InvalidApiKeyError);
    now += TTL_MS;
    expect((await authenticator.authenticate(`Bearer ${key.secret}`)).keyId).toBe(key.id);
    expect(spy.calls()).toBe(2);
  });

  it('does not cache with a TTL of 0', async () => {
    const key = await issue('acme', 'developer');
    const spy = counted();
    const authenticator = new ApiKeyAuthenticator(spy.repository, 0);
    await authenticator.authenticate(`Bearer ${key.secret}`);
    await authenticator.authenticate(`Bearer ${key.secret}`);
    expect(spy.calls()).toBe(2);
  });

  it('makes one store call for concurrent lookups of one key', async () => {
    const key = await issue('acme', 'developer');
    const spy = counted();
    const authenticator = new ApiKeyAuthenticator(spy.repository, TTL_MS);
    const principals = await Promise.all(Array.from({ length: 20 }, () => authenticator.authenticate(`Bearer ${key.secret}`)));
    expect(new Set(principals.map((p) => p.keyId))).toEqual(new Set([key.id]));
    expect(spy.calls()).toBe(1);
  });
});

describe('ApiKeyAuthenticator: expiry and invalidation', () => {
  it('refuses a key from its expiry on, even from the cache, naming the known key for the audit', async () => {
    let now = Date.now();
    const key = generateApiKey();
    const record = await repository.apiKeys.create({ id: key.id, tenantId: 'acme', role: 'app', secretHash: key.secretHash, expiresAt: new Date(now + 1_000) });
    const spy = counted();
    const authenticator = new ApiKeyAuthenticator(spy.repository, TTL_MS, () => now);
    expect((await authenticator.authenticate(`Bearer ${key.secret}`)).keyId).toBe(key.id);
    now += 1_000;
    const error = await rejection(authenticator.authenticate(`Bearer ${key.secret}`));
    expect(error).toBeInstanceOf(InvalidApiKeyError);
    expect(error.message).toContain(record.expiresAt?.toISOString());
    expect((error as InvalidApiKeyError).knownKey).toEqual({ tenantId: 'acme', keyId: key.id, reason: 'expired_key' });
    expect(spy.calls()).toBe(1);
  });

  it("drops only the invalidated tenant's cached keys", async () => {
    const [mine, theirs] = [await issue('acme', 'app'), await issue('globex', 'app')];
    const spy = counted();
    const authenticator = new ApiKeyAuthenticator(spy.repository, TTL_MS, () => 0);
    await authenticator.authenticate(`Bearer ${mine.secret}`);
    await authenticator.authenticate(`Bearer ${theirs.secret}`);
    await repository.apiKeys.revoke(mine.id);
    authenticator.invalidateTenant('acme');
    const error = await rejection(authenticator.authenticate(`Bearer ${mine.secret}`));
    expect((error as InvalidApiKeyError).knownKey).toEqual({ tenantId: 'acme', keyId: mine.id, reason: 'revoked_key' });
    expect((await authenticator.authenticate(`Bearer ${theirs.secret}`)).keyId).toBe(theirs.id);
    expect(spy.calls()).toBe(3);
  });

  it('does not keep the answer of a lookup that was under way when the tenant was invalidated', async () => {
    const key = await issue('acme', 'developer');
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const apiKeys = {
      ...repository.apiKeys,
      findByHash: async (hash: string) => {
        calls++;
        const record = await repository.apiKeys.findByHash(hash);
        if (calls === 1) await gate;
        return record;
      },
    };
    const authenticator = new ApiKeyAuthenticator({ ...repository, apiKeys }, TTL_MS, () => 0);
    const stale = authenticator.authenticate(`Bearer ${key.secret}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await repository.apiKeys.revoke(key.id);
    authenticator.invalidateTenant('acme');
    release();
    expect((await stale).keyId).toBe(key.id);
    expect(await rejection(authenticator.authenticate(`Bearer ${key.secret}`))).toBeInstanceOf(InvalidApiKeyError);
    expect(calls).toBe(2);
  });
});

describe('ApiKeyAuthenticator: store outage', () => {
  it('answers 503 service_unavailable when the pool is closed', async () => {
    const closed = createPostgresRepository(database.url);
    await closed.close();
    const key = await issue('acme', 'developer');
    const error = await rejection(new ApiKeyAuthenticator(closed, TTL_MS).authenticate(`Bearer ${key.secret}`));
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect([error.status, error.code, error.retryAfterSeconds]).toEqual([503, 'service_unavailable', 1]);
  });

  it('answers 503 when the database is gone, and does not cache the outage', async () => {
    const gone = await createTestDatabase();
    await gone.drop();
    const dead = createPostgresRepository(gone.url);
    let backing = dead;
    const spy = counted(() => backing);
    const authenticator = new ApiKeyAuthenticator(spy.repository, TTL_MS, () => 0);
    const key = await issue('acme', 'developer');
    try {
      const error = await rejection(authenticator.authenticate(`Bearer ${key.secret}`));
      expect(error).toBeInstanceOf(ServiceUnavailableError);
      expect(error.message).not.toContain(gone.name);
      backing = repository;
      expect((await authenticator.authenticate(`Bearer ${key.secret}`)).keyId).toBe(key.id);
      expect(spy.calls()).toBe(2);
    } finally {
      await dead.close();
    }
  });
});
