/** The `gateway` CLI's commands, each a small function over a Repository and two output lines sinks. */
import { generateApiKey } from '../domain/access/api-key-secret.ts';
import { ROLES, TenantNotFoundError, type ApiKeyRecord, type Repository, type Role } from '../infra/store/repository.ts';
import { keyLimitsJson, keyLimitsOf, sentKeyLimits, type KeyLimitsInput } from '../domain/access/key-admin.ts';
import { auditEvent } from '../domain/audit/audit-event.ts';
import type { CliContext } from './cli-context.ts';
import { MAX_STORED_INTEGER } from '../infra/store/limits.ts';
import { TENANT_ID_PATTERN } from '../domain/tenants/tenant-id.ts';

/** Bad usage: the CLI prints the message and the usage text, and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Where commands write: `out` is stdout (what scripts capture), `err` is stderr (for people). */
export interface CliOutput {
  out(line: string): void;
  err(line: string): void;
}

/** Checks a tenant id against TENANT_ID_PATTERN; throws UsageError otherwise. */
export function assertTenantId(id: string): void {
  if (!TENANT_ID_PATTERN.test(id)) {
    throw new UsageError(`Invalid tenant id '${id}': use 1-63 characters of a-z, 0-9, '_' and '-', starting with a letter or digit.`);
  }
}

/** Parses a role name; throws UsageError for anything but the four roles. */
export function parseRole(value: string): Role {
  const role = ROLES.find((candidate) => candidate === value);
  if (!role) throw new UsageError(`Invalid role '${value}': use one of ${ROLES.join(', ')}.`);
  return role;
}

/** `tenants create`: stores the tenant, audits it, and prints its id. */
export async function createTenantCommand(ctx: CliContext, id: string, name: string | undefined, io: CliOutput): Promise<void> {
  assertTenantId(id);
  const tenant = await ctx.repo.tenants.create({ id, name: name ?? id });
  await ctx.audit(auditEvent({ tenantId: tenant.id, actor: 'cli', action: 'tenant.created', target: `tenant:${tenant.id}`, outcome: 'success' }));
  io.out(tenant.id);
}

/** Parses `--expires-at`: an ISO 8601 date and time in the future; throws UsageError otherwise. */
export function parseExpiresAt(value: string, now = Date.now()): Date {
  const expiresAt = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(expiresAt.getTime()))
    throw new UsageError(`Invalid --expires-at '${value}': use an ISO 8601 date and time, e.g. 2030-01-31T00:00:00Z.`);
  if (expiresAt.getTime() <= now) throw new UsageError(`Invalid --expires-at '${value}': it must lie in the future.`);
  return expiresAt;
}

/**
 * Parses `--rpm`, `--tpm` and `--max-concurrent` of `keys create` and `keys update`: a whole number from 1, or
 * `none` (update only) to clear it back to the plan's; UsageError otherwise.
 */
export function parseKeyLimits(values: Partial<Record<'rpm' | 'tpm' | 'max-concurrent', string>>, clearable: boolean): KeyLimitsInput {
  const parse = (name: 'rpm' | 'tpm' | 'max-concurrent') => {
    const value = values[name];
    if (value === undefined) return undefined;
    if (clearable && value === 'none') return null;
    const count = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(count) || count < 1 || count > MAX_STORED_INTEGER)
      throw new UsageError(`--${name} must be a whole number from 1 to ${MAX_STORED_INTEGER}${clearable ? " or 'none'" : ''}; got '${value}'.`);
    return count;
  };
  const input: KeyLimitsInput = {};
  const [rpm, tpm, maxConcurrent] = [parse('rpm'), parse('tpm'), parse('max-concurrent')];
  if (rpm !== undefined) input.rpm = rpm;
  if (tpm !== undefined) input.tpm = tpm;
  if (maxConcurrent !== undefined) input.max_concurrent = maxConcurrent;
  return input;
}

/** What `keys create` stores besides the tenant and role. */
export interface KeyOptions {
  name: string | null;
  expiresAt: Date | null;
  limits: KeyLimitsInput;
}

/** `keys create`: prints the new secret alone on stdout (shown once), and the key id on stderr. */
export async function createKeyCommand(ctx: CliContext, tenantId: string, role: Role, options: KeyOptions, io: CliOutput): Promise<void> {
  const key = generateApiKey();
  await ctx.repo.apiKeys.create({
    id: key.id,
    tenantId,
    role,
    secretHash: key.secretHash,
    name: options.name,
    expiresAt: options.expiresAt,
    limits: keyLimitsOf(options.limits),
  });
  await ctx.audit(
    auditEvent({
      tenantId,
      actor: 'cli',
      action: 'key.created',
      target: key.id,
      outcome: 'success',
      details: { role, name: options.name, expires_at: options.expiresAt?.toISOString() ?? null, ...sentKeyLimits(options.limits) },
    }),
  );
  io.out(key.secret);
  io.err(`created key ${key.id} for tenant ${tenantId} (role ${role})`);
}

/** `keys revoke`: marks the key revoked, and every web process refuses it at once where Redis is configured; an unknown key id is an error. */
export async function revokeKeyCommand(ctx: CliContext, keyId: string, io: CliOutput): Promise<void> {
  const revoked = await ctx.repo.apiKeys.revoke(keyId);
  if (!revoked) throw new Error(`Key '${keyId}' does not exist.`);
  await ctx.invalidateAuth(revoked.tenantId, io.err);
  await ctx.audit(auditEvent({ tenantId: revoked.tenantId, actor: 'cli', action: 'key.revoked', target: keyId, outcome: 'success' }));
  io.err(`revoked key ${keyId}`);
}

/**
 * `keys update`: sets the key's own limits sent (null clears one back to the plan's), audited as the
 * API audits it, and every web process reads the key again at once where Redis is configured.
 */
export async function updateKeyLimitsCommand(ctx: CliContext, keyId: string, input: KeyLimitsInput, io: CliOutput): Promise<void> {
  const updated = await ctx.repo.apiKeys.setLimits(keyId, keyLimitsOf(input));
  if (!updated) throw new Error(`Key '${keyId}' does not exist.`);
  await ctx.invalidateAuth(updated.tenantId, io.err);
  await ctx.audit(
    auditEvent({ tenantId: updated.tenantId, actor: 'cli', action: 'key.updated', target: keyId, outcome: 'success', details: sentKeyLimits(input) }),
  );
  const { rpm, tpm, max_concurrent } = keyLimitsJson(updated.limits);
  io.err(`updated key ${keyId}: rpm ${rpm ?? '-'}, tpm ${tpm ?? '-'}, max_concurrent ${max_concurrent ?? '-'}`);
}

/** The key list as an aligned table: id, role, created, revoked, expires, its own limits, name (never the secret or its hash). */
export function formatKeyTable(keys: readonly ApiKeyRecord[]): string[] {
  const limit = (value: number | null) => (value === null ? '-' : String(value));
  const rows = [
    ['ID', 'ROLE', 'CREATED', 'REVOKED', 'EXPIRES', 'RPM', 'TPM', 'CONCURRENT', 'NAME'],
    ...keys.map((key) => [
      key.id,
      key.role,
      key.createdAt.toISOString(),
      key.revokedAt?.toISOString() ?? '-',
      key.expiresAt?.toISOString() ?? '-',
      limit(key.limits.requestsPerMinute),
      limit(key.limits.tokensPerMinute),
      limit(key.limits.maxConcurrent),
      key.name ?? '-',
    ]),
  ];
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}

/** `keys list`: prints the tenant's keys, oldest first. */
export async function listKeysCommand(repo: Repository, tenantId: string, io: CliOutput): Promise<void> {
  if (!(await repo.tenants.get(tenantId))) throw new TenantNotFoundError(tenantId);
  for (const line of formatKeyTable(await repo.apiKeys.listByTenant(tenantId))) io.out(line);
}

/** `migrate`: creates or updates the store's schema and indexes. */
export async function migrateCommand(repo: Repository, io: CliOutput): Promise<void> {
  await repo.migrate();
  io.err(`${repo.kind} store migrated`);
}
