/**
 * Tenants and API keys over /internal/v1, end to end: two web processes and a worker against
 * real Redis and PostgreSQL. KEY_CACHE_TTL_MS is the maximum (10 s), so a revocation or a
 * disabled tenant refused within a second on the other web process proves the Redis
 * invalidation, not the cache expiring.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startJwksServer, type JwksServer } from '../helpers/jwks-server.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually, type JsonResponse } from '../helpers/http.ts';

const TENANT = 'newco';
// Far below KEY_CACHE_TTL_MS: only the invalidation can make a change visible this fast.
const AT_ONCE_MS = 1_000;

let upstream: FakeUpstream;
let idp: JwksServer;
let gateway: GatewayUnderTest;
let operator: { id: string; secret: string };
let acmeAdmin: { id: string; secret: string };
/** newco's first admin key, made by the operator. */
let admin: { id: string; secret: string };

/** An origin per web process. */
const web = (i: 0 | 1) => gateway.webs[i]?.origin as string;

function complete(origin: string, secret: string): Promise<JsonResponse> {
  return call(origin, secret, 'POST', '/v1/chat/completions', { model: 'fake-gpt', messages: [{ role: 'user', content: 'hi' }] });
}

function expectError(response: JsonResponse, status: number, code: string, param: string | null = null): string {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(Object.keys(response.body)).toEqual(['error']);
  expect(response.body.error).toMatchObject({ code, param, request_id: response.headers.get('x-request-id') });
  return response.body.error.message as string;
}

/** Waits (at most AT_ONCE_MS) until `origin` answers the credential with `status`. */
async function becomes(origin: string, secret: string, status: number, what: string): Promise<void> {
  await eventually(async () => (await complete(origin, secret)).status === status, AT_ONCE_MS, what);
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  idp = await startJwksServer();
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    webs: 2,
    env: { KEY_CACHE_TTL_MS: '10000', JWT_ISSUERS: idp.issuer, JWKS_REFETCH_INTERVAL_MS: '0' },
  });
  operator = await gateway.issueKey('operator', 'admin');
  acmeAdmin = await gateway.issueKey('acme', 'admin');
});

afterAll(async () => {
  await gateway?.close();
  await idp?.close();
  await upstream?.close();
});

describe('tenants', () => {
  it('the operator creates a tenant, enabled, and lists it', async () => {
    const created = await call(web(0), operator.secret, 'POST', '/internal/v1/tenants', { id: TENANT, name: 'New Co' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual({ object: 'tenant', id: TENANT, name: 'New Co', disabled: false, created_at: expect.any(String) });
    const listed = await call(web(1), operator.secret, 'GET', '/internal/v1/tenants');
    expect(listed.status).toBe(200);
    expect(listed.body.object).toBe('list');
    expect(listed.body.data).toEqual(expect.arrayContaining([created.body, expect.objectContaining({ id: 'operator', disabled: false })]));
  });

  it('a duplicate id is 409 already_exists', async () => {
    const message = expectError(
      await call(web(0), operator.secret, 'POST', '/internal/v1/tenants', { id: TENANT, name: 'Again' }),
      409,
      'already_exists',
      'id',
    );
    expect(message).toContain(TENANT);
  });

  it.each([
    [{ id: 'Bad_Id!' }, 'invalid_value', 'id'],
    [{ name: 'no id' }, 'missing_required_field', 'id'],
    [{ id: 'ok-id', plan: 'gold' }, 'invalid_value', 'plan'],
    [{ id: 'ok-id', name: '' }, 'invalid_value', 'name'],
  ])('POST %j → 400 %s naming %s', async (body, code, param) => {
    expectError(await call(web(0), operator.secret, 'POST', '/internal/v1/tenants', body), 400, code, param);
  });

  it.each([
    [{}, 400, 'missing_required_field', 'disabled'],
    [{ disabled: 'yes' }, 400, 'invalid_value', 'disabled'],
  ])('PATCH %j → %i %s', async (body, status, code, param) => {
    expectError(await call(web(0), operator.secret, 'PATCH', `/internal/v1/tenants/${TENANT}`, body), status, code, param);
  });

  it('an unknown tenant is 404, and the operator tenant cannot disable itself', async () => {
    expectError(await call(web(0), operator.secret, 'PATCH', '/internal/v1/tenants/ghost', { disabled: true }), 404, 'not_found');
    const message = expectError(
      await call(web(0), operator.secret, 'PATCH', '/internal/v1/tenants/operator', { disabled: true }),
      400,
      'invalid_value',
      'disabled',
    );
    expect(message).toContain('operator');
    expect((await call(web(0), operator.secret, 'GET', '/internal/v1/tenants')).status).toBe(200);
  });
});

describe('keys', () => {
  let app: { id: string; secret: string };

  it("the operator issues the tenant's first admin key; the secret is shown once", async () => {
    const created = await call(web(0), operator.secret, 'POST', '/internal/v1/keys', { role: 'admin', name: 'bootstrap', tenant: TENANT });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual({
      object: 'api_key',
      id: expect.stringMatching(/^key_/),
      tenant: TENANT,
      role: 'admin',
      name: 'bootstrap',
      created_at: expect.any(String),
      expires_at: null,
      revoked_at: null,
      rpm: null,
      tpm: null,
      max_concurrent: null,
      secret: expect.stringMatching(/^gwk_/),
    });
    admin = { id: created.body.id, secret: created.body.secret };
  });

  it("the tenant's admin issues a key that completes on both web processes", async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await call(web(0), admin.secret, 'POST', '/internal/v1/keys', { role: 'app', name: 'checkout', expires_at: expiresAt });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ tenant: TENANT, role: 'app', name: 'checkout', expires_at: expiresAt });
    app = { id: created.body.id, secret: created.body.secret };
    for (const i of [0, 1] as const) expect((await complete(web(i), app.secret)).status).toBe(200);
  });

  it('lists keys without secrets or hashes', async () => {
    const listed = await call(web(1), admin.secret, 'GET', '/internal/v1/keys');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((key: { id: string }) => key.id)).toEqual([admin.id, app.id]);
    for (const key of listed.body.data)
      expect(Object.keys(key).sort()).toEqual([
        'created_at',
        'expires_at',
        'id',
        'last_used_at',
        'max_concurrent',
        'name',
        'object',
        'revoked_at',
        'role',
        'rpm',
        'tenant',
        'tpm',
      ]);
    const text = JSON.stringify(listed.body);
    expect(text).not.toContain(app.secret);
    expect(text).not.toContain(admin.secret);
    // The last use is the key's newest usage record, which the outbox stores within seconds.
    await eventually(
      async () => {
        const keys = (await call(web(1), admin.secret, 'GET', '/internal/v1/keys')).body.data as Array<{ id: string; last_used_at: string | null }>;
        return keys.find((key) => key.id === app.id)?.last_used_at !== null;
      },
      10_000,
      "the app key's last use",
    );
    const used = (await call(web(1), admin.secret, 'GET', '/internal/v1/keys')).body.data as Array<{ id: string; last_used_at: string | null }>;
    expect(Date.parse(used.find((key) => key.id === app.id)?.last_used_at as string)).toBeGreaterThan(Date.now() - 60_000);
    expect(used.find((key) => key.id === admin.id)?.last_used_at).toBeNull();
    const viaOperator = await call(web(0), operator.secret, 'GET', `/internal/v1/keys?tenant=${TENANT}`);
    // The same keys; the app key's second completion may have been stored in between.
    const withoutLastUse = (keys: Array<{ last_used_at: string | null }>) => keys.map(({ last_used_at: _lastUsedAt, ...key }) => key);
    expect(withoutLastUse(viaOperator.body.data)).toEqual(withoutLastUse(used));
    expectError(await call(web(0), operator.secret, 'GET', '/internal/v1/keys?tenant=ghost'), 404, 'not_found');
  });

  it.each([
    [{ role: 'owner' }, 'invalid_value', 'role'],
    [{ name: 'x' }, 'missing_required_field', 'role'],
    [{ role: 'app', expires_at: 'tomorrow' }, 'invalid_value', 'expires_at'],
    [{ role: 'app', expires_at: '2001-01-01T00:00:00Z' }, 'invalid_value', 'expires_at'],
    [{ role: 'app', secret: 'gwk_mine' }, 'invalid_value', 'secret'],
  ])('POST %j → 400 %s naming %s', async (body, code, param) => {
    expectError(await call(web(0), admin.secret, 'POST', '/internal/v1/keys', body), 400, code, param);
  });

  it("another tenant's key is 404 to revoke, never 403, and keeps working", async () => {
    expectError(await call(web(0), acmeAdmin.secret, 'DELETE', `/internal/v1/keys/${app.id}`), 404, 'not_found');
    expectError(await call(web(0), operator.secret, 'DELETE', `/internal/v1/keys/${app.id}`), 404, 'not_found');
    expectError(await call(web(0), admin.secret, 'DELETE', `/internal/v1/keys/${acmeAdmin.id}`), 404, 'not_found');
    expectError(await call(web(0), admin.secret, 'DELETE', '/internal/v1/keys/key_does_not_exist'), 404, 'not_found');
    expect((await complete(web(1), app.secret)).status).toBe(200);
  });

  it('a revoked key is refused at once on both web processes', async () => {
    const revoked = await call(web(0), admin.secret, 'DELETE', `/internal/v1/keys/${app.id}`);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body).toMatchObject({ id: app.id, revoked_at: expect.any(String) });
    await becomes(web(1), app.secret, 401, 'revocation on the second web process');
    await becomes(web(0), app.secret, 401, 'revocation on the first web process');
    expect(expectError(await complete(web(1), app.secret), 401, 'invalid_api_key')).toContain('revoked');
    const again = await call(web(1), admin.secret, 'DELETE', `/internal/v1/keys/${app.id}`);
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at);
  });

  it('an expired key is refused', async () => {
    const created = await call(web(0), admin.secret, 'POST', '/internal/v1/keys', { role: 'app', expires_at: new Date(Date.now() + 3_000).toISOString() });
    expect(created.status).toBe(201);
    expect((await complete(web(1), created.body.secret)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(created.body.expires_at) - Date.now() + 50));
    expect(expectError(await complete(web(1), created.body.secret), 401, 'invalid_api_key')).toContain('expired');
  });
});

describe('disabling a tenant', () => {
  it('refuses its keys and JWTs at once on both web processes, and enabling restores them', async () => {
    const token = await idp.sign(idp.claims({ tenant: TENANT, role: 'developer', sub: 'dev-1' }));
    for (const i of [0, 1] as const) {
      expect((await complete(web(i), admin.secret)).status).toBe(200);
      expect((await complete(web(i), token)).status).toBe(200);
    }
    const disabled = await call(web(0), operator.secret, 'PATCH', `/internal/v1/tenants/${TENANT}`, { disabled: true });
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
    expect(disabled.body).toMatchObject({ id: TENANT, disabled: true });
    await becomes(web(1), admin.secret, 401, 'disabled tenant on the second web process');
    await becomes(web(1), token, 401, "disabled tenant's JWT on the second web process");
    await becomes(web(0), admin.secret, 401, 'disabled tenant on the first web process');
    expect(expectError(await complete(web(1), admin.secret), 401, 'invalid_api_key')).toContain('disabled');
    expect(expectError(await complete(web(1), token), 401, 'invalid_token')).toContain('disabled');
    expect((await complete(web(1), acmeAdmin.secret)).status).toBe(200);

    const enabled = await call(web(0), operator.secret, 'PATCH', `/internal/v1/tenants/${TENANT}`, { disabled: false, name: 'New Co Ltd' });
    expect(enabled.body).toMatchObject({ id: TENANT, name: 'New Co Ltd', disabled: false });
    await becomes(web(1), admin.secret, 200, 'enabled tenant on the second web process');
    await becomes(web(1), token, 200, "enabled tenant's JWT on the second web process");
    await becomes(web(0), admin.secret, 200, 'enabled tenant on the first web process');
  });
});

describe('audit', () => {
  it("records every change in the tenant's log with the acting key, and the denials", async () => {
    type Event = { actor: string; action: string; target: string; details: Record<string, unknown> };
    const events = async (): Promise<Event[]> => (await call(web(0), admin.secret, 'GET', '/v1/audit?limit=1000')).body.data;
    await eventually(async () => (await events()).filter((e) => e.action === 'tenant.updated').length >= 2, 5_000, 'audit events drained');
    const log = await events();
    const find = (action: string, actor: string) => log.find((e) => e.action === action && e.actor === actor);
    expect(find('tenant.created', operator.id)).toMatchObject({ target: `tenant:${TENANT}`, details: { name: 'New Co' } });
    expect(find('key.created', operator.id)).toMatchObject({ target: admin.id, details: { role: 'admin', name: 'bootstrap' } });
    expect(log.filter((e) => e.action === 'key.created' && e.actor === admin.id).map((e) => e.details)).toEqual([
      { role: 'app', name: null, expires_at: expect.any(String) },
      { role: 'app', name: 'checkout', expires_at: expect.any(String) },
    ]);
    expect(log.filter((e) => e.action === 'key.revoked')).toHaveLength(1);
    expect(find('key.revoked', admin.id)).toBeDefined();
    expect(log.filter((e) => e.action === 'tenant.updated').map((e) => e.details)).toEqual(
      expect.arrayContaining([{ disabled: true }, { disabled: false, name: 'New Co Ltd' }]),
    );
    const reasons = new Set(log.filter((e) => e.action === 'auth.denied').map((e) => e.details.reason));
    expect(reasons).toEqual(new Set(['revoked_key', 'expired_key', 'tenant_disabled']));
    const verified = await call(web(1), admin.secret, 'GET', '/internal/v1/audit/verify');
    expect(verified.body).toMatchObject({ ok: true });
  });
});
