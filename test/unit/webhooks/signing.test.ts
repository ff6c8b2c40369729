/** Standard Webhooks signatures, checked against the spec's test vector and against the official `openai` SDK's verifier. */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signingSecrets, signWebhook, webhookHeaders } from '../../../src/domain/webhooks/signing.ts';
import { WEBHOOK_EVENT_TYPES, webhookEvent, webhookEventBody, type WebhookEvent } from '../../../src/domain/webhooks/webhook-event.ts';

const client = new OpenAI({ apiKey: 'unused', baseURL: 'http://127.0.0.1:9' });

function signed(secrets: string[], body = JSON.stringify(webhookEvent('response.completed', 'resp_abc'))) {
  const id = (JSON.parse(body) as { id?: string }).id ?? 'msg_1';
  return { body, headers: webhookHeaders(secrets, id, body) };
}

describe('signWebhook', () => {
  it('reproduces the Standard Webhooks test vector', () => {
    // standard-webhooks/libraries, javascript/src/index.test.ts: the spec's example secret, id, time and payload.
    const signature = signWebhook(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('writes one v1 signature per secret, space-separated, in the order given', () => {
    const [a, b] = [generateWebhookSecret(), generateWebhookSecret()];
    const both = signWebhook([a, b], 'evt_1', 1_700_000_000, '{}');
    expect(both.split(' ')).toEqual([signWebhook([a], 'evt_1', 1_700_000_000, '{}'), signWebhook([b], 'evt_1', 1_700_000_000, '{}')]);
    expect(both).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('refuses a secret without the whsec_ prefix', () => {
    expect(() => signWebhook(['plain'], 'evt_1', 1, '{}')).toThrow(/whsec_/);
  });
});

describe('generateWebhookSecret', () => {
  it('is whsec_ and the base64 of 32 random bytes, never the same twice', () => {
    const secrets = Array.from({ length: 50 }, generateWebhookSecret);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    }
    expect(new Set(secrets).size).toBe(50);
  });
});

describe('the openai SDK verifies our deliveries', () => {
  it('unwraps a delivery signed with the secret into the event', async () => {
    const secret = generateWebhookSecret();
    const { body, headers } = signed([secret]);
    const event = await client.webhooks.unwrap(body, headers, secret);
    expect(event).toEqual(JSON.parse(body));
    expect(event.type).toBe('response.completed');
  });

  it('rejects a tampered body', async () => {
    const secret = generateWebhookSecret();
    const { body, headers } = signed([secret]);
    await expect(client.webhooks.unwrap(body.replace('resp_abc', 'resp_xyz'), headers, secret)).rejects.toThrow(/signature does not match/);
  });

  it('rejects another secret, and a changed webhook-id or timestamp', async () => {
    const secret = generateWebhookSecret();
    const { body, headers } = signed([secret]);
    await expect(client.webhooks.unwrap(body, headers, generateWebhookSecret())).rejects.toThrow(/signature does not match/);
    await expect(client.webhooks.unwrap(body, { ...headers, 'webhook-id': 'evt_other' }, secret)).rejects.toThrow(/signature does not match/);
    const earlier = String(Number(headers['webhook-timestamp']) - 1);
    await expect(client.webhooks.unwrap(body, { ...headers, 'webhook-timestamp': earlier }, secret)).rejects.toThrow(/signature does not match/);
  });

  it('during a rotation, accepts the two-signature header with either secret, and no third', async () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const { body, headers } = signed([current, previous]);
    expect(String(headers['webhook-signature']).split(' ')).toHaveLength(2);
    await expect(client.webhooks.unwrap(body, headers, current)).resolves.toEqual(JSON.parse(body));
    await expect(client.webhooks.unwrap(body, headers, previous)).resolves.toEqual(JSON.parse(body));
    await expect(client.webhooks.unwrap(body, headers, generateWebhookSecret())).rejects.toThrow(/signature does not match/);
  });
});

describe('signingSecrets', () => {
  const now = new Date('2026-11-01T12:00:00Z');
  it('adds the previous secret until it expires', () => {
    const endpoint = { secret: 'whsec_new', previousSecret: 'whsec_old', previousSecretExpiresAt: new Date(now.getTime() + 1000) };
    expect(signingSecrets(endpoint, now)).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets({ ...endpoint, previousSecretExpiresAt: now }, now)).toEqual(['whsec_new']);
    expect(signingSecrets({ secret: 'whsec_new', previousSecret: null, previousSecretExpiresAt: null }, now)).toEqual(['whsec_new']);
  });
});

describe('webhookEvent', () => {
  it("is shaped as OpenAI's events: evt_ id, object event, type, created_at in seconds, data.id", () => {
    const event = webhookEvent('response.failed', 'resp_123', new Date('2026-11-01T12:00:00.750Z'));
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_[0-9A-Z]{26}$/),
      object: 'event',
      type: 'response.failed',
      created_at: 1793534400,
      data: { id: 'resp_123' },
    });
    expect(webhookEvent('response.failed', 'resp_123').id).not.toBe(event.id);
  });

  it("is sent with its fields in OpenAI's order, however a store gave them back", () => {
    const event = webhookEvent('response.completed', 'resp_9');
    const reordered = { data: event.data, type: event.type, created_at: event.created_at, id: event.id, object: event.object } as WebhookEvent;
    expect(webhookEventBody(reordered)).toBe(webhookEventBody(event));
    expect(Object.keys(JSON.parse(webhookEventBody(reordered)))).toEqual(['id', 'object', 'type', 'created_at', 'data']);
  });

  it("lists the response and batch events OpenAI's webhooks send", () => {
    expect(WEBHOOK_EVENT_TYPES).toEqual([
      'response.completed',
      'response.failed',
      'response.cancelled',
      'response.incomplete',
      'batch.completed',
      'batch.failed',
      'batch.expired',
      'batch.cancelled',
    ]);
  });
});
