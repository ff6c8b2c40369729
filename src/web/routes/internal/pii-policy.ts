import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { PiiPolicyInputSchema, piiPolicyJson, setPiiPolicy, type PiiPolicyAdminDeps } from '../../../domain/pii/pii-policy-admin.ts';
import type { TenantSettingsCache } from '../../../domain/tenants/tenant-settings.ts';
import { actorOf } from './actor.ts';

/** GET and PUT /internal/v1/pii-policy: the caller's tenant's PII policy (its admins). */
export async function internalPiiPolicyRoutes(app: FastifyInstance, options: { admin: PiiPolicyAdminDeps; settings: TenantSettingsCache }): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.get('/pii-policy', { config: { permission: 'policies.write' } }, async (request) =>
    piiPolicyJson((await options.settings.get(request.principal.tenantId)).pii),
  );
  typed.put('/pii-policy', { schema: { body: PiiPolicyInputSchema }, config: { permission: 'policies.write' } }, async (request) => {
    const policy = await setPiiPolicy(options.admin, request.principal.tenantId, request.body, actorOf(request));
    return piiPolicyJson(policy);
  });
}
