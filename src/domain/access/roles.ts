import type { Role } from '../../infra/store/repository.ts';
import { PermissionDeniedError } from '../../errors/gateway-error.ts';

/**
 * The role matrix of DESIGN.md: which roles may perform each operation. Routes name
 * their operation in `config.operation`; the auth hook is the one place that checks it.
 */
export const PERMISSIONS = {
  'chat.create': { roles: ['admin', 'developer', 'app'], describe: 'create chat completions' },
  'embeddings.create': { roles: ['admin', 'developer', 'app'], describe: 'create embeddings' },
  'messages.create': { roles: ['admin', 'developer', 'app'], describe: 'create messages' },
  'responses.create': { roles: ['admin', 'developer', 'app'], describe: 'create responses' },
  'models.read': { roles: ['admin', 'developer', 'app'], describe: 'list models' },
  'prompts.read': { roles: ['admin', 'developer'], describe: 'read prompts' },
  'usage.read': { roles: ['admin', 'developer', 'auditor'], describe: 'read usage' },
  'budgets.read': { roles: ['admin', 'developer', 'auditor'], describe: 'read budgets' },
  'audit.read': { roles: ['admin', 'auditor'], describe: 'read the audit log' },
  'audit.verify': { roles: ['admin', 'auditor'], describe: 'verify the audit chain' },
  'prompts.write': { roles: ['admin'], describe: 'create or activate prompt versions' },
  'budgets.write': { roles: ['admin'], describe: 'create or delete budget policies' },
  'policies.write': { roles: ['admin'], describe: 'read or change the PII policy' },
  'tenants.operate': { roles: ['admin'], describe: 'manage other tenants\' credits and plans (operator tenant only)' },
  'tenants.read': { roles: ['admin'], describe: 'list tenants (operator tenant only)' },
  'tenants.write': { roles: ['admin'], describe: 'create, rename, disable or enable tenants (operator tenant only)' },
  'keys.read': { roles: ['admin'], describe: 'list API keys' },
  'keys.write': { roles: ['admin'], describe: 'create or revoke API keys' },
  'queues.read': { roles: ['admin'], describe: 'view the job queues (operator tenant only)' },
} as const satisfies Record<string, { roles: readonly Role[]; describe: string }>;

/** An operation a route performs. */
export type Operation = keyof typeof PERMISSIONS;

/** Who is calling: resolved from an API key (or, later, a JWT). */
export interface Principal {
  tenantId: string;
  role: Role;
  keyId: string;
}

// Operations on other tenants (the queues hold every tenant's jobs): only admins of the operator
// tenant (the gateway's owner) may perform them.
const OPERATOR_OPERATIONS: ReadonlySet<Operation> = new Set(['tenants.operate', 'tenants.read', 'tenants.write', 'queues.read']);

/** Throws PermissionDeniedError unless the principal's role (and, for operator operations, its tenant) may perform the operation. */
export function authorize(principal: Principal, operation: Operation, operatorTenant: string): void {
  const rule = PERMISSIONS[operation];
  if (!(rule.roles as readonly Role[]).includes(principal.role)) throw new PermissionDeniedError(principal.role, rule.describe);
  if (OPERATOR_OPERATIONS.has(operation) && principal.tenantId !== operatorTenant) throw new PermissionDeniedError(`${principal.role} of tenant '${principal.tenantId}'`, rule.describe);
}

/**
 * The tenant an operation acts on: the principal's own, or the one it names, which only the
 * operator tenant's principals may name (others get 403 whether that tenant exists or not).
 */
export function targetTenant(principal: Principal, named: string | undefined, operatorTenant: string, operation: Operation): string {
  if (named === undefined || named === principal.tenantId) return principal.tenantId;
  if (principal.tenantId !== operatorTenant) throw new PermissionDeniedError(`${principal.role} of tenant '${principal.tenantId}'`, `${PERMISSIONS[operation].describe} of another tenant`);
  return named;
}
