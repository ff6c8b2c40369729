/** The events a webhook endpoint can subscribe to, shaped as OpenAI shapes its webhook events. */
import { createHash } from 'node:crypto';
import { ulid } from 'ulid';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './event-types.ts';

export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './event-types.ts';

/** An event as delivered: OpenAI's `{id, object: 'event', type, created_at, data: {id}}`. */
export interface WebhookEvent {
  /** `evt_…`: the `webhook-id` header of every attempt of its delivery. */
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

/** A new event about the object `dataId`, with a fresh id (unless given) and the current time. */
export function webhookEvent(type: WebhookEventType, dataId: string, now: Date = new Date(), id = `evt_${ulid(now.getTime())}`): WebhookEvent {
  return { id, object: 'event', type, created_at: Math.floor(now.getTime() / 1000), data: { id: dataId } };
}

/**
 * The id of the event that an object ended (`response.completed` of `resp_…`): an object ends
 * once, so every report of that end (a retried finish, two reapers, a redelivered record) is the
 * same event, with the same `webhook-id`, and the delivery queue sends it once.
 */
export function endEventId(tenantId: string, type: WebhookEventType, dataId: string): string {
  return `evt_${createHash('sha256').update(`${tenantId}\n${type}\n${dataId}`).digest('hex').slice(0, 32)}`;
}

/** The body of a delivery: the event's fields in OpenAI's order, whatever order a stored event comes back in (jsonb sorts keys). */
export function webhookEventBody(event: WebhookEvent): string {
  const { id, object, type, created_at, data, ...rest } = event;
  return JSON.stringify({ id, object, type, created_at, data, ...rest });
}
