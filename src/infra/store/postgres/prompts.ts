/** Named, versioned prompts in PostgreSQL: `prompts` holds each name's head, `prompt_versions` the versions. */
import type { Pool } from 'pg';
import { PromptNotFoundError, type PromptMessageTemplate, type PromptRepository, type PromptSummary, type PromptVersion } from '../repository.ts';

interface PromptVersionRow {
  tenant_id: string;
  name: string;
  version: number;
  messages: PromptMessageTemplate[];
  model: string;
  parameters: Record<string, unknown>;
  variables: string[];
  created_at: Date;
  created_by: string;
}

const VERSION_COLUMNS = 'v.tenant_id, v.name, v.version, v.messages, v.model, v.parameters, v.variables, v.created_at, v.created_by';

// The upsert on the head row takes its row lock, so concurrent creates for one name queue on it
// and each gets the next number; the version row is written in the same statement.
const CREATE_VERSION = `
  WITH head AS (
    INSERT INTO prompts AS p (tenant_id, name, active_version, last_version) VALUES ($1, $2, 1, 1)
    ON CONFLICT (tenant_id, name) DO UPDATE SET
      last_version = p.last_version + 1,
      active_version = CASE WHEN $3::boolean THEN p.last_version + 1 ELSE p.active_version END
    RETURNING last_version
  )
  INSERT INTO prompt_versions AS v (tenant_id, name, version, messages, model, parameters, variables, created_by)
  SELECT $1, $2, head.last_version, $4::jsonb, $5, $6::jsonb, $7::text[], $8 FROM head
  RETURNING ${VERSION_COLUMNS}`;

const ACTIVATE = `
  WITH target AS (
    SELECT ${VERSION_COLUMNS} FROM prompt_versions v WHERE v.tenant_id = $1 AND v.name = $2 AND v.version = $3
  ), moved AS (
    UPDATE prompts p SET active_version = target.version FROM target
    WHERE p.tenant_id = target.tenant_id AND p.name = target.name
  )
  SELECT * FROM target`;

// A head and its last version are written by one statement (CREATE_VERSION): the join finds every head's.
const LIST = `
  SELECT p.name, p.active_version, p.last_version, v.created_at FROM prompts p
  JOIN prompt_versions v ON v.tenant_id = p.tenant_id AND v.name = p.name AND v.version = p.last_version
  WHERE p.tenant_id = $1 ORDER BY p.name COLLATE "C"`;

function toPromptVersion(row: PromptVersionRow): PromptVersion {
  return {
    tenantId: row.tenant_id,
    name: row.name,
    version: row.version,
    messages: row.messages,
    model: row.model,
    parameters: row.parameters,
    variables: row.variables,
    createdAt: row.created_at,
    createdBy: row.created_by,
  };
}

/** The PromptRepository over `pool`. */
export function createPromptRepository(pool: Pool): PromptRepository {
  return {
    async createVersion(input) {
      // pg would send a JS array as a PostgreSQL array literal, so JSON goes as text.
      const result = await pool.query<PromptVersionRow>(CREATE_VERSION, [
        input.tenantId,
        input.name,
        input.activate,
        JSON.stringify(input.messages),
        input.model,
        JSON.stringify(input.parameters),
        input.variables,
        input.createdBy,
      ]);
      return toPromptVersion(result.rows[0] as PromptVersionRow);
    },
    async activate(tenantId, name, version) {
      const result = await pool.query<PromptVersionRow>(ACTIVATE, [tenantId, name, version]);
      const row = result.rows[0];
      if (row) return toPromptVersion(row);
      const head = await pool.query('SELECT 1 FROM prompts WHERE tenant_id = $1 AND name = $2', [tenantId, name]);
      throw head.rowCount ? new PromptNotFoundError(name, version) : new PromptNotFoundError(name);
    },
    async getActive(tenantId, name) {
      const result = await pool.query<PromptVersionRow>(
        `SELECT ${VERSION_COLUMNS} FROM prompts p
         JOIN prompt_versions v ON v.tenant_id = p.tenant_id AND v.name = p.name AND v.version = p.active_version
         WHERE p.tenant_id = $1 AND p.name = $2`,
        [tenantId, name],
      );
      const row = result.rows[0];
      return row ? toPromptVersion(row) : null;
    },
    async history(tenantId, name) {
      // One statement, so the versions and the active number come from the same snapshot.
      const result = await pool.query<PromptVersionRow & { active_version: number }>(
        `SELECT ${VERSION_COLUMNS}, p.active_version FROM prompts p
         JOIN prompt_versions v ON v.tenant_id = p.tenant_id AND v.name = p.name
         WHERE p.tenant_id = $1 AND p.name = $2 ORDER BY v.version DESC`,
        [tenantId, name],
      );
      const first = result.rows[0];
      if (!first) return null;
      return { name, activeVersion: first.active_version, versions: result.rows.map(toPromptVersion) };
    },
    async list(tenantId) {
      const result = await pool.query<{ name: string; active_version: number; last_version: number; created_at: Date }>(LIST, [tenantId]);
      return result.rows.map((row): PromptSummary => ({
        name: row.name,
        activeVersion: row.active_version,
        latestVersion: row.last_version,
        updatedAt: row.created_at,
      }));
    },
  };
}
