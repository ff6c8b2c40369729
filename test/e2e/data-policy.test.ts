/** The tenant's data policy over /internal/v1/data-policy: its default, a change every web process applies at once, its audit event, its checks and who may use it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually } from '../helpers/http.ts';

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let admin: { id: string; secret: string };
const DEFAULT = { object: 'data_policy', store_responses: true, retention_days: 30 };

/** The policy as the second web process answers it. */
const policyOnSecondWeb = async (secret: string) => (await call(gateway.webs[1]?.origin ?? '', secret, 'GET', '/internal/v1/data-policy')).body;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  // Settings cached for a minute: only the invalidation over Redis can bring a change to the other web process within the test's seconds.
  gateway = await startGateway({ catalog: testCatalog(upstream.url), webs: 2, env: { SETTINGS_CACHE_TTL_MS: '60000' } });
  admin = await gateway.issueKey('privacy', 'admin');
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('data policy', () => {
  it('is the default until set; a change reaches every web process at once and is audited', async () => {
    expect(await call(gateway.origin, admin.secret, 'GET', '/internal/v1/data-policy')).toMatchObject({ status: 200, body: DEFAULT });
    // Cached now on the second web process.
    expect(await policyOnSecondWeb(admin.secret)).toEqual(DEFAULT);

    const put = await call(gateway.origin, admin.secret, 'PUT', '/internal/v1/data-policy', { store_responses: false, retention_days: 7 });
    expect(put).toMatchObject({ status: 200, body: { object: 'data_policy', store_responses: false, retention_days: 7 } });
    await eventually(async () => (await policyOnSecondWeb(admin.secret)).retention_days === 7, 5000, 'the change on the other web process');
    expect(await policyOnSecondWeb(admin.secret)).toEqual({ object: 'data_policy', store_responses: false, retention_days: 7 });
    expect(await gateway.repository.policies.getData('privacy')).toMatchObject({ tenantId: 'privacy', storeResponses: false, retentionDays: 7 });

    await eventually(
      async () => (await call(gateway.origin, admin.secret, 'GET', '/v1/audit?action=policy.data_updated')).body.data.length === 1,
      5000,
      'the change audited',
    );
    const [event] = (await call(gateway.origin, admin.secret, 'GET', '/v1/audit?action=policy.data_updated')).body.data;
    expect(event).toMatchObject({
      actor: admin.id,
      target: 'tenant:privacy',
      outcome: 'success',
      request_id: put.headers.get('x-request-id'),
      details: { store_responses: false, retention_days: 7 },
    });

    // Another tenant keeps the default.
    const other = await gateway.issueKey('elsewhere', 'admin');
    expect((await call(gateway.origin, other.secret, 'GET', '/internal/v1/data-policy')).body).toEqual(DEFAULT);
  });

  it.each([
    ['zero', 0],
    ['over ten years', 3651],
    ['a fraction', 1.5],
    ['a string', '30'],
    ['null', null],
  ])('refuses retention_days %s with 400 naming it, changing nothing', async (_name, value) => {
    const before = (await call(gateway.origin, admin.secret, 'GET', '/internal/v1/data-policy')).body;
    const response = await call(gateway.origin, admin.secret, 'PUT', '/internal/v1/data-policy', { store_responses: true, retention_days: value });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param: 'retention_days' });
    expect((await call(gateway.origin, admin.secret, 'GET', '/internal/v1/data-policy')).body).toEqual(before);
  });

  it('refuses a body without a field, or with one it does not know', async () => {
    const missing = await call(gateway.origin, admin.secret, 'PUT', '/internal/v1/data-policy', { store_responses: true });
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe('retention_days');
    const unknown = await call(gateway.origin, admin.secret, 'PUT', '/internal/v1/data-policy', { store_responses: true, retention_days: 30, keep: 'forever' });
    expect(unknown.status).toBe(400);
    const notBoolean = await call(gateway.origin, admin.secret, 'PUT', '/internal/v1/data-policy', { store_responses: 'no', retention_days: 30 });
    expect(notBoolean.status).toBe(400);
    expect(notBoolean.body.error.param).toBe('store_responses');
  });

  it('accepts the bounds of retention_days', async () => {
    for (const days of [1, 3650]) {
      const response = await call(gateway.origin, admin.secret, 'PUT', '/internal/v1/data-policy', { store_responses: true, retention_days: days });
      expect(response).toMatchObject({ status: 200, body: { retention_days: days } });
    }
  });

  it.each(['developer', 'app', 'auditor'] as const)('refuses the %s role, reading or changing', async (role) => {
    const { secret } = await gateway.issueKey('privacy', role);
    const read = await call(gateway.origin, secret, 'GET', '/internal/v1/data-policy');
    expect(read.status).toBe(403);
    expect(read.body.error.code).toBe('permission_denied');
    const write = await call(gateway.origin, secret, 'PUT', '/internal/v1/data-policy', { store_responses: true, retention_days: 30 });
    expect(write.status).toBe(403);
    expect(
      (await call(gateway.origin, admin.secret, 'GET', '/v1/audit?action=policy.data_updated')).body.data.every((e: { actor: string }) => e.actor === admin.id),
    ).toBe(true);
  });
});
