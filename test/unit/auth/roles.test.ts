import { describe, expect, it } from 'vitest';
import { targetTenant, type Principal } from '../../../src/domain/access/roles.ts';
import { authorize, heldPermissions, PERMISSIONS, type Permission } from '../../../src/web/auth/permissions.ts';
import { PermissionDeniedError } from '../../../src/errors/gateway-error.ts';
import { ROLES, type Role } from '../../../src/infra/store/repository.ts';

/** The role matrix of DESIGN.md, written out: what each role may do. */
const INFERENCE: Permission[] = [
  'chat.create',
  'embeddings.create',
  'messages.create',
  'responses.create',
  'models.read',
  'files.read',
  'files.write',
  'batches.read',
  'batches.write',
];
const EXPECTED: Record<Role, Permission[]> = {
  admin: [
    ...INFERENCE,
    'prompts.read',
    'usage.read',
    'budgets.read',
    'audit.read',
    'audit.verify',
    'prompts.write',
    'budgets.write',
    'policies.write',
    'tenants.operate',
    'tenants.read',
    'tenants.write',
    'keys.read',
    'keys.write',
    'queues.read',
    'catalog.read',
    'webhooks.manage',
    'session.read',
  ],
  developer: [...INFERENCE, 'prompts.read', 'usage.read', 'budgets.read', 'session.read'],
  app: [...INFERENCE, 'session.read'],
  auditor: ['usage.read', 'budgets.read', 'audit.read', 'audit.verify', 'session.read'],
};

const OPERATIONS: Permission[] = [
  ...INFERENCE,
  'prompts.read',
  'usage.read',
  'budgets.read',
  'audit.read',
  'audit.verify',
  'prompts.write',
  'budgets.write',
  'policies.write',
  'tenants.operate',
  'tenants.read',
  'tenants.write',
  'keys.read',
  'keys.write',
  'queues.read',
  'catalog.read',
  'webhooks.manage',
  'session.read',
];
const OPERATOR = 'operator';

function principal(role: Role, tenantId = OPERATOR): Principal {
  return { tenantId, role, keyId: `key_${role}` };
}

describe('PERMISSIONS', () => {
  it('covers exactly the known operations and roles', () => {
    expect(Object.keys(PERMISSIONS).sort()).toEqual([...OPERATIONS].sort());
    expect([...ROLES].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it('is the written-out matrix', () => {
    const actual = Object.fromEntries(ROLES.map((role) => [role, OPERATIONS.filter((op) => PERMISSIONS[op].roles.includes(role))]));
    expect(actual).toEqual(EXPECTED);
  });
});

describe('authorize', () => {
  const cells = ROLES.flatMap((role) => OPERATIONS.map((operation) => [role, operation, EXPECTED[role].includes(operation)] as const));

  it.each(cells)('%s × %s → allowed: %s', (role, operation, allowed) => {
    const run = () => authorize(principal(role), operation, OPERATOR);
    if (allowed) {
      expect(run).not.toThrow();
      return;
    }
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(PermissionDeniedError);
      const denied = error as PermissionDeniedError;
      expect([denied.status, denied.type, denied.code, denied.param]).toEqual([403, 'invalid_request_error', 'permission_denied', null]);
      expect(denied.message).toBe(`The role '${role}' may not ${PERMISSIONS[operation].describe}.`);
      return;
    }
    throw new Error(`${role} was allowed to ${operation}`);
  });
});

describe('operator operations', () => {
  it.each(['tenants.operate', 'tenants.read', 'tenants.write', 'queues.read', 'catalog.read'] as const)(
    'an admin of another tenant may not %s',
    (operation) => {
      expect(() => authorize(principal('admin', 'acme'), operation, OPERATOR)).toThrow(PermissionDeniedError);
      expect(() => authorize(principal('admin'), operation, OPERATOR)).not.toThrow();
    },
  );

  it("any tenant's admin manages its own keys and budgets", () => {
    for (const operation of ['budgets.write', 'keys.read', 'keys.write'] as const)
      expect(() => authorize(principal('admin', 'acme'), operation, OPERATOR)).not.toThrow();
  });
});

describe('heldPermissions', () => {
  const cases = ROLES.flatMap((role) => ['acme', OPERATOR].map((tenant) => [role, tenant] as const));

  it.each(cases)('%s of %s: exactly what authorize lets through, sorted', (role, tenant) => {
    const allowed = OPERATIONS.filter((operation) => {
      try {
        authorize(principal(role, tenant), operation, OPERATOR);
        return true;
      } catch {
        return false;
      }
    });
    expect(heldPermissions(principal(role, tenant), OPERATOR)).toEqual([...allowed].sort());
  });

  it("gives the operator permissions to the operator tenant's admins alone", () => {
    expect(heldPermissions(principal('admin', 'acme'), OPERATOR)).not.toContain('catalog.read');
    expect(heldPermissions(principal('admin'), OPERATOR)).toContain('catalog.read');
  });
});

describe('targetTenant', () => {
  it("is the principal's own tenant unless another is named", () => {
    expect(targetTenant(principal('admin', 'acme'), undefined, OPERATOR, 'keys.write')).toBe('acme');
    expect(targetTenant(principal('admin', 'acme'), 'acme', OPERATOR, 'keys.write')).toBe('acme');
  });

  it("lets only the operator tenant's principals name another tenant", () => {
    expect(targetTenant(principal('admin'), 'acme', OPERATOR, 'keys.read')).toBe('acme');
    expect(() => targetTenant(principal('admin', 'acme'), 'globex', OPERATOR, 'keys.read')).toThrow(PermissionDeniedError);
    expect(() => targetTenant(principal('admin', 'acme'), 'globex', OPERATOR, 'keys.read')).toThrow("tenant 'acme'");
  });
});
