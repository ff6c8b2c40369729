import { Type, type Static } from '@sinclair/typebox';
import { ROLES, TenantNotFoundError, type ApiKeyRecord, type Repository } from '../../infra/store/repository.ts';
import { auditEvent, type AuditSink } from '../audit/audit-event.ts';
import type { Actor } from '../prompts/prompt-admin.ts';
import { InvalidValueError, ResourceNotFoundError } from '../../errors/gateway-error.ts';
import { TenantIdSchema } from '../tenants/tenant-id.ts';
import { generateApiKey } from './api-key-secret.ts';

/** A new API key as sent; `tenant` (another tenant's) only for the operator tenant's admins. */
export const KeyInputSchema = Type.Object(
  {
    role: Type.Union(ROLES.map((role) => Type.Literal(role))),
    name: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
    expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
    tenant: Type.Optional(TenantIdSchema),
  },
  { additionalProperties: false },
);

/** What key administration needs; `invalidate` makes every web process forget the tenant's cached keys. */
export interface KeyAdminDeps {
  repository: Repository;
  audit: AuditSink;
  invalidate(tenantId: string): Promise<void>;
}

/** A created key and its secret, which is shown this once and stored only as its hash. */
export interface CreatedKey {
  key: ApiKeyRecord;
  secret: string;
}

/** Issues a key of the tenant, audited; `expires_at` must lie in the future. */
export async function createKey(deps: KeyAdminDeps, tenantId: string, input: Static<typeof KeyInputSchema>, by: Actor): Promise<CreatedKey> {
  const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
  if (expiresAt && expiresAt.getTime() <= Date.now())
    throw new InvalidValueError('expires_at', `'expires_at' must lie in the future; ${input.expires_at} has passed.`);
  const generated = generateApiKey();
  let key: ApiKeyRecord;
  try {
    key = await deps.repository.apiKeys.create({
      id: generated.id,
      tenantId,
      role: input.role,
      secretHash: generated.secretHash,
      name: input.name ?? null,
      expiresAt,
    });
  } catch (error) {
    if (error instanceof TenantNotFoundError) throw new ResourceNotFoundError(`Tenant '${tenantId}'`);
    throw error;
  }
  await deps.audit(
    auditEvent({
      tenantId,
      actor: by.actor,
      action: 'key.created',
      target: key.id,
      outcome: 'success',
      requestId: by.requestId,
      details: { role: key.role, name: key.name, expires_at: key.expiresAt?.toISOString() ?? null },
    }),
  );
  return { key, secret: generated.secret };
}

/** The tenant's keys, oldest first; 404 when the store knows no such tenant. */
export async function listKeys(deps: KeyAdminDeps, tenantId: string): Promise<ApiKeyRecord[]> {
  const keys = await deps.repository.apiKeys.listByTenant(tenantId);
  if (keys.length === 0 && !(await deps.repository.tenants.get(tenantId))) throw new ResourceNotFoundError(`Tenant '${tenantId}'`);
  return keys;
}

/**
 * Revokes a key of the tenant, audited, and makes every web process refuse it at once. Another
 * tenant's key is 404, as if it did not exist. Revoking a revoked key changes nothing and is not
 * audited again, but is announced again: a retry after a failed announcement must repair it, and
 * the announcement comes before the audit so that a failing audit write cannot hold it back.
 */
export async function revokeKey(deps: KeyAdminDeps, tenantId: string, keyId: string, by: Actor): Promise<ApiKeyRecord> {
  const key = await deps.repository.apiKeys.get(tenantId, keyId);
  if (!key) throw new ResourceNotFoundError(`API key '${keyId}'`);
  if (key.revokedAt) {
    await deps.invalidate(tenantId);
    return key;
  }
  const revoked = (await deps.repository.apiKeys.revoke(keyId)) ?? key;
  await deps.invalidate(tenantId);
  await deps.audit(auditEvent({ tenantId, actor: by.actor, action: 'key.revoked', target: keyId, outcome: 'success', requestId: by.requestId }));
  return revoked;
}

/** A key on the wire: never its secret or hash. */
export function keyJson(key: ApiKeyRecord) {
  return {
    object: 'api_key',
    id: key.id,
    tenant: key.tenantId,
    role: key.role,
    name: key.name,
    created_at: key.createdAt.toISOString(),
    expires_at: key.expiresAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}
