/** Per-tenant PII and data policies in PostgreSQL. */
import type { Pool } from 'pg';
import type { DataPolicy, PiiMode, PiiPolicy, PolicyRepository } from '../repository.ts';

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
  };
}
