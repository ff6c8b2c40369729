import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  createWebhook,
  deleteWebhook,
  deliveryJson,
  listWebhookDeliveries,
  listWebhooks,
  resendWebhookDelivery,
  rotateWebhookSecret,
  updateWebhook,
  WebhookInputSchema,
  webhookJson,
  WebhookUpdateSchema,
  type WebhookAdminDeps,
} from '../../../domain/webhooks/webhook-admin.ts';
import { parseLimit } from '../query-params.ts';
import { actorOf } from './actor.ts';

const Id = Type.String({ minLength: 1, maxLength: 64 });
const WebhookParams = Type.Object({ id: Id });
const DeliveryParams = Type.Object({ id: Id, delivery_id: Id });
const PageQuery = Type.Object({ limit: Type.Optional(Type.String()), after: Type.Optional(Type.String({ minLength: 1 })) }, { additionalProperties: false });
const MANAGE = { permission: 'webhooks.manage' } as const;

/**
 * Webhook endpoints of the caller's tenant (its admins): registration (the secret is shown in that
 * answer and in a rotation's only), changes, removal, and each endpoint's delivery attempts and resends.
 */
export async function internalWebhookRoutes(app: FastifyInstance, options: { admin: WebhookAdminDeps }): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.post('/webhooks', { schema: { body: WebhookInputSchema }, config: MANAGE }, async (request, reply) => {
    const { endpoint, secret } = await createWebhook(options.admin, request.principal.tenantId, request.body, actorOf(request));
    return reply.code(201).send({ ...webhookJson(endpoint), secret });
  });
  typed.get('/webhooks', { config: MANAGE }, async (request) => ({
    object: 'list',
    data: (await listWebhooks(options.admin, request.principal.tenantId)).map((endpoint) => webhookJson(endpoint)),
  }));
  typed.patch('/webhooks/:id', { schema: { params: WebhookParams, body: WebhookUpdateSchema }, config: MANAGE }, async (request) =>
    webhookJson(await updateWebhook(options.admin, request.principal.tenantId, request.params.id, request.body, actorOf(request))),
  );
  typed.delete('/webhooks/:id', { schema: { params: WebhookParams }, config: MANAGE }, async (request) => {
    await deleteWebhook(options.admin, request.principal.tenantId, request.params.id, actorOf(request));
    return { object: 'webhook_endpoint.deleted', id: request.params.id, deleted: true };
  });
  typed.post('/webhooks/:id/rotate-secret', { schema: { params: WebhookParams }, config: MANAGE }, async (request) => {
    const { endpoint, secret } = await rotateWebhookSecret(options.admin, request.principal.tenantId, request.params.id, actorOf(request));
    return { ...webhookJson(endpoint), secret };
  });
  typed.get('/webhooks/:id/deliveries', { schema: { params: WebhookParams, querystring: PageQuery }, config: MANAGE }, async (request) => {
    const limit = parseLimit(request.query.limit, 20, 100);
    const page = await listWebhookDeliveries(options.admin, request.principal.tenantId, request.params.id, { limit, after: request.query.after ?? null });
    const data = page.deliveries.map(deliveryJson);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore };
  });
  typed.post('/webhooks/:id/deliveries/:delivery_id/resend', { schema: { params: DeliveryParams }, config: MANAGE }, async (request, reply) => {
    const delivery = await resendWebhookDelivery(options.admin, request.principal.tenantId, request.params.id, request.params.delivery_id, actorOf(request));
    return reply.code(202).send({ object: 'webhook_delivery.resend', webhook_id: delivery.webhookId, event_id: delivery.event.id, status: 'queued' });
  });
}
