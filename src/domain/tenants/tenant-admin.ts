import { Type, type Static } from '@sinclair/typebox';
import { TenantExistsError, type Repository, type Tenant } from '../../infra/store/repository.ts';
import { auditEvent, type AuditSink } from '../audit/audit-event.ts';
import type { Actor } from '../prompts/prompt-admin.ts';
import { AlreadyExistsError, InvalidValueError, MissingRequiredFieldError, ResourceNotFoundError } from '../../errors/gateway-error.ts';
import { TenantIdSchema } from './tenant-id.ts';

const TenantNameSchema = Type.String({ minLength: 1, maxLength: 200 });

/** A new tenant as sent; the name defaults to the id, as in the CLI. */
export const TenantInputSchema = Type.Object({ id: TenantIdSchema, name: Type.Optional(TenantNameSchema) }, { additionalProperties: false });

/** A change of a tenant as sent: at least one of the two fields. */
export const TenantUpdateSchema = Type.Object(
  { name: Type.Optional(TenantNameSchema), disabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

/** What tenant administration needs; `invalidate` makes every web process forget the tenant's cached status and keys. */
export interface TenantAdminDeps {
  repository: Repository;
  audit: AuditSink;
  invalidate(tenantId: string): Promise<void>;
  /** The tenant whose admins administer the others; it cannot be disabled. */
  operatorTenant: string;
}

/** Creates an enabled tenant, audited in its own log; 409 when the id is taken. */
export async function createTenant(deps: TenantAdminDeps, input: Static<typeof TenantInputSchema>, by: Actor): Promise<Tenant> {
  let tenant: Tenant;
  try {
    tenant = await deps.repository.tenants.create({ id: input.id, name: input.name ?? input.id });
  } catch (error) {
    if (error instanceof TenantExistsError) throw new AlreadyExistsError(`Tenant '${input.id}'`, 'id');
    throw error;
  }
  await deps.audit(
    auditEvent({
      tenantId: tenant.id,
      actor: by.actor,
      action: 'tenant.created',
      target: `tenant:${tenant.id}`,
      outcome: 'success',
      requestId: by.requestId,
      details: { name: tenant.name },
    }),
  );
  return tenant;
}

/**
 * Renames, disables or enables a tenant, audited in its own log. Disabling refuses the tenant's
 * keys and JWTs on every web process at once; the operator tenant cannot be disabled, since
 * nobody could enable it again over the API.
 */
export async function updateTenant(deps: TenantAdminDeps, tenantId: string, input: Static<typeof TenantUpdateSchema>, by: Actor): Promise<Tenant> {
  if (input.disabled === undefined && input.name === undefined)
    throw new MissingRequiredFieldError('disabled', "Send 'disabled' (true or false), 'name', or both.");
  if (input.disabled === true && tenantId === deps.operatorTenant)
    throw new InvalidValueError('disabled', `The operator tenant '${tenantId}' cannot be disabled.`);
  const tenant = await deps.repository.tenants.update(tenantId, input);
  if (!tenant) throw new ResourceNotFoundError(`Tenant '${tenantId}'`);
  // Announced before the audit write, so that a failing audit cannot hold back the refusal.
  if (input.disabled !== undefined) await deps.invalidate(tenantId);
  await deps.audit(
    auditEvent({
      tenantId,
      actor: by.actor,
      action: 'tenant.updated',
      target: `tenant:${tenantId}`,
      outcome: 'success',
      requestId: by.requestId,
      details: { ...input },
    }),
  );
  return tenant;
}

/** A tenant on the wire. */
export function tenantJson(tenant: Tenant) {
  return { object: 'tenant', id: tenant.id, name: tenant.name, disabled: tenant.disabled, created_at: tenant.createdAt.toISOString() };
}
