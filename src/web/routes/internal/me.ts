import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { credentialKind, JWT_KEY_ID_PREFIX, type Principal } from '../../../domain/access/roles.ts';
import { ROLES, type TenantRepository } from '../../../infra/store/repository.ts';
import { heldPermissions, type PermissionTable } from '../../auth/permissions.ts';

/** GET /internal/v1/me's answer: who the caller is, and every permission it holds (what the console shows follows from it). */
export const MeSchema = Type.Object({
  object: Type.Literal('principal'),
  tenant: Type.Object({
    id: Type.String(),
    name: Type.Union([Type.String(), Type.Null()], { description: "Null for a JWT's tenant that the store does not know." }),
    operator: Type.Boolean({ description: 'The operator tenant (OPERATOR_TENANT), whose admins hold the operator permissions.' }),
  }),
  role: Type.Union(ROLES.map((role) => Type.Literal(role))),
  key_id: Type.Union([Type.String(), Type.Null()], { description: 'The API key; null for a JWT.' }),
  subject: Type.Union([Type.String(), Type.Null()], { description: "A JWT's subject (`sub`, or `jti`); null for an API key." }),
  auth: Type.Union([Type.Literal('api_key'), Type.Literal('jwt')]),
  permissions: Type.Array(Type.String(), { description: 'Route and operation permissions (src/domain/access/roles.ts, each operation), sorted.' }),
});

/** The principal on the wire. */
function meJson(principal: Principal, tenantName: string | null, operatorTenant: string, permissions: PermissionTable): Static<typeof MeSchema> {
  const auth = credentialKind(principal);
  const [keyId, subject] = auth === 'jwt' ? [null, principal.keyId.slice(JWT_KEY_ID_PREFIX.length)] : [principal.keyId, null];
  return {
    object: 'principal',
    tenant: { id: principal.tenantId, name: tenantName, operator: principal.tenantId === operatorTenant },
    role: principal.role,
    key_id: keyId,
    subject,
    auth,
    permissions: heldPermissions(principal, operatorTenant, permissions),
  };
}

/** GET /internal/v1/me: the caller's principal and permissions, for every role (`session.read`), from the auth hook's own table. */
export async function internalMeRoutes(
  app: FastifyInstance,
  options: { tenants: TenantRepository; operatorTenant: string; permissions: PermissionTable },
): Promise<void> {
  app.get('/me', { config: { permission: 'session.read' } }, async (request) => {
    const tenant = await options.tenants.get(request.principal.tenantId);
    return meJson(request.principal, tenant?.name ?? null, options.operatorTenant, options.permissions);
  });
}
