/**
 * Webhooks end to end: a tenant admin registers endpoints over the internal API, events enter
 * through the outbox as a producer pushes them, the worker's drainer queues their deliveries and
 * its webhook workers send them, signed, to real receivers on loopback that verify them with the
 * official `openai` SDK. Retries, 410 Gone, resends, rotation and the admin API's refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbox, webhookOutboxRecord } from '../../src/infra/outbox/outbox.ts';
import type { WebhookEventType } from '../../src/domain/webhooks/webhook-event.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually, type JsonResponse } from '../helpers/http.ts';
import { startWebhookReceiver, unwrap, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

const TENANT = 'hooks';
let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let outbox: Outbox;
let admin: string;
let otherAdmin: string;
let app: string;
const receivers: WebhookReceiver[] = [];

async function receiver(): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver();
  receivers.push(started);
  return started;
}

async function register(url: string, events: string[] = ['response.completed'], secret = admin): Promise<{ id: string; secret: string }> {
  const response = await call(gateway.origin, secret, 'POST', '/internal/v1/webhooks', { url, events });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

/** Pushes an event as a producer (the worker's job processor) does. */
async function emit(type: WebhookEventType, dataId: string, tenantId = TENANT): Promise<string> {
  const record = webhookOutboxRecord(tenantId, type, dataId);
  await outbox.push(tenantId, record);
  if (record.kind !== 'webhook') throw new Error('not a webhook record');
  return record.event.id;
}

async function deliveries(id: string, query = ''): Promise<JsonResponse> {
  return call(gateway.origin, admin, 'GET', `/internal/v1/webhooks/${id}/deliveries${query}`);
}

function expectEnvelope(response: JsonResponse, status: number, code: string, param: string | null): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body).toEqual({ error: { type: 'invalid_request_error', code, message: expect.any(String), param, request_id: expect.any(String) } });
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_DELAYS_MS: '200,200,200', WEBHOOK_TIMEOUT_MS: '2000' },
  });
  outbox = new Outbox(gateway.redis, gateway.keys);
  admin = (await gateway.issueKey(TENANT, 'admin')).secret;
  app = (await gateway.issueKey(TENANT, 'app')).secret;
  otherAdmin = (await gateway.issueKey('other', 'admin')).secret;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

describe('the admin API', () => {
  it('registers, lists (never with a secret), changes, rotates and deletes an endpoint, audited', async () => {
    const created = await call(gateway.origin, admin, 'POST', '/internal/v1/webhooks', { url: 'http://127.0.0.1:9/crud', events: ['response.completed'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'webhook_endpoint', url: 'http://127.0.0.1:9/crud', events: ['response.completed'], enabled: true });
    expect(created.body.id).toMatch(/^wh_[0-9a-z]{26}$/);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = created.body.id as string;

    const listed = await call(gateway.origin, admin, 'GET', '/internal/v1/webhooks');
    expect(listed.status).toBe(200);
    const entry = listed.body.data.find((e: { id: string }) => e.id === id);
    expect(entry).toMatchObject({ id, url: 'http://127.0.0.1:9/crud', enabled: true });
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');

    const patched = await call(gateway.origin, admin, 'PATCH', `/internal/v1/webhooks/${id}`, {
      events: ['response.failed', 'response.incomplete'],
      enabled: false,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, events: ['response.failed', 'response.incomplete'], enabled: false });
    expect(patched.body.secret).toBeUndefined();

    const rotated = await call(gateway.origin, admin, 'POST', `/internal/v1/webhooks/${id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23.9 * 3600_000);

    expect((await call(gateway.origin, admin, 'DELETE', `/internal/v1/webhooks/${id}`)).body).toEqual({
      object: 'webhook_endpoint.deleted',
      id,
      deleted: true,
    });
    expect((await call(gateway.origin, admin, 'GET', '/internal/v1/webhooks')).body.data.some((e: { id: string }) => e.id === id)).toBe(false);
    expectEnvelope(await call(gateway.origin, admin, 'DELETE', `/internal/v1/webhooks/${id}`), 404, 'not_found', null);

    for (const action of ['webhook.created', 'webhook.updated', 'webhook.secret_rotated', 'webhook.deleted']) {
      await eventually(
        async () => (await call(gateway.origin, admin, 'GET', `/v1/audit?action=${action}`)).body.data.some((e: { target: string }) => e.target === id),
        5000,
        `${action} audited`,
      );
    }
    const audit = await call(gateway.origin, admin, 'GET', '/v1/audit?limit=1000');
    expect(JSON.stringify(audit.body)).not.toContain(created.body.secret);
    expect(JSON.stringify(audit.body)).not.toContain(rotated.body.secret);
  });

  it("answers 404 with the envelope for an unknown id and for another tenant's, on every route", async () => {
    const { id } = await register('http://127.0.0.1:9/theirs', ['response.completed'], otherAdmin);
    for (const target of [id, 'wh_unknown']) {
      expectEnvelope(await call(gateway.origin, admin, 'PATCH', `/internal/v1/webhooks/${target}`, { enabled: false }), 404, 'not_found', null);
      expectEnvelope(await call(gateway.origin, admin, 'DELETE', `/internal/v1/webhooks/${target}`), 404, 'not_found', null);
      expectEnvelope(await call(gateway.origin, admin, 'POST', `/internal/v1/webhooks/${target}/rotate-secret`), 404, 'not_found', null);
      expectEnvelope(await call(gateway.origin, admin, 'GET', `/internal/v1/webhooks/${target}/deliveries`), 404, 'not_found', null);
      expectEnvelope(await call(gateway.origin, admin, 'POST', `/internal/v1/webhooks/${target}/deliveries/whd_x/resend`), 404, 'not_found', null);
    }
    expect((await call(gateway.origin, admin, 'GET', '/internal/v1/webhooks')).body.data.some((e: { id: string }) => e.id === id)).toBe(false);
    const theirs = await call(gateway.origin, otherAdmin, 'GET', '/internal/v1/webhooks');
    expect(theirs.body.data.find((e: { id: string }) => e.id === id)).toMatchObject({ enabled: true, url: 'http://127.0.0.1:9/theirs' });
  });

  it('refuses a bad url (param url) and unknown or no event types (param events) with 400', async () => {
    for (const url of ['not a url', '/relative', 'ftp://127.0.0.1/x', 'https://user:pw@127.0.0.1/x']) {
      expectEnvelope(await call(gateway.origin, admin, 'POST', '/internal/v1/webhooks', { url, events: ['response.completed'] }), 400, 'invalid_value', 'url');
    }
    for (const events of [['response.done'], [], ['response.completed', 'batch.done']]) {
      expectEnvelope(
        await call(gateway.origin, admin, 'POST', '/internal/v1/webhooks', { url: 'http://127.0.0.1:9/x', events }),
        400,
        'invalid_value',
        'events',
      );
    }
    const { id } = await register('http://127.0.0.1:9/patch');
    expectEnvelope(await call(gateway.origin, admin, 'PATCH', `/internal/v1/webhooks/${id}`, { url: 'gopher://x' }), 400, 'invalid_value', 'url');
    expectEnvelope(await call(gateway.origin, admin, 'PATCH', `/internal/v1/webhooks/${id}`, { events: ['nope'] }), 400, 'invalid_value', 'events');
    const missing = await call(gateway.origin, admin, 'POST', '/internal/v1/webhooks', { events: ['response.completed'] });
    expectEnvelope(missing, 400, 'missing_required_field', 'url');
    const wrongType = await call(gateway.origin, admin, 'POST', '/internal/v1/webhooks', { url: 'http://127.0.0.1:9/x', events: 'response.completed' });
    expectEnvelope(wrongType, 400, 'invalid_value', 'events');
    expectEnvelope(await call(gateway.origin, admin, 'GET', `/internal/v1/webhooks/${id}/deliveries?limit=0`), 400, 'invalid_value', 'limit');
  });

  it('is for admins only', async () => {
    const refused = await call(gateway.origin, app, 'GET', '/internal/v1/webhooks');
    expectEnvelope(refused, 403, 'permission_denied', null);
    expectEnvelope(
      await call(gateway.origin, app, 'POST', '/internal/v1/webhooks', { url: 'http://127.0.0.1:9/x', events: ['response.completed'] }),
      403,
      'permission_denied',
      null,
    );
  });
});

describe('deliveries', () => {
  it('delivers an event from the outbox, signed so that the openai SDK accepts it, only to subscribed endpoints', async () => {
    const hook = await receiver();
    const other = await receiver();
    const { id, secret } = await register(`${hook.origin}/in`, ['response.completed', 'response.failed']);
    await register(`${other.origin}/in`, ['response.cancelled']);
    const eventId = await emit('response.completed', 'resp_first');
    const [delivery] = await hook.waitFor(1);
    const event = await unwrap(delivery!, secret);
    expect(event).toEqual({ id: eventId, object: 'event', type: 'response.completed', created_at: expect.any(Number), data: { id: 'resp_first' } });
    expect(delivery!.headers['webhook-id']).toBe(eventId);
    expect(Math.abs(Number(delivery!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    await expect(unwrap({ ...delivery!, body: delivery!.body.replace('resp_first', 'resp_forged') }, secret)).rejects.toThrow(/signature/);
    await eventually(async () => (await deliveries(id)).body.data.length === 1, 5000, 'delivery recorded');
    expect((await deliveries(id)).body.data[0]).toMatchObject({
      object: 'webhook_delivery',
      event_id: eventId,
      event_type: 'response.completed',
      attempt: 1,
      status: 'succeeded',
      http_status: 200,
      error: null,
    });
    expect(other.deliveries).toHaveLength(0);
    // Another tenant's event reaches none of this tenant's endpoints.
    await emit('response.completed', 'resp_elsewhere', 'other');
    await emit('response.failed', 'resp_second');
    await hook.waitFor(2);
    expect(JSON.parse(hook.deliveries[1]!.body)).toMatchObject({ type: 'response.failed', data: { id: 'resp_second' } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(hook.deliveries).toHaveLength(2);
    expect(other.deliveries).toHaveLength(0);
  });

  it('retries a failing receiver with the same webhook-id until it accepts, and lists the attempts newest first', async () => {
    const hook = await receiver();
    hook.script([500, { status: 503, body: 'busy' }]);
    const { id, secret } = await register(`${hook.origin}/flaky`);
    const eventId = await emit('response.completed', 'resp_flaky');
    const received = await hook.waitFor(3);
    expect(received.map((d) => d.headers['webhook-id'])).toEqual([eventId, eventId, eventId]);
    for (const d of received) await expect(unwrap(d, secret)).resolves.toMatchObject({ id: eventId });
    expect(received[1]!.at - received[0]!.at).toBeGreaterThanOrEqual(150);
    await eventually(async () => (await deliveries(id)).body.data.length === 3, 5000, 'three attempts recorded');
    const page = (await deliveries(id)).body;
    expect(page.data.map((d: { attempt: number; status: string; http_status: number }) => [d.attempt, d.status, d.http_status])).toEqual([
      [3, 'succeeded', 200],
      [2, 'failed', 503],
      [1, 'failed', 500],
    ]);
    expect(page.data[1]).toMatchObject({ event_id: eventId, error: 'HTTP 503: busy', latency_ms: expect.any(Number) });
    expect(page).toMatchObject({ object: 'list', has_more: false, first_id: page.data[0].id, last_id: page.data[2].id });
    const first = (await deliveries(id, '?limit=2')).body;
    expect(first.data.map((d: { attempt: number }) => d.attempt)).toEqual([3, 2]);
    expect(first.has_more).toBe(true);
    const rest = (await deliveries(id, `?limit=2&after=${first.last_id as string}`)).body;
    expect(rest.data.map((d: { attempt: number }) => d.attempt)).toEqual([1]);
    expect(rest.has_more).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(hook.deliveries).toHaveLength(3);
  });

  it('gives up after the schedule: one attempt plus one per delay', async () => {
    const hook = await receiver();
    hook.script([500, 500, 500, 500, 500]);
    const { id } = await register(`${hook.origin}/down`, ['response.incomplete']);
    await emit('response.incomplete', 'resp_down');
    await hook.waitFor(4);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(hook.deliveries).toHaveLength(4);
    await eventually(async () => (await deliveries(id)).body.data.length === 4, 5000, 'four attempts recorded');
    expect((await deliveries(id)).body.data.every((d: { status: string }) => d.status === 'failed')).toBe(true);
  });

  it('enqueues a redelivered outbox record once', async () => {
    const hook = await receiver();
    await register(`${hook.origin}/once`);
    const record = webhookOutboxRecord(TENANT, 'response.completed', 'resp_twice');
    await outbox.push(TENANT, record);
    await outbox.push(TENANT, record);
    await hook.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(hook.deliveries).toHaveLength(1);
  });

  it('disables an endpoint that answers 410 Gone, audited, and sends it nothing more', async () => {
    const hook = await receiver();
    hook.script([410]);
    const { id } = await register(`${hook.origin}/gone`);
    await emit('response.completed', 'resp_gone');
    await hook.waitFor(1);
    await eventually(
      async () => (await call(gateway.origin, admin, 'GET', '/internal/v1/webhooks')).body.data.find((e: { id: string }) => e.id === id)?.enabled === false,
      5000,
      'endpoint disabled',
    );
    await eventually(
      async () => (await call(gateway.origin, admin, 'GET', '/v1/audit?action=webhook.disabled')).body.data.some((e: { target: string }) => e.target === id),
      5000,
      'disabling audited',
    );
    expect((await deliveries(id)).body.data).toMatchObject([{ attempt: 1, status: 'failed', http_status: 410 }]);
    await emit('response.completed', 'resp_after_gone');
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(hook.deliveries).toHaveLength(1);
    const delivery = (await deliveries(id)).body.data[0];
    expectEnvelope(
      await call(gateway.origin, admin, 'POST', `/internal/v1/webhooks/${id}/deliveries/${delivery.id as string}/resend`),
      400,
      'invalid_value',
      null,
    );
  });

  it('resends a delivery by hand: a new attempt of the same event, with the same webhook-id', async () => {
    const hook = await receiver();
    const { id, secret } = await register(`${hook.origin}/resend`);
    const eventId = await emit('response.completed', 'resp_resend');
    await hook.waitFor(1);
    await eventually(async () => (await deliveries(id)).body.data.length === 1, 5000, 'delivery recorded');
    const first = (await deliveries(id)).body.data[0];
    const resent = await call(gateway.origin, admin, 'POST', `/internal/v1/webhooks/${id}/deliveries/${first.id as string}/resend`);
    expect(resent.status).toBe(202);
    expect(resent.body).toEqual({ object: 'webhook_delivery.resend', webhook_id: id, event_id: eventId, status: 'queued' });
    const [, again] = await hook.waitFor(2);
    expect(again!.headers['webhook-id']).toBe(eventId);
    await expect(unwrap(again!, secret)).resolves.toEqual(JSON.parse(hook.deliveries[0]!.body));
    // The event as first sent, byte for byte, though the store gave it back with its keys in another order.
    expect(again!.body).toBe(hook.deliveries[0]!.body);
    await eventually(async () => (await deliveries(id)).body.data.length === 2, 5000, 'resend recorded');
    expect((await deliveries(id)).body.data.map((d: { attempt: number; event_id: string }) => [d.attempt, d.event_id])).toEqual([
      [2, eventId],
      [1, eventId],
    ]);
    expectEnvelope(await call(gateway.origin, admin, 'POST', `/internal/v1/webhooks/${id}/deliveries/whd_unknown/resend`), 404, 'not_found', null);
    await eventually(
      async () => (await call(gateway.origin, admin, 'GET', '/v1/audit?action=webhook.resent')).body.data.some((e: { target: string }) => e.target === id),
      5000,
      'resend audited',
    );
  });

  it('after a rotation, signs with the new and the previous secret', async () => {
    const hook = await receiver();
    const { id, secret: before } = await register(`${hook.origin}/rotate`, ['response.cancelled']);
    const rotated = await call(gateway.origin, admin, 'POST', `/internal/v1/webhooks/${id}/rotate-secret`);
    const after = rotated.body.secret as string;
    await emit('response.cancelled', 'resp_rotated');
    const [delivery] = await hook.waitFor(1);
    expect(String(delivery!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    await expect(unwrap(delivery!, after)).resolves.toMatchObject({ type: 'response.cancelled', data: { id: 'resp_rotated' } });
    await expect(unwrap(delivery!, before)).resolves.toMatchObject({ type: 'response.cancelled' });
  });
});

describe('without WEBHOOK_ALLOW_PRIVATE_URLS', () => {
  let strict: GatewayUnderTest;
  let strictAdmin: string;

  beforeAll(async () => {
    strict = await startGateway({ catalog: testCatalog(upstream.url), workers: 0 });
    strictAdmin = (await strict.issueKey(TENANT, 'admin')).secret;
  });

  afterAll(async () => {
    await strict?.close();
  });

  it.each([
    'http://127.0.0.1:8080/hook',
    'https://127.0.0.1/hook',
    'https://localhost/hook',
    'https://[::1]/hook',
    'https://169.254.169.254/latest',
    'https://10.1.2.3/hook',
  ])('refuses %s at registration with 400 naming url', async (url) => {
    expectEnvelope(
      await call(strict.origin, strictAdmin, 'POST', '/internal/v1/webhooks', { url, events: ['response.completed'] }),
      400,
      'invalid_value',
      'url',
    );
  });

  it('takes an https URL of a public address', async () => {
    const created = await call(strict.origin, strictAdmin, 'POST', '/internal/v1/webhooks', { url: 'https://8.8.8.8/hook', events: ['response.completed'] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expectEnvelope(
      await call(strict.origin, strictAdmin, 'PATCH', `/internal/v1/webhooks/${created.body.id as string}`, { url: 'https://127.0.0.1/x' }),
      400,
      'invalid_value',
      'url',
    );
  });
});
