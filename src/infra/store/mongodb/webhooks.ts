/** Webhook endpoints and their deliveries in MongoDB; field names mirror the PostgreSQL columns, `_id` is the id. */
import { Schema, type Connection, type Model } from 'mongoose';
import type { WebhookEvent, WebhookEventType } from '../../../domain/webhooks/webhook-event.ts';
import type { WebhookDelivery, WebhookEndpoint, WebhookRepository } from '../repository.ts';

/** An endpoint; its secrets are kept as they are (they sign every delivery). */
export interface WebhookEndpointDocument {
  _id: string;
  tenant_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** One attempt of a delivery. */
export interface WebhookDeliveryDocument {
  _id: string;
  tenant_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  event: WebhookEvent;
  attempt: number;
  status: 'succeeded' | 'failed';
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  created_at: Date;
}

/** The webhook models of one connection. */
export interface WebhookModels {
  EndpointModel: Model<WebhookEndpointDocument>;
  DeliveryModel: Model<WebhookDeliveryDocument>;
}

const endpointSchema = new Schema<WebhookEndpointDocument>(
  {
    _id: { type: String, required: true },
    tenant_id: { type: String, required: true },
    url: { type: String, required: true },
    events: { type: [String], required: true },
    enabled: { type: Boolean, required: true },
    secret: { type: String, required: true },
    previous_secret: { type: String, default: null },
    previous_secret_expires_at: { type: Date, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'webhook_endpoints', versionKey: false },
);
endpointSchema.index({ tenant_id: 1, created_at: 1, _id: 1 });

const deliverySchema = new Schema<WebhookDeliveryDocument>(
  {
    _id: { type: String, required: true },
    tenant_id: { type: String, required: true },
    webhook_id: { type: String, required: true },
    event_id: { type: String, required: true },
    event_type: { type: String, required: true },
    event: { type: Schema.Types.Mixed, required: true },
    attempt: { type: Number, required: true },
    status: { type: String, required: true, enum: ['succeeded', 'failed'] },
    http_status: { type: Number, default: null },
    latency_ms: { type: Number, required: true },
    error: { type: String, default: null },
    created_at: { type: Date, required: true },
  },
  { collection: 'webhook_deliveries', versionKey: false },
);
deliverySchema.index({ tenant_id: 1, webhook_id: 1, created_at: -1, _id: -1 });
deliverySchema.index({ tenant_id: 1, webhook_id: 1, event_id: 1, attempt: -1 });

/** Compiles the webhook models on `connection`. */
export function createWebhookModels(connection: Connection): WebhookModels {
  return {
    EndpointModel: connection.model<WebhookEndpointDocument>('WebhookEndpoint', endpointSchema),
    DeliveryModel: connection.model<WebhookDeliveryDocument>('WebhookDelivery', deliverySchema),
  };
}

function toEndpoint(doc: WebhookEndpointDocument): WebhookEndpoint {
  return {
    id: doc._id,
    tenantId: doc.tenant_id,
    url: doc.url,
    // Written from the event list only (src/domain/webhooks/webhook-admin.ts checks every type).
    events: [...doc.events] as WebhookEventType[],
    enabled: doc.enabled,
    secret: doc.secret,
    previousSecret: doc.previous_secret ?? null,
    previousSecretExpiresAt: doc.previous_secret_expires_at ?? null,
    createdAt: doc.created_at,
    updatedAt: doc.updated_at,
  };
}

function toDelivery(doc: WebhookDeliveryDocument): WebhookDelivery {
  return {
    id: doc._id,
    tenantId: doc.tenant_id,
    webhookId: doc.webhook_id,
    event: doc.event,
    attempt: doc.attempt,
    status: doc.status,
    httpStatus: doc.http_status ?? null,
    latencyMs: doc.latency_ms,
    error: doc.error ?? null,
    createdAt: doc.created_at,
  };
}

/** The endpoint's deliveries after `after` (newest first): older, or as old with a smaller id. */
async function deliveriesAfter(models: WebhookModels, tenantId: string, webhookId: string, after: string | null) {
  const scope = { tenant_id: tenantId, webhook_id: webhookId };
  if (after === null) return scope;
  const cursor = await models.DeliveryModel.findOne({ ...scope, _id: after })
    .lean<WebhookDeliveryDocument>()
    .exec();
  // An unknown cursor matches nothing, as in the PostgreSQL adapter.
  if (!cursor) return { ...scope, _id: { $in: [] as string[] } };
  return { ...scope, $or: [{ created_at: { $lt: cursor.created_at } }, { created_at: cursor.created_at, _id: { $lt: cursor._id } }] };
}

/** The webhook repository over its models. */
export function createWebhookRepository(models: WebhookModels): WebhookRepository {
  const { EndpointModel, DeliveryModel } = models;
  const updated = async (tenantId: string, id: string, set: Record<string, unknown>) => {
    const doc = await EndpointModel.findOneAndUpdate(
      { _id: id, tenant_id: tenantId },
      { $set: { ...set, updated_at: new Date() } },
      { returnDocument: 'after' },
    )
      .lean<WebhookEndpointDocument>()
      .exec();
    return doc ? toEndpoint(doc) : null;
  };
  return {
    async create(endpoint) {
      const now = new Date();
      const doc: WebhookEndpointDocument = {
        _id: endpoint.id,
        tenant_id: endpoint.tenantId,
        url: endpoint.url,
        events: [...endpoint.events],
        enabled: true,
        secret: endpoint.secret,
        previous_secret: null,
        previous_secret_expires_at: null,
        created_at: now,
        updated_at: now,
      };
      await EndpointModel.create(doc);
      return toEndpoint(doc);
    },
    async get(tenantId, id) {
      const doc = await EndpointModel.findOne({ _id: id, tenant_id: tenantId }).lean<WebhookEndpointDocument>().exec();
      return doc ? toEndpoint(doc) : null;
    },
    async list(tenantId) {
      const docs = await EndpointModel.find({ tenant_id: tenantId }).sort({ created_at: 1, _id: 1 }).lean<WebhookEndpointDocument[]>().exec();
      return docs.map(toEndpoint);
    },
    async listSubscribed(tenantId, eventType) {
      const docs = await EndpointModel.find({ tenant_id: tenantId, enabled: true, events: eventType })
        .sort({ created_at: 1, _id: 1 })
        .lean<WebhookEndpointDocument[]>()
        .exec();
      return docs.map(toEndpoint);
    },
    update(tenantId, id, change) {
      const set: Record<string, unknown> = {};
      if (change.url !== undefined) set.url = change.url;
      if (change.events !== undefined) set.events = [...change.events];
      if (change.enabled !== undefined) set.enabled = change.enabled;
      return updated(tenantId, id, set);
    },
    async rotateSecret(tenantId, id, secret, previousExpiresAt) {
      // One update with a pipeline, so that two rotations at once cannot both keep the same previous secret.
      const doc = await EndpointModel.findOneAndUpdate(
        { _id: id, tenant_id: tenantId },
        [{ $set: { previous_secret: '$secret', previous_secret_expires_at: previousExpiresAt, secret, updated_at: new Date() } }],
        { returnDocument: 'after', updatePipeline: true },
      )
        .lean<WebhookEndpointDocument>()
        .exec();
      return doc ? toEndpoint(doc) : null;
    },
    async delete(tenantId, id) {
      const removed = await EndpointModel.deleteOne({ _id: id, tenant_id: tenantId }).exec();
      if (removed.deletedCount === 0) return false;
      await DeliveryModel.deleteMany({ webhook_id: id }).exec();
      return true;
    },
    async recordDelivery(d) {
      if (!(await EndpointModel.exists({ _id: d.webhookId, tenant_id: d.tenantId }).exec())) return;
      const doc: Omit<WebhookDeliveryDocument, '_id'> = {
        tenant_id: d.tenantId,
        webhook_id: d.webhookId,
        event_id: d.event.id,
        event_type: d.event.type,
        event: d.event,
        attempt: d.attempt,
        status: d.status,
        http_status: d.httpStatus,
        latency_ms: d.latencyMs,
        error: d.error,
        created_at: d.createdAt,
      };
      await DeliveryModel.updateOne({ _id: d.id }, { $setOnInsert: doc }, { upsert: true }).exec();
    },
    async listDeliveries(tenantId, webhookId, page) {
      const filter = await deliveriesAfter(models, tenantId, webhookId, page.after);
      const docs = await DeliveryModel.find(filter).sort({ created_at: -1, _id: -1 }).limit(page.limit).lean<WebhookDeliveryDocument[]>().exec();
      return docs.map(toDelivery);
    },
    async getDelivery(tenantId, webhookId, id) {
      const doc = await DeliveryModel.findOne({ _id: id, tenant_id: tenantId, webhook_id: webhookId }).lean<WebhookDeliveryDocument>().exec();
      return doc ? toDelivery(doc) : null;
    },
    async lastAttempt(tenantId, webhookId, eventId) {
      const doc = await DeliveryModel.findOne({ tenant_id: tenantId, webhook_id: webhookId, event_id: eventId })
        .sort({ attempt: -1 })
        .lean<WebhookDeliveryDocument>()
        .exec();
      return doc?.attempt ?? 0;
    },
  };
}
