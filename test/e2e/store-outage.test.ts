/**
 * PostgreSQL away is a 503, never a 500, and no process dies of it: web and worker reach the store through a
 * proxy the test cuts, with keys cached (so the requests get past authentication) and tenant settings not (so
 * each request reads them from the store), then every request that needs the store is refused with the
 * envelope and Retry-After until the store is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually, type JsonResponse } from '../helpers/http.ts';

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let proxy: TcpProxy;
let operator: string;
let app: string;

const CHAT = { model: 'fake-gpt', messages: [{ role: 'user', content: 'hello' }] };

beforeAll(async () => {
  upstream = await startFakeUpstream();
  proxy = await startTcpProxy(5432);
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    storeUrl: (url) => url.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`),
    env: { KEY_CACHE_TTL_MS: '10000', SETTINGS_CACHE_TTL_MS: '0' },
  });
  operator = (await gateway.issueKey('operator', 'admin')).secret;
  app = (await gateway.issueKey('acme', 'app')).secret;
  await gateway.issueKey('prepaid', 'app');
});

afterAll(async () => {
  await gateway?.close();
  await proxy?.close();
  await upstream?.close();
});

function expectUnavailable(response: JsonResponse, what: string): void {
  expect(response.status, `${what}: ${JSON.stringify(response.body)}`).toBe(503);
  expect(response.body.error).toMatchObject({
    type: 'api_error',
    code: 'service_unavailable',
    message: expect.stringMatching(/^The gateway cannot reach its (database|state store or its database) right now; retry shortly\.$/),
    param: null,
    request_id: response.headers.get('x-request-id'),
  });
  expect(response.headers.get('retry-after'), what).toBe('1');
}

describe.each([
  ['refused', () => proxy.cut()],
  ['hung up on', () => proxy.hangUp()],
])('PostgreSQL connections %s', (_how, cut) => {
  it('answers 503 with the envelope wherever a request needs the store, keeps every process up, and serves again once it is back', async () => {
    // Another tenant's credit: acme's requests stay free of a credit account.
    const topUp = (amount: number) => call(gateway.origin, operator, 'POST', '/internal/v1/tenants/prepaid/credits', { amount_micros: amount });
    const before = (await gateway.repository.budgets.creditToppedUp('prepaid')) ?? 0;
    // Both keys are cached from here on; the tenant's settings are read from the store at each request.
    expect((await call(gateway.origin, app, 'POST', '/v1/chat/completions', CHAT)).status).toBe(200);
    expect((await topUp(1_000)).status).toBe(201);

    await cut();
    expectUnavailable(await call(gateway.origin, app, 'POST', '/v1/chat/completions', CHAT), 'a completion');
    expectUnavailable(await call(gateway.origin, app, 'POST', '/v1/chat/completions', { ...CHAT, stream: true }), 'a stream');
    expectUnavailable(await topUp(1_000), 'a top-up');
    expectUnavailable(
      await call(gateway.origin, app, 'POST', '/v1/responses', { model: 'fake-gpt', input: 'later', background: true }),
      'a background response',
    );
    for (const proc of [gateway.web, ...gateway.workers]) expect(proc.child.exitCode, proc.output()).toBeNull();

    await proxy.restore();
    await eventually(async () => (await call(gateway.origin, app, 'POST', '/v1/chat/completions', CHAT)).status === 200, 15_000, 'completions again');
    expect((await topUp(1_000)).status).toBe(201);
    expect(await gateway.repository.budgets.creditToppedUp('prepaid')).toBe(before + 2_000);
    for (const proc of [gateway.web, ...gateway.workers]) expect(proc.child.exitCode, proc.output()).toBeNull();
  });
});
