/** The Repository over PostgreSQL (`pg.Pool`), for hosts that ship PostgreSQL as their database. */
import { Pool } from 'pg';
import {
  TenantExistsError,
  TenantNotFoundError,
  type ApiKeyRecord,
  type ApiKeyRepository,
  type Repository,
  type Role,
  type Tenant,
  type TenantRepository,
} from '../repository.ts';
import { createAuditRepository } from './audit.ts';
import { createBudgetRepository } from './budgets.ts';
import { createPolicyRepository } from './policies.ts';
import { runMigrations } from './migrations.ts';
import { createPromptRepository } from './prompts.ts';
import { createUsageRepository } from './usage.ts';

interface TenantRow {
  id: string;
  name: string;
  created_at: Date;
}

interface ApiKeyRow {
  id: string;
  tenant_id: string;
  role: string;
  secret_hash: string;
  created_at: Date;
  revoked_at: Date | null;
}

const API_KEY_COLUMNS = 'id, tenant_id, role, secret_hash, created_at, revoked_at';

// SQLSTATE codes, PostgreSQL manual appendix A.
const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';

function sqlState(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

function toTenant(row: TenantRow): Tenant {
  return { id: row.id, name: row.name, createdAt: row.created_at };
}

function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    // The column's CHECK constraint admits only the four roles.
    role: row.role as Role,
    secretHash: row.secret_hash,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

function createTenantRepository(pool: Pool): TenantRepository {
  return {
    async create({ id, name }) {
      try {
        const result = await pool.query<TenantRow>(
          'INSERT INTO tenants (id, name) VALUES ($1, $2) RETURNING id, name, created_at',
          [id, name],
        );
        return toTenant(result.rows[0] as TenantRow);
      } catch (error) {
        if (sqlState(error) === UNIQUE_VIOLATION) throw new TenantExistsError(id);
        throw error;
      }
    },
    async get(id) {
      const result = await pool.query<TenantRow>('SELECT id, name, created_at FROM tenants WHERE id = $1', [id]);
      const row = result.rows[0];
      return row ? toTenant(row) : null;
    },
  };
}

function createApiKeyRepository(pool: Pool): ApiKeyRepository {
  return {
    async create({ id, tenantId, role, secretHash }) {
      try {
        const result = await pool.query<ApiKeyRow>(
          `INSERT INTO api_keys (id, tenant_id, role, secret_hash) VALUES ($1, $2, $3, $4) RETURNING ${API_KEY_COLUMNS}`,
          [id, tenantId, role, secretHash],
        );
        return toApiKey(result.rows[0] as ApiKeyRow);
      } catch (error) {
        if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw new TenantNotFoundError(tenantId);
        throw error;
      }
    },
    async findByHash(secretHash) {
      const result = await pool.query<ApiKeyRow>(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE secret_hash = $1`, [
        secretHash,
      ]);
      const row = result.rows[0];
      return row ? toApiKey(row) : null;
    },
    async revoke(id) {
      const result = await pool.query<ApiKeyRow>(
        `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING ${API_KEY_COLUMNS}`,
        [id],
      );
      const row = result.rows[0];
      return row ? toApiKey(row) : null;
    },
    async listByTenant(tenantId) {
      const result = await pool.query<ApiKeyRow>(
        `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE tenant_id = $1 ORDER BY created_at, id`,
        [tenantId],
      );
      return result.rows.map(toApiKey);
    },
  };
}

/** A Repository on a small pool that fails fast (5 s) when PostgreSQL is unreachable. */
export function createPostgresRepository(databaseUrl: string): Repository {
  const pool = new Pool({ connectionString: databaseUrl, max: 10, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000 });
  // An idle client that loses its server emits here; the pool already discards it, and the next
  // query reports the outage. Without a listener the event would crash the process.
  pool.on('error', () => undefined);
  let closing: Promise<void> | null = null;
  return {
    kind: 'postgres',
    tenants: createTenantRepository(pool),
    apiKeys: createApiKeyRepository(pool),
    prompts: createPromptRepository(pool),
    usage: createUsageRepository(pool),
    audit: createAuditRepository(pool),
    budgets: createBudgetRepository(pool),
    policies: createPolicyRepository(pool),
    migrate: () => runMigrations(pool),
    async ping() {
      await pool.query('SELECT 1');
    },
    close() {
      closing ??= pool.end();
      return closing;
    },
  };
}
