import { ROLES, type ApiKeyLimits, type Role } from '../../infra/store/repository.ts';
import { PermissionDeniedError } from '../../errors/gateway-error.ts';

/** Who may hold a permission, and how a refusal names it (`The role 'app' may not <describe>.`). */
export interface PermissionRule {
  readonly roles: readonly Role[];
  readonly describe: string;
}

/** The roles that may call models (DESIGN.md: `app` does nothing else). */
export const MODEL_ROLES = ['admin', 'developer', 'app'] as const satisfies readonly Role[];

/**
 * The role matrix of DESIGN.md for the routes that are not operations; each operation
 * (src/operations/) names its own. Routes name their permission in `config.permission`; the auth
 * hook is the one place that checks it.
 */
export const ROUTE_PERMISSIONS = {
  'session.read': { roles: ROLES, describe: 'read its own identity and permissions' },
  'models.read': { roles: MODEL_ROLES, describe: 'list models' },
  'prompts.read': { roles: ['admin', 'developer'], describe: 'read prompts' },
  'usage.read': { roles: ['admin', 'developer', 'auditor'], describe: 'read usage' },
  'budgets.read': { roles: ['admin', 'developer', 'auditor'], describe: 'read budgets' },
  'audit.read': { roles: ['admin', 'auditor'], describe: 'read the audit log' },
  'audit.verify': { roles: ['admin', 'auditor'], describe: 'verify the audit chain' },
  'prompts.write': { roles: ['admin'], describe: 'create or activate prompt versions' },
  'budgets.write': { roles: ['admin'], describe: 'create or delete budget policies' },
  'policies.write': { roles: ['admin'], describe: 'read or change the PII, data and response cache policies' },
  'tenants.operate': { roles: ['admin'], describe: "manage other tenants' credits and plans (operator tenant only)" },
  'tenants.read': { roles: ['admin'], describe: 'list tenants (operator tenant only)' },
  'tenants.write': { roles: ['admin'], describe: 'create, rename, disable or enable tenants (operator tenant only)' },
  'keys.read': { roles: ['admin'], describe: 'list API keys' },
  'keys.write': { roles: ['admin'], describe: 'create, change or revoke API keys' },
  'queues.read': { roles: ['admin'], describe: 'view the job queues (operator tenant only)' },
  'catalog.read': { roles: ['admin'], describe: "read the catalog's deployments and their circuit breakers (operator tenant only)" },
  'webhooks.manage': { roles: ['admin'], describe: 'manage webhook endpoints and their deliveries' },
  'files.read': { roles: MODEL_ROLES, describe: 'list and download files' },
  'files.write': { roles: MODEL_ROLES, describe: 'upload or delete files' },
  'batches.read': { roles: MODEL_ROLES, describe: 'read batches and their results' },
  'batches.write': { roles: MODEL_ROLES, describe: 'create, cancel or delete batches' },
} as const satisfies Record<string, PermissionRule>;

/** A permission of a route that is not an operation. */
export type RoutePermission = keyof typeof ROUTE_PERMISSIONS;

/** The start of a JWT principal's keyId (`jwt:<sub>`); an API key's id starts with `key_`. */
export const JWT_KEY_ID_PREFIX = 'jwt:';

/** Who is calling: resolved from an API key or a JWT. */
export interface Principal {
  tenantId: string;
  role: Role;
  keyId: string;
  /** An API key's own limits, read with the key; absent for a JWT, whose plan's key limits apply. */
  limits?: ApiKeyLimits;
}

/**
 * Permissions on other tenants (the queues hold every tenant's jobs, the catalog serves them all):
 * only admins of the operator tenant (the gateway's owner) hold them.
 */
export const OPERATOR_PERMISSIONS: ReadonlySet<string> = new Set<RoutePermission>([
  'tenants.operate',
  'tenants.read',
  'tenants.write',
  'queues.read',
  'catalog.read',
]);

/**
 * The tenant a request acts on: the principal's own, or the one it names, which only the
 * operator tenant's principals may name (others get 403 whether that tenant exists or not).
 */
export function targetTenant(principal: Principal, named: string | undefined, operatorTenant: string, permission: RoutePermission): string {
  if (named === undefined || named === principal.tenantId) return principal.tenantId;
  if (principal.tenantId !== operatorTenant)
    throw new PermissionDeniedError(`${principal.role} of tenant '${principal.tenantId}'`, `${ROUTE_PERMISSIONS[permission].describe} of another tenant`);
  return named;
}

/** The kind of credential a principal was resolved from. */
export function credentialKind(principal: Principal): 'api_key' | 'jwt' {
  return principal.keyId.startsWith(JWT_KEY_ID_PREFIX) ? 'jwt' : 'api_key';
}
