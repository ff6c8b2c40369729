import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { DataPolicyInputSchema, dataPolicyJson, setDataPolicy, type DataPolicyAdminDeps } from '../../../domain/tenants/data-policy-admin.ts';
import type { TenantSettingsCache } from '../../../domain/tenants/tenant-settings.ts';
import { actorOf } from './actor.ts';

/** GET and PUT /internal/v1/data-policy: whether the caller's tenant's responses are stored, and how long (its admins). */
export async function internalDataPolicyRoutes(app: FastifyInstance, options: { admin: DataPolicyAdminDeps; settings: TenantSettingsCache }): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.get('/data-policy', { config: { permission: 'policies.write' } }, async (request) =>
    dataPolicyJson((await options.settings.get(request.principal.tenantId)).dataPolicy),
  );
  typed.put('/data-policy', { schema: { body: DataPolicyInputSchema }, config: { permission: 'policies.write' } }, async (request) => {
    const policy = await setDataPolicy(options.admin, request.principal.tenantId, request.body, actorOf(request));
    return dataPolicyJson(policy);
  });
}
