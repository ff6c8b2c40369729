import { Type, type Static } from '@sinclair/typebox';
import { ROLES, TenantNotFoundError, type ApiKeyLimits, type ApiKeyRecord, type Repository } from '../../infra/store/repository.ts';
import { MAX_STORED_INTEGER } from '../../infra/store/limits.ts';
import { auditEvent, type AuditSink } from '../audit/audit-event.ts';
import type { Actor } from '../prompts/prompt-admin.ts';
import { InvalidValueError, MissingRequiredFieldError, ResourceNotFoundError } from '../../errors/gateway-error.ts';
import { TenantIdSchema } from '../tenants/tenant-id.ts';
import { generateApiKey } from './api-key-secret.ts';

const KeyLimit = Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: MAX_STORED_INTEGER }), Type.Null()]));

/** A key's own limits as sent: absent leaves one as it is, null clears it back to the plan's (or the default). */
const KEY_LIMIT_FIELDS = { rpm: KeyLimit, tpm: KeyLimit, max_concurrent: KeyLimit };

/** A new API key as sent; `tenant` (another tenant's) only for the operator tenant's admins. */
export const KeyInputSchema = Type.Object(
  {
    role: Type.Union(ROLES.map((role) => Type.Literal(role))),
    name: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
    expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
    ...KEY_LIMIT_FIELDS,
    tenant: Type.Optional(TenantIdSchema),
  },
  { additionalProperties: false },
);

/** A change of a key's limits as sent: at least one of them. */
export const KeyLimitsUpdateSchema = Type.Object(KEY_LIMIT_FIELDS, { additionalProperties: false });

/** A key's own limits as sent (the API's body, the CLI's flags). */
export type KeyLimitsInput = Static<typeof KeyLimitsUpdateSchema>;

/** The limits a body sets, in the store's terms; those it leaves out stay absent. */
export function keyLimitsOf(input: KeyLimitsInput): Partial<ApiKeyLimits> {
  const limits: Partial<ApiKeyLimits> = {};
  if (input.rpm !== undefined) limits.requestsPerMinute = input.rpm;
  if (input.tpm !== undefined) limits.tokensPerMinute = input.tpm;
  if (input.max_concurrent !== undefined) limits.maxConcurrent = input.max_concurrent;
  return limits;
}

/** The limits a body sent, and only those, as the wire names them: what an audit event records. */
export function sentKeyLimits(input: KeyLimitsInput): KeyLimitsInput {
  return Object.fromEntries(
    Object.entries({ rpm: input.rpm, tpm: input.tpm, max_concurrent: input.max_concurrent }).filter(([, value]) => value !== undefined),
  );
}

/** The limits of a key as the wire names them (null: not set). */
export function keyLimitsJson(limits: ApiKeyLimits) {
  return { rpm: limits.requestsPerMinute, tpm: limits.tokensPerMinute, max_concurrent: limits.maxConcurrent };
}

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
      limits: keyLimitsOf(input),
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
      details: { role: key.role, name: key.name, expires_at: key.expiresAt?.toISOString() ?? null, ...sentKeyLimits(input) },
    }),
  );
  return { key, secret: generated.secret };
}

/** A key as listed: with when it was last used, as its newest usage record says. */
export type ListedKey = ApiKeyRecord & { lastUsedAt: Date | null };

/**
 * The tenant's keys, oldest first, each with its last use; 404 when the store knows no such tenant.
 * The last use is read from the usage records rather than written at each request, so it costs a
 * request nothing and trails it by the outbox's drain (seconds).
 */
export async function listKeys(deps: KeyAdminDeps, tenantId: string): Promise<ListedKey[]> {
  const keys = await deps.repository.apiKeys.listByTenant(tenantId);
  if (keys.length === 0 && !(await deps.repository.tenants.get(tenantId))) throw new ResourceNotFoundError(`Tenant '${tenantId}'`);
  const lastUsed = await deps.repository.usage.lastUsed(
    tenantId,
    keys.map((key) => key.id),
  );
  return keys.map((key) => ({ ...key, lastUsedAt: lastUsed.get(key.id) ?? null }));
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

/**
 * Changes a key's own limits, audited (`key.updated`, the fields sent), and makes every web process
 * read the key again at once, so that the change holds from the next request. Another tenant's key
 * is 404, as if it did not exist. Announced before the audit write, as a revocation is.
 */
export async function updateKeyLimits(deps: KeyAdminDeps, tenantId: string, keyId: string, input: KeyLimitsInput, by: Actor): Promise<ApiKeyRecord> {
  if (input.rpm === undefined && input.tpm === undefined && input.max_concurrent === undefined)
    throw new MissingRequiredFieldError('rpm', "Send 'rpm', 'tpm' or 'max_concurrent' (a positive integer, or null to clear it).");
  if (!(await deps.repository.apiKeys.get(tenantId, keyId))) throw new ResourceNotFoundError(`API key '${keyId}'`);
  const key = await deps.repository.apiKeys.setLimits(keyId, keyLimitsOf(input));
  if (!key) throw new ResourceNotFoundError(`API key '${keyId}'`);
  await deps.invalidate(tenantId);
  await deps.audit(
    auditEvent({ tenantId, actor: by.actor, action: 'key.updated', target: keyId, outcome: 'success', requestId: by.requestId, details: sentKeyLimits(input) }),
  );
  return key;
}

/** A listed key on the wire. */
export function listedKeyJson(key: ListedKey) {
  return { ...keyJson(key), last_used_at: key.lastUsedAt?.toISOString() ?? null };
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
    ...keyLimitsJson(key.limits),
  };
}
