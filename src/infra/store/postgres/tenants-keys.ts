/** Tenants and API keys in PostgreSQL. */
import type { Pool } from 'pg';
import {
  TenantExistsError,
  TenantNotFoundError,
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
}

const TENANT_COLUMNS = 'id, name, disabled, created_at';
const API_KEY_COLUMNS = 'id, tenant_id, role, name, secret_hash, created_at, expires_at, revoked_at';

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
    async create({ id, tenantId, role, secretHash, name = null, expiresAt = null }) {
      try {
        const result = await pool.query<ApiKeyRow>(
          `INSERT INTO api_keys (id, tenant_id, role, secret_hash, name, expires_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${API_KEY_COLUMNS}`,
          [id, tenantId, role, secretHash, name, expiresAt],
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
    async listByTenant(tenantId) {
      const result = await pool.query<ApiKeyRow>(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE tenant_id = $1 ORDER BY created_at, id`, [tenantId]);
      return result.rows.map(toApiKey);
    },
  };
}
