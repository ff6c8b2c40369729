/** Per-tenant PII policies in PostgreSQL. */
import type { Pool } from 'pg';
import type { PiiMode, PiiPolicy, PolicyRepository } from '../repository.ts';

interface PiiRow {
  tenant_id: string;
  mode: PiiMode;
  critical: string[];
}

function toPolicy(row: PiiRow): PiiPolicy {
  return { tenantId: row.tenant_id, mode: row.mode, critical: row.critical };
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
  };
}
