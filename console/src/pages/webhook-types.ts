/** A webhook endpoint as GET /internal/v1/webhooks lists it, and the event types it can subscribe to. */

/** An endpoint: never its secret, which only its registration's and a rotation's answers carry. */
export interface Webhook {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  created_at: string;
  /** During a rotation: until when the previous secret also signs deliveries. */
  previous_secret_expires_at: string | null;
}

/** An endpoint with its secret: what registering it and rotating its secret answer. */
export type WebhookWithSecret = Webhook & { secret: string };

export { WEBHOOK_EVENT_TYPES } from '../../../src/domain/webhooks/event-types.ts';

/** The endpoint's route. */
export const webhookPath = (webhook: Webhook) => `/internal/v1/webhooks/${encodeURIComponent(webhook.id)}`;
