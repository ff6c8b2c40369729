/** The tenant's PII policy on the completion path: block, mask, flag — on messages and on named-prompt variables. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually } from '../helpers/http.ts';

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let admin: string;
let app: string;
const EMAIL = 'jane.doe@example.com';

function complete(content: string | string[]) {
  const messages = (Array.isArray(content) ? content : [content]).map((text) => ({ role: 'user', content: text }));
  return call(gateway.origin, app, 'POST', '/v1/chat/completions', { model: 'fake-gpt', messages: [{ role: 'system', content: 'Be brief.' }, ...messages] });
}

async function setPolicy(mode: string, critical?: string[]) {
  const response = await call(gateway.origin, admin, 'PUT', '/internal/v1/pii-policy', critical ? { mode, critical } : { mode });
  expect(response.status).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 150));
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({ catalog: testCatalog(upstream.url), env: { SETTINGS_CACHE_TTL_MS: '100' } });
  admin = (await gateway.issueKey('privacy', 'admin')).secret;
  app = (await gateway.issueKey('privacy', 'app')).secret;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

beforeEach(() => upstream.reset());

describe('PII policy', () => {
  it('block: 422 pii_detected naming the categories and the message, never the value; audited; not charged', async () => {
    await setPolicy('block', ['email', 'payment_card']);
    const response = await complete(['hello', `Write to ${EMAIL} and charge 4111 1111 1111 1111`]);
    expect(response.status).toBe(422);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', code: 'pii_detected', param: 'messages[2].content' });
    expect(response.body.error.message).toContain('email, payment_card');
    expect(response.body.error.message).toContain('messages[2]');
    expect(response.body.error.message).not.toContain(EMAIL);
    expect(response.body.error.message).not.toContain('4111');
    expect(upstream.requests).toHaveLength(0);
    await eventually(async () => (await call(gateway.origin, admin, 'GET', '/v1/audit?action=pii.blocked')).body.data.length === 1, 5000, 'audited');
    const event = (await call(gateway.origin, admin, 'GET', '/v1/audit?action=pii.blocked')).body.data[0];
    expect(event).toMatchObject({ outcome: 'blocked', details: { categories: ['email', 'payment_card'] } });
    expect(JSON.stringify(event)).not.toContain(EMAIL);
    expect((await call(gateway.origin, admin, 'GET', '/v1/usage?since=2000-01-01')).body.data).toHaveLength(0);
  });

  it('block lets through categories the policy does not treat as critical', async () => {
    await setPolicy('block', ['payment_card']);
    expect((await complete(`Mail ${EMAIL}`)).status).toBe(200);
  });

  it('mask: the provider sees typed placeholders, one per distinct value across messages', async () => {
    await setPolicy('mask');
    const response = await complete([`Mail ${EMAIL} or call +44 20 7946 0958.`, `Again: ${EMAIL}, and bob@example.org`]);
    expect(response.status).toBe(200);
    const sent = (upstream.requests[0]?.body as { messages: Array<{ content: string }> }).messages;
    expect(sent[1]?.content).toBe('Mail [EMAIL_1] or call [PHONE_1].');
    expect(sent[2]?.content).toBe('Again: [EMAIL_1], and [EMAIL_2]');
    expect(JSON.stringify(upstream.requests[0]?.body)).not.toContain('example.com');
  });

  it('mask applies to substituted prompt variables too', async () => {
    await setPolicy('mask');
    const created = await call(gateway.origin, admin, 'POST', '/internal/v1/prompts/support/versions', {
      messages: [{ role: 'user', content: 'Customer {{contact}} asks: {{question}}' }],
      model: 'fake-gpt',
    });
    expect(created.status).toBe(201);
    const response = await call(gateway.origin, app, 'POST', '/v1/chat/completions', {
      prompt: 'support',
      variables: { contact: EMAIL, question: 'where is my order 12345?' },
    });
    expect(response.status).toBe(200);
    expect((upstream.requests[0]?.body as { messages: Array<{ content: string }> }).messages[0]?.content).toBe(
      'Customer [EMAIL_1] asks: where is my order 12345?',
    );
  });

  it('flag: passed through unchanged; the usage record and an audit event carry the categories', async () => {
    await setPolicy('flag');
    const response = await complete(`My card is 4111-1111-1111-1111 and my mail ${EMAIL}`);
    expect(response.status).toBe(200);
    expect(JSON.stringify(upstream.requests[0]?.body)).toContain(EMAIL);
    const requestId = response.body.request_id;
    await eventually(
      async () =>
        (await call(gateway.origin, admin, 'GET', '/v1/usage?since=2000-01-01')).body.data.some((r: { request_id: string }) => r.request_id === requestId),
      5000,
      'recorded',
    );
    const record = (await call(gateway.origin, admin, 'GET', '/v1/usage?since=2000-01-01')).body.data.find(
      (r: { request_id: string }) => r.request_id === requestId,
    );
    expect(record.pii_flags).toEqual(['email', 'payment_card']);
    await eventually(
      async () =>
        (await call(gateway.origin, admin, 'GET', '/v1/audit?action=pii.flagged')).body.data.some((e: { request_id: string }) => e.request_id === requestId),
      5000,
      'flag audited',
    );
  });

  it('only admins read or change the policy; changes are audited', async () => {
    expect((await call(gateway.origin, app, 'PUT', '/internal/v1/pii-policy', { mode: 'off' })).status).toBe(403);
    expect((await call(gateway.origin, admin, 'GET', '/internal/v1/pii-policy')).body).toMatchObject({ mode: 'flag' });
    expect((await call(gateway.origin, admin, 'PUT', '/internal/v1/pii-policy', { mode: 'shred' })).status).toBe(400);
    await eventually(
      async () => (await call(gateway.origin, admin, 'GET', '/v1/audit?action=policy.pii_updated')).body.data.length >= 4,
      5000,
      'policy changes audited',
    );
  });
});
