/** The `gateway` CLI's commands, each a small function over a Repository and two output lines sinks. */
import { generateApiKey } from '../auth/api-key-secret.ts';
import { ROLES, TenantNotFoundError, type ApiKeyRecord, type Repository, type Role } from '../store/repository.ts';

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

/** Allowed tenant ids: they appear in URLs, Redis keys and logs, so they stay short and plain. */
export const TENANT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** Checks a tenant id against TENANT_ID_PATTERN; throws UsageError otherwise. */
export function assertTenantId(id: string): void {
  if (!TENANT_ID_PATTERN.test(id)) {
    throw new UsageError(
      `Invalid tenant id '${id}': use 1-63 characters of a-z, 0-9, '_' and '-', starting with a letter or digit.`,
    );
  }
}

/** Parses a role name; throws UsageError for anything but the four roles. */
export function parseRole(value: string): Role {
  const role = ROLES.find((candidate) => candidate === value);
  if (!role) throw new UsageError(`Invalid role '${value}': use one of ${ROLES.join(', ')}.`);
  return role;
}

/** `tenants create`: stores the tenant and prints its id. */
export async function createTenantCommand(repo: Repository, id: string, name: string | undefined, io: CliOutput): Promise<void> {
  assertTenantId(id);
  const tenant = await repo.tenants.create({ id, name: name ?? id });
  io.out(tenant.id);
}

/** `keys create`: prints the new secret alone on stdout (shown once), and the key id on stderr. */
export async function createKeyCommand(repo: Repository, tenantId: string, role: Role, io: CliOutput): Promise<void> {
  const key = generateApiKey();
  await repo.apiKeys.create({ id: key.id, tenantId, role, secretHash: key.secretHash });
  io.out(key.secret);
  io.err(`created key ${key.id} for tenant ${tenantId} (role ${role})`);
}

/** `keys revoke`: marks the key revoked; an unknown key id is an error. */
export async function revokeKeyCommand(repo: Repository, keyId: string, io: CliOutput): Promise<void> {
  if (!(await repo.apiKeys.revoke(keyId))) throw new Error(`Key '${keyId}' does not exist.`);
  io.err(`revoked key ${keyId}`);
}

/** The key list as an aligned table: id, role, created, revoked (never the secret or its hash). */
export function formatKeyTable(keys: readonly ApiKeyRecord[]): string[] {
  const rows = [
    ['ID', 'ROLE', 'CREATED', 'REVOKED'],
    ...keys.map((key) => [key.id, key.role, key.createdAt.toISOString(), key.revokedAt?.toISOString() ?? '-']),
  ];
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd());
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
