/**
 * Every permission a route may name, with its rule: the role matrix of DESIGN.md, made of the
 * routes' own permissions (src/domain/access/roles.ts) and each operation's (src/operations/).
 */
import { OPERATOR_PERMISSIONS, ROUTE_PERMISSIONS, type PermissionRule, type Principal, type RoutePermission } from '../../domain/access/roles.ts';
import { PermissionDeniedError } from '../../errors/gateway-error.ts';
import { OPERATIONS } from '../../operations/index.ts';
import type { Operations } from '../../operations/operation.ts';

/** A right a route requires of its caller's role: `models.read`, `chat.create`… */
export type Permission = RoutePermission | (typeof OPERATIONS)[number]['permission']['name'];

/** Rules by permission. */
export type PermissionTable = Readonly<Record<string, PermissionRule>>;

/** The permissions of the routes and of `operations`. */
export function permissionsOf(operations: Operations): PermissionTable {
  return { ...ROUTE_PERMISSIONS, ...Object.fromEntries(operations.map(({ permission }) => [permission.name, permission])) };
}

/** The permissions of the gateway's routes and operations. */
export const PERMISSIONS = permissionsOf(OPERATIONS) as Readonly<Record<Permission, PermissionRule>>;

/** Throws PermissionDeniedError unless the principal's role (and, for operator permissions, its tenant) holds `permission`. */
export function authorize(principal: Principal, permission: string, operatorTenant: string, permissions: PermissionTable = PERMISSIONS): void {
  const rule = permissions[permission];
  if (!rule) throw new Error(`the permission '${permission}' has no rule`);
  if (!rule.roles.includes(principal.role)) throw new PermissionDeniedError(principal.role, rule.describe);
  if (!operatorHolds(principal, permission, operatorTenant))
    throw new PermissionDeniedError(`${principal.role} of tenant '${principal.tenantId}'`, rule.describe);
}

/** False for an operator permission asked by a principal of another tenant than the operator's. */
function operatorHolds(principal: Principal, permission: string, operatorTenant: string): boolean {
  return !OPERATOR_PERMISSIONS.has(permission) || principal.tenantId === operatorTenant;
}

/** Every permission of `permissions` that `authorize` would let the principal through, sorted. */
export function heldPermissions(principal: Principal, operatorTenant: string, permissions: PermissionTable = PERMISSIONS): string[] {
  return Object.entries(permissions)
    .filter(([permission, rule]) => rule.roles.includes(principal.role) && operatorHolds(principal, permission, operatorTenant))
    .map(([permission]) => permission)
    .sort();
}
