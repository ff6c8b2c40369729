/** JWTs from a real loopback identity provider, end to end: web and worker processes, the openai SDK with a token as its key. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startJwksServer, type JwksServer } from '../helpers/jwks-server.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call } from '../helpers/http.ts';

let upstream: FakeUpstream;
let idp: JwksServer;
let gateway: GatewayUnderTest;
const hello = [{ role: 'user' as const, content: 'hello' }];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  idp = await startJwksServer();
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    env: { JWT_ISSUERS: idp.issuer, JWKS_REFETCH_INTERVAL_MS: '0', JWKS_CACHE_TTL_MS: '60000' },
  });
});

afterAll(async () => {
  await gateway?.close();
  await idp?.close();
  await upstream?.close();
});

describe('JWT authentication', () => {
  it("a signed token resolves to the same principal as an API key: the SDK completes with it, usage is the tenant's", async () => {
    const token = await idp.sign(idp.claims({ tenant: 'jwt-co', role: 'developer', sub: 'user-42' }), { alg: 'ES256' });
    const data = await new OpenAI({ baseURL: gateway.baseURL, apiKey: token, maxRetries: 0 }).chat.completions.create({ model: 'fake-gpt', messages: hello });
    expect(data.choices[0]?.message.content).toBe('Hello from the fake upstream.');
    const usage = await call(gateway.origin, token, 'GET', '/v1/usage?since=2000-01-01');
    expect(usage.status).toBe(200);
    expect(usage.body.data.every((r: { key_id: string }) => r.key_id === 'jwt:user-42')).toBe(true);
  });

  it('applies the role matrix to JWT principals', async () => {
    const app = await idp.sign(idp.claims({ tenant: 'jwt-co', role: 'app' }));
    const denied = await call(gateway.origin, app, 'GET', '/v1/usage?since=2000-01-01');
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('permission_denied');
  });

  it('forged and invalid tokens are 401 invalid_token, never 500', async () => {
    const forged = [
      idp.signNone(idp.claims({ tenant: 'jwt-co', role: 'admin' })),
      await idp.signHs256WithPublicKey(idp.claims({ tenant: 'jwt-co', role: 'admin' })),
      await idp.sign(idp.claims({ tenant: 'jwt-co', role: 'admin', exp: Math.floor(Date.now() / 1000) - 3600 })),
      await idp.sign(idp.claims({ tenant: 'jwt-co', role: 'admin', iss: 'https://evil.example' })),
      await idp.sign(idp.claims({ tenant: undefined, role: 'admin' })),
      await idp.sign(idp.claims({ tenant: 'jwt-co', role: 'admin' }), { signWith: 'foreign' }),
    ];
    for (const token of forged) {
      const response = await call(gateway.origin, token, 'POST', '/v1/chat/completions', { model: 'fake-gpt', messages: hello });
      expect(response.status).toBe(401);
      expect(response.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_token' });
    }
  });

  it('a rotated key the gateway cannot fetch is 503 jwks_unavailable with Retry-After; once reachable, it works', async () => {
    await idp.rotate();
    idp.setMode('error-500');
    const rotated = await idp.sign(idp.claims({ tenant: 'jwt-co', role: 'developer' }), { alg: 'EdDSA' });
    const response = await call(gateway.origin, rotated, 'GET', '/v1/budgets');
    expect(response.status).toBe(503);
    expect(response.body.error).toMatchObject({ code: 'jwks_unavailable', type: 'api_error' });
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    idp.setMode('ok');
    // Rotation at the identity provider is picked up without a restart.
    expect((await call(gateway.origin, rotated, 'GET', '/v1/budgets')).status).toBe(200);
  });
});
