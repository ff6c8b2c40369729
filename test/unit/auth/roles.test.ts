import { describe, expect, it } from 'vitest';
import { authorize, PERMISSIONS, type Operation, type Principal } from '../../../src/auth/roles.ts';
import { PermissionDeniedError } from '../../../src/errors/gateway-error.ts';
import { ROLES, type Role } from '../../../src/store/repository.ts';

/** The role matrix of DESIGN.md, written out: what each role may do. */
const INFERENCE: Operation[] = ['chat.create', 'embeddings.create', 'messages.create', 'responses.create', 'models.read'];
const EXPECTED: Record<Role, Operation[]> = {
  admin: [...INFERENCE, 'prompts.read', 'usage.read', 'budgets.read', 'audit.read', 'audit.verify', 'prompts.write', 'budgets.write', 'policies.write', 'tenants.operate'],
  developer: [...INFERENCE, 'prompts.read', 'usage.read', 'budgets.read'],
  app: INFERENCE,
  auditor: ['usage.read', 'budgets.read', 'audit.read', 'audit.verify'],
};

const OPERATIONS: Operation[] = [...INFERENCE, 'prompts.read', 'usage.read', 'budgets.read', 'audit.read', 'audit.verify', 'prompts.write', 'budgets.write', 'policies.write', 'tenants.operate'];
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
    const actual = Object.fromEntries(
      ROLES.map((role) => [role, OPERATIONS.filter((op) => (PERMISSIONS[op].roles as readonly Role[]).includes(role))]),
    );
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
  it('an admin of another tenant may not operate on tenants', () => {
    expect(() => authorize(principal('admin', 'acme'), 'tenants.operate', OPERATOR)).toThrow(PermissionDeniedError);
    expect(() => authorize(principal('admin', 'acme'), 'budgets.write', OPERATOR)).not.toThrow();
  });
});
