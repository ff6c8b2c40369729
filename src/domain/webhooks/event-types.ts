/**
 * The events a webhook endpoint can subscribe to: the one list, which the console's form reads too (this module
 * imports nothing, so a browser bundle can take it). A new kind of event (`batch.completed`…) is one line here.
 */
export const WEBHOOK_EVENT_TYPES = [
  'response.completed',
  'response.failed',
  'response.cancelled',
  'response.incomplete',
  'batch.completed',
  'batch.failed',
  'batch.expired',
  'batch.cancelled',
] as const;

/** One event type. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
