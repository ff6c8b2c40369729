/** The events a webhook endpoint can subscribe to, shaped as OpenAI shapes its webhook events. */
import { ulid } from 'ulid';

/** Every event type, the one list: a new kind of event (`batch.completed`…) is one line here. */
export const WEBHOOK_EVENT_TYPES = ['response.completed', 'response.failed', 'response.cancelled', 'response.incomplete'] as const;

/** One event type. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** An event as delivered: OpenAI's `{id, object: 'event', type, created_at, data: {id}}`. */
export interface WebhookEvent {
  /** `evt_<ulid>`: the `webhook-id` header of every attempt of its delivery. */
  id: string;
  object: 'event';
  type: WebhookEventType;
  /** Unix seconds. */
  created_at: number;
  /** The object the event is about (a response's `resp_…`). */
  data: { id: string };
}

/** True when `type` is one of WEBHOOK_EVENT_TYPES. */
export function isWebhookEventType(type: string): type is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type);
}

/** A new event about the object `dataId`, with a fresh id and the current time. */
export function webhookEvent(type: WebhookEventType, dataId: string, now: Date = new Date()): WebhookEvent {
  return { id: `evt_${ulid(now.getTime())}`, object: 'event', type, created_at: Math.floor(now.getTime() / 1000), data: { id: dataId } };
}

/** The body of a delivery: the event's fields in OpenAI's order, whatever order a stored event comes back in (jsonb sorts keys). */
export function webhookEventBody(event: WebhookEvent): string {
  const { id, object, type, created_at, data, ...rest } = event;
  return JSON.stringify({ id, object, type, created_at, data, ...rest });
}
