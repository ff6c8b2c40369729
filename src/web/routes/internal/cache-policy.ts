import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { CachePolicyInputSchema, cachePolicyJson, setCachePolicy, type CachePolicyAdminDeps } from '../../../domain/cache/cache-policy-admin.ts';
import type { TenantSettingsCache } from '../../../domain/tenants/tenant-settings.ts';
import { actorOf } from './actor.ts';

/** GET and PUT /internal/v1/cache-policy: whether the caller's tenant's answers are cached, how long and how much (its admins). */
export async function internalCachePolicyRoutes(app: FastifyInstance, options: { admin: CachePolicyAdminDeps; settings: TenantSettingsCache }): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.get('/cache-policy', { config: { permission: 'policies.write' } }, async (request) =>
    cachePolicyJson((await options.settings.get(request.principal.tenantId)).cache),
  );
  typed.put('/cache-policy', { schema: { body: CachePolicyInputSchema }, config: { permission: 'policies.write' } }, async (request) => {
    const policy = await setCachePolicy(options.admin, request.principal.tenantId, request.body, actorOf(request));
    return cachePolicyJson(policy);
  });
}
