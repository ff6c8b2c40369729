import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  createKey,
  KeyInputSchema,
  keyJson,
  listedKeyJson,
  KeyLimitsUpdateSchema,
  listKeys,
  revokeKey,
  updateKeyLimits,
  type KeyAdminDeps,
} from '../../../domain/access/key-admin.ts';
import { targetTenant } from '../../../domain/access/roles.ts';
import { TenantIdSchema } from '../../../domain/tenants/tenant-id.ts';
import { actorOf } from './actor.ts';

const TenantQuery = Type.Object({ tenant: Type.Optional(TenantIdSchema) }, { additionalProperties: false });
const KeyParams = Type.Object({ id: Type.String({ minLength: 1 }) });

/**
 * API keys of the caller's tenant (its admins), or of the tenant named by `tenant` in the body
 * or query (the operator tenant's admins only).
 */
export async function internalKeyRoutes(app: FastifyInstance, options: { admin: KeyAdminDeps; operatorTenant: string }): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.post('/keys', { schema: { body: KeyInputSchema }, config: { permission: 'keys.write' } }, async (request, reply) => {
    const tenantId = targetTenant(request.principal, request.body.tenant, options.operatorTenant, 'keys.write');
    const { key, secret } = await createKey(options.admin, tenantId, request.body, actorOf(request));
    return reply.code(201).send({ ...keyJson(key), secret });
  });
  typed.get('/keys', { schema: { querystring: TenantQuery }, config: { permission: 'keys.read' } }, async (request) => {
    const tenantId = targetTenant(request.principal, request.query.tenant, options.operatorTenant, 'keys.read');
    return { object: 'list', data: (await listKeys(options.admin, tenantId)).map(listedKeyJson) };
  });
  typed.patch(
    '/keys/:id',
    { schema: { params: KeyParams, querystring: TenantQuery, body: KeyLimitsUpdateSchema }, config: { permission: 'keys.write' } },
    async (request) => {
      const tenantId = targetTenant(request.principal, request.query.tenant, options.operatorTenant, 'keys.write');
      return keyJson(await updateKeyLimits(options.admin, tenantId, request.params.id, request.body, actorOf(request)));
    },
  );
  typed.delete('/keys/:id', { schema: { params: KeyParams, querystring: TenantQuery }, config: { permission: 'keys.write' } }, async (request) => {
    const tenantId = targetTenant(request.principal, request.query.tenant, options.operatorTenant, 'keys.write');
    return keyJson(await revokeKey(options.admin, tenantId, request.params.id, actorOf(request)));
  });
}
