/** Tenants and API keys in PostgreSQL. */
import type { Pool } from 'pg';
import {
  TenantExistsError,
  TenantNotFoundError,
  type ApiKeyLimits,
  type ApiKeyRecord,
  type ApiKeyRepository,
  type Role,
  type Tenant,
  type TenantRepository,
} from '../repository.ts';

interface TenantRow {
  id: string;
  name: string;
  disabled: boolean;
  created_at: Date;
}

interface ApiKeyRow {
  id: string;
  tenant_id: string;
  role: string;
  name: string | null;
  secret_hash: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
  max_concurrent: number | null;
}

const TENANT_COLUMNS = 'id, name, disabled, created_at';
const API_KEY_COLUMNS = 'id, tenant_id, role, name, secret_hash, created_at, expires_at, revoked_at, requests_per_minute, tokens_per_minute, max_concurrent';

/** The columns of each limit, in ApiKeyLimits's terms. */
const LIMIT_COLUMNS = { requestsPerMinute: 'requests_per_minute', tokensPerMinute: 'tokens_per_minute', maxConcurrent: 'max_concurrent' } as const;

// SQLSTATE codes, PostgreSQL manual appendix A.
const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';

function sqlState(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

function toTenant(row: TenantRow): Tenant {
  return { id: row.id, name: row.name, disabled: row.disabled, createdAt: row.created_at };
}

function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    // The column's CHECK constraint admits only the four roles.
    role: row.role as Role,
    name: row.name,
    secretHash: row.secret_hash,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    limits: { requestsPerMinute: row.requests_per_minute, tokensPerMinute: row.tokens_per_minute, maxConcurrent: row.max_concurrent },
  };
}

/** The tenant repository over a pool. */
export function createTenantRepository(pool: Pool): TenantRepository {
  return {
    async create({ id, name }) {
      try {
        const result = await pool.query<TenantRow>(`INSERT INTO tenants (id, name) VALUES ($1, $2) RETURNING ${TENANT_COLUMNS}`, [id, name]);
        return toTenant(result.rows[0] as TenantRow);
      } catch (error) {
        if (sqlState(error) === UNIQUE_VIOLATION) throw new TenantExistsError(id);
        throw error;
      }
    },
    async get(id) {
      const result = await pool.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = $1`, [id]);
      const row = result.rows[0];
      return row ? toTenant(row) : null;
    },
    async list() {
      const result = await pool.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants ORDER BY id COLLATE "C"`);
      return result.rows.map(toTenant);
    },
    async update(id, change) {
      const result = await pool.query<TenantRow>(
        `UPDATE tenants SET name = COALESCE($2, name), disabled = COALESCE($3, disabled) WHERE id = $1 RETURNING ${TENANT_COLUMNS}`,
        [id, change.name ?? null, change.disabled ?? null],
      );
      const row = result.rows[0];
      return row ? toTenant(row) : null;
    },
  };
}

/** The API key repository over a pool. */
export function createApiKeyRepository(pool: Pool): ApiKeyRepository {
  return {
    async create({ id, tenantId, role, secretHash, name = null, expiresAt = null, limits = {} }) {
      try {
        const result = await pool.query<ApiKeyRow>(
          `INSERT INTO api_keys (id, tenant_id, role, secret_hash, name, expires_at, requests_per_minute, tokens_per_minute, max_concurrent)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${API_KEY_COLUMNS}`,
          [id, tenantId, role, secretHash, name, expiresAt, limits.requestsPerMinute ?? null, limits.tokensPerMinute ?? null, limits.maxConcurrent ?? null],
        );
        return toApiKey(result.rows[0] as ApiKeyRow);
      } catch (error) {
        if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw new TenantNotFoundError(tenantId);
        throw error;
      }
    },
    async findByHash(secretHash) {
      const result = await pool.query<ApiKeyRow>(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE secret_hash = $1`, [secretHash]);
      const row = result.rows[0];
      return row ? toApiKey(row) : null;
    },
    async get(tenantId, id) {
      const result = await pool.query<ApiKeyRow>(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
      const row = result.rows[0];
      return row ? toApiKey(row) : null;
    },
    async revoke(id) {
      const result = await pool.query<ApiKeyRow>(`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING ${API_KEY_COLUMNS}`, [
        id,
      ]);
      const row = result.rows[0];
      return row ? toApiKey(row) : null;
    },
    async setLimits(id, change) {
      const given = (Object.keys(LIMIT_COLUMNS) as Array<keyof ApiKeyLimits>).filter((name) => change[name] !== undefined);
      const sets = given.map((name, i) => `${LIMIT_COLUMNS[name]} = $${i + 2}`);
      // Nothing to change is a read: an UPDATE needs at least one SET.
      const sql = sets.length
        ? `UPDATE api_keys SET ${sets.join(', ')} WHERE id = $1 RETURNING ${API_KEY_COLUMNS}`
        : `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE id = $1`;
      const result = await pool.query<ApiKeyRow>(sql, [id, ...given.map((name) => change[name])]);
      const row = result.rows[0];
      return row ? toApiKey(row) : null;
    },
    async listByTenant(tenantId) {
      const result = await pool.query<ApiKeyRow>(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE tenant_id = $1 ORDER BY created_at, id`, [tenantId]);
      return result.rows.map(toApiKey);
    },
  };
}
