/** Per-tenant PII, data and response cache policies in PostgreSQL. */
import type { Pool } from 'pg';
import type { CachePolicy, DataPolicy, PiiMode, PiiPolicy, PolicyRepository } from '../repository.ts';

interface PiiRow {
  tenant_id: string;
  mode: PiiMode;
  critical: string[];
}

interface DataRow {
  tenant_id: string;
  store_responses: boolean;
  retention_days: number;
  updated_at: Date;
}

const DATA_COLUMNS = 'tenant_id, store_responses, retention_days, updated_at';

// max_bytes is a bigint, which arrives as a string.
interface CacheRow {
  tenant_id: string;
  enabled: boolean;
  default_ttl_s: number;
  max_bytes: string;
  updated_at: Date;
}

const CACHE_COLUMNS = 'tenant_id, enabled, default_ttl_s, max_bytes, updated_at';

function toCachePolicy(row: CacheRow): CachePolicy {
  return { tenantId: row.tenant_id, enabled: row.enabled, defaultTtlS: row.default_ttl_s, maxBytes: Number(row.max_bytes), updatedAt: row.updated_at };
}

function toPolicy(row: PiiRow): PiiPolicy {
  return { tenantId: row.tenant_id, mode: row.mode, critical: row.critical };
}

function toDataPolicy(row: DataRow): DataPolicy {
  return { tenantId: row.tenant_id, storeResponses: row.store_responses, retentionDays: row.retention_days, updatedAt: row.updated_at };
}

/** The policy repository over a pool. */
export function createPolicyRepository(pool: Pool): PolicyRepository {
  return {
    async getPii(tenantId) {
      const result = await pool.query<PiiRow>('SELECT tenant_id, mode, critical FROM pii_policies WHERE tenant_id = $1', [tenantId]);
      return result.rows[0] ? toPolicy(result.rows[0]) : null;
    },
    async setPii(policy) {
      const result = await pool.query<PiiRow>(
        `INSERT INTO pii_policies (tenant_id, mode, critical) VALUES ($1, $2, $3)
         ON CONFLICT (tenant_id) DO UPDATE SET mode = EXCLUDED.mode, critical = EXCLUDED.critical
         RETURNING tenant_id, mode, critical`,
        [policy.tenantId, policy.mode, policy.critical],
      );
      return toPolicy(result.rows[0] as PiiRow);
    },
    async getData(tenantId) {
      const result = await pool.query<DataRow>(`SELECT ${DATA_COLUMNS} FROM data_policies WHERE tenant_id = $1`, [tenantId]);
      return result.rows[0] ? toDataPolicy(result.rows[0]) : null;
    },
    async setData(policy) {
      const result = await pool.query<DataRow>(
        `INSERT INTO data_policies (tenant_id, store_responses, retention_days, updated_at) VALUES ($1, $2, $3, now())
         ON CONFLICT (tenant_id) DO UPDATE SET store_responses = EXCLUDED.store_responses, retention_days = EXCLUDED.retention_days, updated_at = now()
         RETURNING ${DATA_COLUMNS}`,
        [policy.tenantId, policy.storeResponses, policy.retentionDays],
      );
      return toDataPolicy(result.rows[0] as DataRow);
    },
    async getCache(tenantId) {
      const result = await pool.query<CacheRow>(`SELECT ${CACHE_COLUMNS} FROM cache_policies WHERE tenant_id = $1`, [tenantId]);
      return result.rows[0] ? toCachePolicy(result.rows[0]) : null;
    },
    async setCache(policy) {
      const result = await pool.query<CacheRow>(
        `INSERT INTO cache_policies (tenant_id, enabled, default_ttl_s, max_bytes, updated_at) VALUES ($1, $2, $3, $4, now())
         ON CONFLICT (tenant_id) DO UPDATE SET enabled = EXCLUDED.enabled, default_ttl_s = EXCLUDED.default_ttl_s, max_bytes = EXCLUDED.max_bytes, updated_at = now()
         RETURNING ${CACHE_COLUMNS}`,
        [policy.tenantId, policy.enabled, policy.defaultTtlS, policy.maxBytes],
      );
      return toCachePolicy(result.rows[0] as CacheRow);
    },
  };
}
