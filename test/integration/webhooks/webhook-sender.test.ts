/**
 * One delivery attempt through the guarded agent, against real receivers on loopback: what counts
 * as success, how failures read, that redirects are not followed, and that with private URLs not
 * allowed the agent refuses loopback whether named by address or by a name that resolves to it.
 */
import { lookup as lookupCallback } from 'node:dns';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret } from '../../../src/domain/webhooks/signing.ts';
import { webhookEvent } from '../../../src/domain/webhooks/webhook-event.ts';
import { BlockedAddressError, createWebhookAgent, publicOnlyLookup } from '../../../src/infra/webhooks/guarded-agent.ts';
import { sendWebhook } from '../../../src/infra/webhooks/webhook-sender.ts';
import type { WebhookEndpoint } from '../../../src/infra/store/repository.ts';
import { freePort } from '../../helpers/free-port.ts';
import { startWebhookReceiver, unwrap, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';

const TIMEOUT_MS = 400;
let receiver: WebhookReceiver;
const open = createWebhookAgent({ allowPrivate: true, timeoutMs: TIMEOUT_MS });
const guarded = createWebhookAgent({ allowPrivate: false, timeoutMs: TIMEOUT_MS });

function endpoint(url: string, secret = generateWebhookSecret()): WebhookEndpoint {
  const now = new Date();
  return {
    id: 'wh_test',
    tenantId: 't',
    url,
    events: ['response.completed'],
    enabled: true,
    secret,
    previousSecret: null,
    previousSecretExpiresAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});

afterEach(() => {
  receiver.deliveries.length = 0;
});

afterAll(async () => {
  await receiver.close();
  await open.close();
  await guarded.close();
});

describe('sendWebhook', () => {
  it('POSTs the signed event; 2xx is success, and the openai SDK accepts it', async () => {
    const target = endpoint(`${receiver.origin}/hook`);
    const event = webhookEvent('response.completed', 'resp_1');
    receiver.script([204]);
    const attempt = await sendWebhook({ agent: open, timeoutMs: TIMEOUT_MS }, target, event);
    expect(attempt).toMatchObject({ status: 'succeeded', httpStatus: 204, error: null });
    expect(attempt.latencyMs).toBeGreaterThanOrEqual(0);
    const [received] = receiver.deliveries;
    expect(received?.headers['content-type']).toBe('application/json');
    expect(received?.headers['webhook-id']).toBe(event.id);
    await expect(unwrap(received!, target.secret)).resolves.toEqual(event);
    await expect(unwrap({ ...received!, body: received!.body.replace('resp_1', 'resp_2') }, target.secret)).rejects.toThrow(/signature/);
  });

  it('signs with both secrets while the previous one is valid', async () => {
    const previous = generateWebhookSecret();
    const target = { ...endpoint(`${receiver.origin}/hook`), previousSecret: previous, previousSecretExpiresAt: new Date(Date.now() + 60_000) };
    await sendWebhook({ agent: open, timeoutMs: TIMEOUT_MS }, target, webhookEvent('response.failed', 'resp_2'));
    const [received] = receiver.deliveries;
    expect(String(received?.headers['webhook-signature']).split(' ')).toHaveLength(2);
    await expect(unwrap(received!, previous)).resolves.toMatchObject({ type: 'response.failed' });
    await expect(unwrap(received!, target.secret)).resolves.toMatchObject({ type: 'response.failed' });
  });

  it('fails on any other status, with an excerpt of the answer', async () => {
    receiver.script([{ status: 500, body: 'boom\n  at the receiver' }]);
    const attempt = await sendWebhook({ agent: open, timeoutMs: TIMEOUT_MS }, endpoint(`${receiver.origin}/hook`), webhookEvent('response.completed', 'r'));
    expect(attempt).toMatchObject({ status: 'failed', httpStatus: 500, error: 'HTTP 500: boom at the receiver' });
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    receiver.script([{ redirect: `${receiver.origin}/elsewhere` }]);
    const attempt = await sendWebhook({ agent: open, timeoutMs: TIMEOUT_MS }, endpoint(`${receiver.origin}/hook`), webhookEvent('response.completed', 'r'));
    expect(attempt).toMatchObject({ status: 'failed', httpStatus: 302 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.deliveries.map((d) => d.path)).toEqual(['/hook']);
  });

  it('gives up on an endpoint that does not answer in time', async () => {
    receiver.script(['hang']);
    const attempt = await sendWebhook({ agent: open, timeoutMs: TIMEOUT_MS }, endpoint(`${receiver.origin}/hook`), webhookEvent('response.completed', 'r'));
    expect(attempt).toMatchObject({ status: 'failed', httpStatus: null, error: `no answer within ${TIMEOUT_MS} ms` });
    expect(attempt.latencyMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
  });

  it('reports a refused connection', async () => {
    const attempt = await sendWebhook(
      { agent: open, timeoutMs: TIMEOUT_MS },
      endpoint(`http://127.0.0.1:${await freePort()}/hook`),
      webhookEvent('response.completed', 'r'),
    );
    expect(attempt).toMatchObject({ status: 'failed', httpStatus: null, error: 'connection refused' });
  });

  it('throws when the job itself is aborted, rather than recording an attempt', async () => {
    receiver.script(['hang']);
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error('worker closing')), 50);
    await expect(
      sendWebhook({ agent: open, timeoutMs: 5_000 }, endpoint(`${receiver.origin}/hook`), webhookEvent('response.completed', 'r'), abort.signal),
    ).rejects.toThrow();
  });
});

describe('the address guard at delivery', () => {
  it.each([
    ['a loopback address', (port: string) => `http://127.0.0.1:${port}/hook`],
    ['a name that resolves to loopback', (port: string) => `http://localhost:${port}/hook`],
    ['an IPv4-mapped loopback address', (port: string) => `http://[::ffff:127.0.0.1]:${port}/hook`],
  ])('refuses %s without connecting', async (_what, url) => {
    const port = new URL(receiver.origin).port;
    const attempt = await sendWebhook({ agent: guarded, timeoutMs: TIMEOUT_MS }, endpoint(url(port)), webhookEvent('response.completed', 'r'));
    expect(attempt).toMatchObject({ status: 'failed', httpStatus: null });
    expect(attempt.error).toMatch(/not a public address/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(receiver.deliveries).toHaveLength(0);
  });

  it('lets the same URL through when private URLs are allowed', async () => {
    const attempt = await sendWebhook(
      { agent: open, timeoutMs: TIMEOUT_MS },
      endpoint(`http://localhost:${new URL(receiver.origin).port}/hook`),
      webhookEvent('response.completed', 'r'),
    );
    expect(attempt).toMatchObject({ status: 'succeeded', httpStatus: 200 });
  });

  it('its lookup drops what is not public, in both of the forms net.connect asks for', async () => {
    const lookup = publicOnlyLookup();
    const single = await new Promise<unknown>((resolve) => lookup('localhost', { family: 0 }, (error) => resolve(error)));
    expect(single).toBeInstanceOf(BlockedAddressError);
    const all = await new Promise<unknown>((resolve) => lookup('localhost', { all: true }, (error) => resolve(error)));
    expect(all).toBeInstanceOf(BlockedAddressError);
    // A name the resolver does not know keeps its own error.
    const unknown = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookupCallback('no-such-host.invalid', (error) => resolve(error)));
    const guardedUnknown = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookup('no-such-host.invalid', {}, (error) => resolve(error)));
    expect(guardedUnknown?.code).toBe(unknown?.code);
  });
});
