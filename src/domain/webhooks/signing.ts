/**
 * Webhook secrets and signatures, as Standard Webhooks specifies them
 * (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md)
 * and the `openai` SDK's `webhooks.unwrap()` verifies them.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { WebhookEndpoint } from '../../infra/store/repository.ts';

const SECRET_PREFIX = 'whsec_';

/** How long the secret before a rotation still signs deliveries, so that receivers can switch without losing any. */
export const PREVIOUS_SECRET_VALID_MS = 24 * 60 * 60 * 1000;

/** A new secret: `whsec_` and the base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The HMAC key of a secret: the base64-decoded part after `whsec_`. */
function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, one per secret, space-separated: a receiver accepts any that matches. */
export function signWebhook(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  const signed = `${id}.${timestamp}.${body}`;
  return secrets.map((secret) => `v1,${createHmac('sha256', secretKey(secret)).update(signed).digest('base64')}`).join(' ');
}

/** The three headers of one attempt: the event id (the same on every retry), the time in seconds, the signatures. */
export function webhookHeaders(secrets: readonly string[], id: string, body: string, now: Date = new Date()): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(secrets, id, timestamp, body) };
}

/** The secrets that sign a delivery now: the current one, and the previous one while it is valid. */
export function signingSecrets(endpoint: Pick<WebhookEndpoint, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>, now: Date = new Date()): string[] {
  const previousValid = endpoint.previousSecret !== null && endpoint.previousSecretExpiresAt !== null && endpoint.previousSecretExpiresAt > now;
  return previousValid ? [endpoint.secret, endpoint.previousSecret as string] : [endpoint.secret];
}
