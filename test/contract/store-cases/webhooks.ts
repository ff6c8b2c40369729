/** Contract cases of WebhookRepository: endpoints, secrets and their rotation, deliveries and their pages. */
import { expect, it } from 'vitest';
import type { WebhookDelivery, WebhookEndpoint } from '../../../src/infra/store/repository.ts';
import { webhookEvent } from '../../../src/domain/webhooks/webhook-event.ts';
import { uid, type StoreContext } from './context.ts';

/** Registers the cases on a store. */
export function webhookCases(store: StoreContext): void {
  const webhooks = () => store.repo().webhooks;

  // Ids that sort in creation order, as the gateway's ULIDs do: two endpoints made in one millisecond are then listed in order.
  let made = 0;
  async function endpoint(tenantId: string, events: WebhookEndpoint['events'] = ['response.completed']): Promise<WebhookEndpoint> {
    const id = `wh_${String(++made).padStart(6, '0')}${uid()}`;
    return webhooks().create({ id, tenantId, url: `https://hooks.example.com/${uid()}`, events, secret: `whsec_${uid()}` });
  }

  function delivery(of: WebhookEndpoint, attempt: number, createdAt: Date, fields: Partial<WebhookDelivery> = {}): WebhookDelivery {
    return {
      id: `whd_${uid()}`,
      tenantId: of.tenantId,
      webhookId: of.id,
      event: webhookEvent('response.completed', `resp_${uid()}`),
      attempt,
      status: 'failed',
      httpStatus: 500,
      latencyMs: 12,
      error: 'HTTP 500',
      createdAt,
      ...fields,
    };
  }

  it('creates an enabled endpoint with its secret, and finds it only under its tenant', async () => {
    const tenantId = `t-${uid()}`;
    const created = await endpoint(tenantId, ['response.completed', 'response.failed']);
    expect(created).toMatchObject({
      tenantId,
      enabled: true,
      events: ['response.completed', 'response.failed'],
      previousSecret: null,
      previousSecretExpiresAt: null,
    });
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.createdAt).toBeInstanceOf(Date);
    expect(await webhooks().get(tenantId, created.id)).toEqual(created);
    expect(await webhooks().get(`t-${uid()}`, created.id)).toBeNull();
    expect(await webhooks().get(tenantId, 'wh_missing')).toBeNull();
  });

  it('lists a tenant’s endpoints oldest first, and the enabled ones subscribed to a type', async () => {
    const tenantId = `t-${uid()}`;
    const a = await endpoint(tenantId, ['response.completed']);
    const b = await endpoint(tenantId, ['response.failed', 'response.completed']);
    const c = await endpoint(tenantId, ['response.failed']);
    await endpoint(`t-${uid()}`, ['response.completed']);
    expect((await webhooks().list(tenantId)).map((e) => e.id)).toEqual([a.id, b.id, c.id]);
    expect((await webhooks().listSubscribed(tenantId, 'response.completed')).map((e) => e.id)).toEqual([a.id, b.id]);
    await webhooks().update(tenantId, a.id, { enabled: false });
    expect((await webhooks().listSubscribed(tenantId, 'response.completed')).map((e) => e.id)).toEqual([b.id]);
    expect(await webhooks().listSubscribed(tenantId, 'response.incomplete')).toEqual([]);
  });

  it('changes only the fields given, and not another tenant’s endpoint', async () => {
    const tenantId = `t-${uid()}`;
    const created = await endpoint(tenantId);
    const moved = await webhooks().update(tenantId, created.id, { url: 'https://hooks.example.com/moved' });
    expect(moved).toMatchObject({ url: 'https://hooks.example.com/moved', events: created.events, enabled: true, secret: created.secret });
    const changed = await webhooks().update(tenantId, created.id, { events: ['response.cancelled'], enabled: false });
    expect(changed).toMatchObject({ url: 'https://hooks.example.com/moved', events: ['response.cancelled'], enabled: false });
    expect(await webhooks().update(`t-${uid()}`, created.id, { enabled: true })).toBeNull();
    expect((await webhooks().get(tenantId, created.id))?.enabled).toBe(false);
  });

  it('rotates the secret, keeping the one before with its expiry', async () => {
    const tenantId = `t-${uid()}`;
    const created = await endpoint(tenantId);
    const expires = new Date(Date.now() + 86_400_000);
    const rotated = await webhooks().rotateSecret(tenantId, created.id, 'whsec_second', expires);
    expect(rotated).toMatchObject({ secret: 'whsec_second', previousSecret: created.secret, previousSecretExpiresAt: expires });
    const again = await webhooks().rotateSecret(tenantId, created.id, 'whsec_third', expires);
    expect(again).toMatchObject({ secret: 'whsec_third', previousSecret: 'whsec_second' });
    expect(await webhooks().rotateSecret(`t-${uid()}`, created.id, 'whsec_x', expires)).toBeNull();
  });

  it('records deliveries once per id and pages them newest first after a cursor', async () => {
    const tenantId = `t-${uid()}`;
    const of = await endpoint(tenantId);
    const base = Date.now();
    const written = [1, 2, 3, 4, 5].map((attempt) => delivery(of, attempt, new Date(base + attempt * 1000)));
    for (const d of written) await webhooks().recordDelivery(d);
    await webhooks().recordDelivery({ ...(written[0] as WebhookDelivery), attempt: 99 });
    const first = await webhooks().listDeliveries(tenantId, of.id, { limit: 2, after: null });
    expect(first.map((d) => d.attempt)).toEqual([5, 4]);
    expect(first[0]).toEqual(written[4]);
    const second = await webhooks().listDeliveries(tenantId, of.id, { limit: 2, after: (first[1] as WebhookDelivery).id });
    expect(second.map((d) => d.attempt)).toEqual([3, 2]);
    const last = await webhooks().listDeliveries(tenantId, of.id, { limit: 10, after: (second[1] as WebhookDelivery).id });
    expect(last.map((d) => d.attempt)).toEqual([1]);
    expect(await webhooks().listDeliveries(`t-${uid()}`, of.id, { limit: 10, after: null })).toEqual([]);
  });

  it('breaks ties of time by id, and finds one delivery and the last attempt of an event', async () => {
    const tenantId = `t-${uid()}`;
    const of = await endpoint(tenantId);
    const at = new Date();
    const event = webhookEvent('response.failed', 'resp_tie');
    const [x, y] = [
      delivery(of, 1, at, { id: 'whd_a', event }),
      delivery(of, 2, at, { id: 'whd_b', event, status: 'succeeded', httpStatus: 204, error: null }),
    ];
    await webhooks().recordDelivery(x);
    await webhooks().recordDelivery(y);
    expect((await webhooks().listDeliveries(tenantId, of.id, { limit: 10, after: null })).map((d) => d.id)).toEqual(['whd_b', 'whd_a']);
    expect((await webhooks().listDeliveries(tenantId, of.id, { limit: 10, after: 'whd_b' })).map((d) => d.id)).toEqual(['whd_a']);
    expect(await webhooks().getDelivery(tenantId, of.id, 'whd_b')).toEqual(y);
    expect(await webhooks().getDelivery(`t-${uid()}`, of.id, 'whd_b')).toBeNull();
    expect(await webhooks().lastAttempt(tenantId, of.id, event.id)).toBe(2);
    expect(await webhooks().lastAttempt(tenantId, of.id, 'evt_none')).toBe(0);
  });

  it('deletes an endpoint with its deliveries, records none for it afterwards, and only for its own tenant', async () => {
    const tenantId = `t-${uid()}`;
    const of = await endpoint(tenantId);
    await webhooks().recordDelivery(delivery(of, 1, new Date()));
    expect(await webhooks().delete(`t-${uid()}`, of.id)).toBe(false);
    expect(await webhooks().delete(tenantId, of.id)).toBe(true);
    expect(await webhooks().delete(tenantId, of.id)).toBe(false);
    expect(await webhooks().get(tenantId, of.id)).toBeNull();
    await webhooks().recordDelivery(delivery(of, 2, new Date()));
    expect(await webhooks().listDeliveries(tenantId, of.id, { limit: 10, after: null })).toEqual([]);
    const other = await endpoint(tenantId);
    await webhooks().recordDelivery(delivery(other, 1, new Date(), { tenantId: `t-${uid()}` }));
    expect(await webhooks().listDeliveries(tenantId, other.id, { limit: 10, after: null })).toEqual([]);
  });
}
