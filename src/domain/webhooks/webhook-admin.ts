/** Webhook endpoints administered by a tenant's admins: registration, changes, secret rotation, deliveries and resends, audited. */
import { Type, type Static } from '@sinclair/typebox';
import { ulid } from 'ulid';
import type { Repository, WebhookDelivery, WebhookEndpoint } from '../../infra/store/repository.ts';
import { InvalidValueError, ResourceNotFoundError } from '../../errors/gateway-error.ts';
import { auditEvent, type AuditSink } from '../audit/audit-event.ts';
import type { Actor } from '../prompts/prompt-admin.ts';
import { generateWebhookSecret, PREVIOUS_SECRET_VALID_MS } from './signing.ts';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES, type WebhookEvent, type WebhookEventType } from './webhook-event.ts';
import { checkWebhookUrl, type WebhookUrlRules } from './webhook-url.ts';

// Event types are checked in code, not by the schema, so that any mistake is a 400 naming 'events' with the list.
const EventsSchema = Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 });

/** A new endpoint as sent. */
export const WebhookInputSchema = Type.Object({ url: Type.String(), events: EventsSchema }, { additionalProperties: false });

/** A change of an endpoint as sent: at least one field. */
export const WebhookUpdateSchema = Type.Object(
  { url: Type.Optional(Type.String()), events: Type.Optional(EventsSchema), enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

/** What webhook administration needs; `resend` queues one more attempt of an event (src/infra/webhooks/webhook-queue.ts). */
export interface WebhookAdminDeps {
  repository: Repository;
  audit: AuditSink;
  urlRules: WebhookUrlRules;
  resend(tenantId: string, webhookId: string, event: WebhookEvent): Promise<void>;
}

/** An endpoint and its secret, which only this answer shows. */
export interface EndpointWithSecret {
  endpoint: WebhookEndpoint;
  secret: string;
}

function checkEvents(events: readonly string[]): WebhookEventType[] {
  const known = WEBHOOK_EVENT_TYPES.join(', ');
  if (events.length === 0) throw new InvalidValueError('events', `'events' must name at least one event type: ${known}.`);
  const unknown = events.find((type) => !isWebhookEventType(type));
  if (unknown !== undefined) throw new InvalidValueError('events', `'${unknown}' is not an event type; the types are: ${known}.`);
  return [...new Set(events)] as WebhookEventType[];
}

async function record(
  deps: WebhookAdminDeps,
  tenantId: string,
  by: Actor,
  action: string,
  target: string,
  details: Record<string, unknown> = {},
): Promise<void> {
  await deps.audit(auditEvent({ tenantId, actor: by.actor, action, target, outcome: 'success', requestId: by.requestId, details }));
}

/** The tenant's endpoint; 404 when it has none of that id (another tenant's included). */
export async function getWebhook(deps: WebhookAdminDeps, tenantId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await deps.repository.webhooks.get(tenantId, id);
  if (!endpoint) throw new ResourceNotFoundError(`Webhook '${id}'`);
  return endpoint;
}

/** The tenant's endpoints, oldest first. */
export function listWebhooks(deps: WebhookAdminDeps, tenantId: string): Promise<WebhookEndpoint[]> {
  return deps.repository.webhooks.list(tenantId);
}

/** Registers an endpoint, enabled, with a new secret; audited (never with the secret). */
export async function createWebhook(
  deps: WebhookAdminDeps,
  tenantId: string,
  input: Static<typeof WebhookInputSchema>,
  by: Actor,
): Promise<EndpointWithSecret> {
  const url = await checkWebhookUrl(input.url, deps.urlRules);
  const events = checkEvents(input.events);
  const secret = generateWebhookSecret();
  const endpoint = await deps.repository.webhooks.create({ id: `wh_${ulid().toLowerCase()}`, tenantId, url, events, secret });
  await record(deps, tenantId, by, 'webhook.created', endpoint.id, { url, events });
  return { endpoint, secret };
}

/** Changes an endpoint's URL (checked again), events or whether it is enabled; audited. */
export async function updateWebhook(
  deps: WebhookAdminDeps,
  tenantId: string,
  id: string,
  input: Static<typeof WebhookUpdateSchema>,
  by: Actor,
): Promise<WebhookEndpoint> {
  if (input.url === undefined && input.events === undefined && input.enabled === undefined)
    throw new InvalidValueError(null, "Send at least one of 'url', 'events' and 'enabled'.");
  await getWebhook(deps, tenantId, id);
  const change = {
    ...(input.url === undefined ? {} : { url: await checkWebhookUrl(input.url, deps.urlRules) }),
    ...(input.events === undefined ? {} : { events: checkEvents(input.events) }),
    ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
  };
  const endpoint = await deps.repository.webhooks.update(tenantId, id, change);
  if (!endpoint) throw new ResourceNotFoundError(`Webhook '${id}'`);
  await record(deps, tenantId, by, 'webhook.updated', id, change);
  return endpoint;
}

/** Removes an endpoint and its deliveries; deliveries still queued for it are dropped. Audited. */
export async function deleteWebhook(deps: WebhookAdminDeps, tenantId: string, id: string, by: Actor): Promise<void> {
  if (!(await deps.repository.webhooks.delete(tenantId, id))) throw new ResourceNotFoundError(`Webhook '${id}'`);
  await record(deps, tenantId, by, 'webhook.deleted', id);
}

/**
 * Gives the endpoint a new secret. The one it had signs deliveries too for 24 hours (each then
 * carries both signatures), so that receivers can switch without refusing any; a second rotation
 * within them retires it early. Audited.
 */
export async function rotateWebhookSecret(deps: WebhookAdminDeps, tenantId: string, id: string, by: Actor): Promise<EndpointWithSecret> {
  const secret = generateWebhookSecret();
  const previousExpiresAt = new Date(Date.now() + PREVIOUS_SECRET_VALID_MS);
  const endpoint = await deps.repository.webhooks.rotateSecret(tenantId, id, secret, previousExpiresAt);
  if (!endpoint) throw new ResourceNotFoundError(`Webhook '${id}'`);
  await record(deps, tenantId, by, 'webhook.secret_rotated', id, { previous_secret_expires_at: previousExpiresAt.toISOString() });
  return { endpoint, secret };
}

/** A page of the endpoint's attempts, newest first; 404 for an unknown endpoint. One more than `limit` tells whether there are more. */
export async function listWebhookDeliveries(
  deps: WebhookAdminDeps,
  tenantId: string,
  id: string,
  page: { limit: number; after: string | null },
): Promise<{ deliveries: WebhookDelivery[]; hasMore: boolean }> {
  await getWebhook(deps, tenantId, id);
  const rows = await deps.repository.webhooks.listDeliveries(tenantId, id, { limit: page.limit + 1, after: page.after });
  return { deliveries: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/** Queues one more attempt of a delivery's event to its endpoint (same `webhook-id`); audited. The endpoint must be enabled. */
export async function resendWebhookDelivery(deps: WebhookAdminDeps, tenantId: string, id: string, deliveryId: string, by: Actor): Promise<WebhookDelivery> {
  const endpoint = await getWebhook(deps, tenantId, id);
  const delivery = await deps.repository.webhooks.getDelivery(tenantId, id, deliveryId);
  if (!delivery) throw new ResourceNotFoundError(`Delivery '${deliveryId}' of webhook '${id}'`);
  if (!endpoint.enabled) throw new InvalidValueError(null, `Webhook '${id}' is disabled; enable it (PATCH with "enabled": true) before resending.`);
  await deps.resend(tenantId, id, delivery.event);
  await record(deps, tenantId, by, 'webhook.resent', id, { delivery_id: deliveryId, event_id: delivery.event.id });
  return delivery;
}

/** An endpoint on the wire: never its secrets. */
export function webhookJson(endpoint: WebhookEndpoint, now: Date = new Date()) {
  const rotating = endpoint.previousSecretExpiresAt !== null && endpoint.previousSecretExpiresAt > now;
  return {
    object: 'webhook_endpoint',
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    enabled: endpoint.enabled,
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
    previous_secret_expires_at: rotating ? (endpoint.previousSecretExpiresAt as Date).toISOString() : null,
  };
}

/** An attempt on the wire. */
export function deliveryJson(delivery: WebhookDelivery) {
  return {
    object: 'webhook_delivery',
    id: delivery.id,
    webhook_id: delivery.webhookId,
    event_id: delivery.event.id,
    event_type: delivery.event.type,
    attempt: delivery.attempt,
    status: delivery.status,
    http_status: delivery.httpStatus,
    latency_ms: delivery.latencyMs,
    error: delivery.error,
    created_at: delivery.createdAt.toISOString(),
  };
}
