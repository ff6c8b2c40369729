import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { createTenant, TenantInputSchema, tenantJson, TenantUpdateSchema, updateTenant, type TenantAdminDeps } from '../../../domain/tenants/tenant-admin.ts';
import { TenantIdSchema } from '../../../domain/tenants/tenant-id.ts';
import { actorOf } from './actor.ts';

/** Tenants: create, list, rename, disable and enable (the operator tenant's admins only). */
export async function internalTenantRoutes(app: FastifyInstance, options: { admin: TenantAdminDeps }): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.post('/tenants', { schema: { body: TenantInputSchema }, config: { permission: 'tenants.write' } }, async (request, reply) => {
    return reply.code(201).send(tenantJson(await createTenant(options.admin, request.body, actorOf(request))));
  });
  typed.get('/tenants', { config: { permission: 'tenants.read' } }, async () => ({
    object: 'list',
    data: (await options.admin.repository.tenants.list()).map(tenantJson),
  }));
  typed.patch(
    '/tenants/:tenant',
    { schema: { params: Type.Object({ tenant: TenantIdSchema }), body: TenantUpdateSchema }, config: { permission: 'tenants.write' } },
    async (request) => {
      return tenantJson(await updateTenant(options.admin, request.params.tenant, request.body, actorOf(request)));
    },
  );
}
