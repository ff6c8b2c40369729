/** Batches and their lines' results in PostgreSQL. */
import type { Pool } from 'pg';
import { ACTIVE_BATCH_STATUSES, batchPage, firstPerLine, resultFields, resultOf, type BatchResultFields } from '../batch-fields.ts';
import type { BatchDialect, BatchError, BatchRepository, BatchSegment, BatchStatus, BatchUsage, StoredBatch } from '../repository.ts';
import { inTransaction } from './transaction.ts';

interface BatchRow {
  id: string;
  tenant_id: string;
  key_id: string;
  dialect: BatchDialect;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  metadata: Record<string, string> | null;
  feature: string | null;
  errors: BatchError[];
  total: number;
  segments: BatchSegment[];
  output_file_id: string | null;
  error_file_id: string | null;
  usage: BatchUsage | null;
  created_at: Date;
  expires_at: Date;
  in_progress_at: Date | null;
  finalizing_at: Date | null;
  completed_at: Date | null;
  failed_at: Date | null;
  expired_at: Date | null;
  cancelling_at: Date | null;
  cancelled_at: Date | null;
}

/** Counts and sums arrive as strings (bigint, numeric). */
interface ProgressRow {
  succeeded: string;
  failed: string;
  never_ran: string;
  input_tokens: string;
  cached_tokens: string;
  output_tokens: string;
  reasoning_tokens: string;
  total_tokens: string;
}

type BatchChange = Partial<Omit<StoredBatch, 'id' | 'tenantId'>>;

/**
 * The column of every field a transition may change: the only names that reach the SQL, so a
 * change's keys are never interpolated. `json` columns take their value as JSON text.
 */
const CHANGE_COLUMNS: Record<keyof BatchChange, { column: string; json?: true }> = {
  keyId: { column: 'key_id' },
  dialect: { column: 'dialect' },
  endpoint: { column: 'endpoint' },
  inputFileId: { column: 'input_file_id' },
  completionWindow: { column: 'completion_window' },
  status: { column: 'status' },
  metadata: { column: 'metadata', json: true },
  feature: { column: 'feature' },
  errors: { column: 'errors', json: true },
  total: { column: 'total' },
  segments: { column: 'segments', json: true },
  outputFileId: { column: 'output_file_id' },
  errorFileId: { column: 'error_file_id' },
  usage: { column: 'usage', json: true },
  createdAt: { column: 'created_at' },
  expiresAt: { column: 'expires_at' },
  inProgressAt: { column: 'in_progress_at' },
  finalizingAt: { column: 'finalizing_at' },
  completedAt: { column: 'completed_at' },
  failedAt: { column: 'failed_at' },
  expiredAt: { column: 'expired_at' },
  cancellingAt: { column: 'cancelling_at' },
  cancelledAt: { column: 'cancelled_at' },
};

const BATCH_COLUMNS =
  'id, tenant_id, key_id, dialect, endpoint, input_file_id, completion_window, status, metadata, feature, errors, total, segments, ' +
  'output_file_id, error_file_id, usage, created_at, expires_at, in_progress_at, finalizing_at, completed_at, failed_at, expired_at, cancelling_at, cancelled_at';

const RESULT_COLUMNS =
  'tenant_id, batch_id, line, custom_id, request_id, status, status_code, body, input_tokens, cached_tokens, output_tokens, reasoning_tokens, total_tokens';

// Rows per INSERT: each result carries a whole answer, so a flush of many stays a few statements of bounded size.
const INSERT_CHUNK = 2_000;

// One JSON array parameter per chunk, as usage records are written: jsonb_populate_recordset casts each field to its column's type.
const INSERT_RESULTS = `
  INSERT INTO batch_results (${RESULT_COLUMNS})
  SELECT ${RESULT_COLUMNS} FROM jsonb_populate_recordset(NULL::batch_results, $1::jsonb)
  ON CONFLICT (batch_id, line) DO NOTHING`;

// Spelled out from our own list (never input), so that the planner matches it to the partial index batches_active_idx.
const ACTIVE = `status IN (${ACTIVE_BATCH_STATUSES.map((status) => `'${status}'`).join(', ')})`;

const jsonOrNull = (value: unknown): string | null => (value === null ? null : JSON.stringify(value));

function toBatch(row: BatchRow): StoredBatch {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    keyId: row.key_id,
    dialect: row.dialect,
    endpoint: row.endpoint,
    inputFileId: row.input_file_id,
    completionWindow: row.completion_window,
    status: row.status,
    metadata: row.metadata,
    feature: row.feature,
    errors: row.errors,
    total: row.total,
    segments: row.segments,
    outputFileId: row.output_file_id,
    errorFileId: row.error_file_id,
    usage: row.usage,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    inProgressAt: row.in_progress_at,
    finalizingAt: row.finalizing_at,
    completedAt: row.completed_at,
    failedAt: row.failed_at,
    expiredAt: row.expired_at,
    cancellingAt: row.cancelling_at,
    cancelledAt: row.cancelled_at,
  };
}

/** A page of the tenant's batches of a dialect after (older than) or before (newer than) the batch of id $3; an unknown id matches nothing, as elsewhere. */
function listQuery(side: 'after' | 'before'): string {
  // Before a batch, the nearest newer ones are read oldest first.
  const [compare, direction] = side === 'after' ? ['<', 'DESC'] : ['>', 'ASC'];
  return `SELECT ${BATCH_COLUMNS} FROM batches
    WHERE tenant_id = $1 AND dialect = $2
      AND ($3::text IS NULL OR (created_at, id) ${compare} (SELECT created_at, id FROM batches WHERE tenant_id = $1 AND dialect = $2 AND id = $3))
    ORDER BY created_at ${direction}, id ${direction} LIMIT $4`;
}
const LIST = { after: listQuery('after'), before: listQuery('before') };

/** The SET clause of `change` (fields given as undefined are left alone), its parameters numbered from `first`. */
function setClause(change: BatchChange, first: number): { sql: string; params: unknown[] } {
  const sets: string[] = [];
  const params: unknown[] = [];
  for (const [key, value] of Object.entries(change)) {
    if (value === undefined) continue;
    if (!Object.hasOwn(CHANGE_COLUMNS, key)) throw new Error(`A batch has no field '${key}' to change.`);
    const { column, json } = CHANGE_COLUMNS[key as keyof BatchChange];
    params.push(json ? jsonOrNull(value) : value);
    sets.push(`${column} = $${first + params.length - 1}${json ? '::jsonb' : ''}`);
  }
  return { sql: sets.join(', '), params };
}

/** The batch repository over a pool. */
export function createBatchRepository(pool: Pool): BatchRepository {
  const batches = async (sql: string, params: unknown[]) => (await pool.query<BatchRow>(sql, params)).rows.map(toBatch);
  return {
    async create(b) {
      await pool.query(
        `INSERT INTO batches (${BATCH_COLUMNS})
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11::jsonb, $12, $13::jsonb, $14, $15, $16::jsonb, $17, $18, $19, $20, $21, $22, $23, $24, $25)`,
        [
          b.id,
          b.tenantId,
          b.keyId,
          b.dialect,
          b.endpoint,
          b.inputFileId,
          b.completionWindow,
          b.status,
          jsonOrNull(b.metadata),
          b.feature,
          JSON.stringify(b.errors),
          b.total,
          JSON.stringify(b.segments),
          b.outputFileId,
          b.errorFileId,
          jsonOrNull(b.usage),
          b.createdAt,
          b.expiresAt,
          b.inProgressAt,
          b.finalizingAt,
          b.completedAt,
          b.failedAt,
          b.expiredAt,
          b.cancellingAt,
          b.cancelledAt,
        ],
      );
    },
    async get(tenantId, id) {
      const [batch] = await batches(`SELECT ${BATCH_COLUMNS} FROM batches WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
      return batch ?? null;
    },
    async list(tenantId, page) {
      const before = page.before ?? null;
      const found = await batches(LIST[before ? 'before' : 'after'], [tenantId, page.dialect, before ?? page.after, page.limit + 1]);
      return batchPage(found, page.limit, before !== null);
    },
    async transition(tenantId, id, from, change) {
      const set = setClause(change, 4);
      const where = 'WHERE tenant_id = $1 AND id = $2 AND status = ANY ($3::text[])';
      // Nothing to change: the batch as it is, while in one of `from`.
      const sql = set.sql === '' ? `SELECT ${BATCH_COLUMNS} FROM batches ${where}` : `UPDATE batches SET ${set.sql} ${where} RETURNING ${BATCH_COLUMNS}`;
      const [batch] = await batches(sql, [tenantId, id, [...from], ...set.params]);
      return batch ?? null;
    },
    listActive: (limit, after) =>
      // By id, not by creation: an id is a cursor that stays valid when its batch ends or goes meanwhile.
      batches(`SELECT ${BATCH_COLUMNS} FROM batches WHERE ${ACTIVE} AND ($1::text IS NULL OR id COLLATE "C" > $1) ORDER BY id COLLATE "C" LIMIT $2`, [
        after,
        limit,
      ]),
    async readsFile(tenantId, fileId) {
      const found = await pool.query(`SELECT 1 FROM batches WHERE tenant_id = $1 AND input_file_id = $2 AND ${ACTIVE} LIMIT 1`, [tenantId, fileId]);
      return (found.rowCount ?? 0) > 0;
    },
    delete: (tenantId, id) =>
      inTransaction(pool, async (client) => {
        const removed = await client.query('DELETE FROM batches WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
        if ((removed.rowCount ?? 0) === 0) return false;
        await client.query('DELETE FROM batch_results WHERE tenant_id = $1 AND batch_id = $2', [tenantId, id]);
        return true;
      }),
    async insertResults(results) {
      const rows = firstPerLine(results).map(resultFields);
      for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
        await pool.query(INSERT_RESULTS, [JSON.stringify(rows.slice(start, start + INSERT_CHUNK))]);
      }
    },
    async doneLines(tenantId, batchId, from, to) {
      const result = await pool.query<{ line: number }>(
        'SELECT line FROM batch_results WHERE tenant_id = $1 AND batch_id = $2 AND line >= $3 AND line < $4 ORDER BY line',
        [tenantId, batchId, from, to],
      );
      return result.rows.map((row) => row.line);
    },
    async readResults(tenantId, batchId, afterLine, limit) {
      const result = await pool.query<BatchResultFields>(
        `SELECT ${RESULT_COLUMNS} FROM batch_results WHERE tenant_id = $1 AND batch_id = $2 AND line > $3 ORDER BY line LIMIT $4`,
        [tenantId, batchId, afterLine, limit],
      );
      return result.rows.map(resultOf);
    },
    async progress(tenantId, batchId) {
      // A line that never ran (the batch expired or was cancelled first) has status code 0.
      const result = await pool.query<ProgressRow>(
        `SELECT count(*) FILTER (WHERE status = 'succeeded') AS succeeded, count(*) FILTER (WHERE status = 'failed') AS failed,
           count(*) FILTER (WHERE status_code = 0) AS never_ran,
           coalesce(sum(input_tokens), 0) AS input_tokens, coalesce(sum(cached_tokens), 0) AS cached_tokens,
           coalesce(sum(output_tokens), 0) AS output_tokens, coalesce(sum(reasoning_tokens), 0) AS reasoning_tokens,
           coalesce(sum(total_tokens), 0) AS total_tokens
         FROM batch_results WHERE tenant_id = $1 AND batch_id = $2`,
        [tenantId, batchId],
      );
      // An aggregate without GROUP BY always answers one row.
      const row = result.rows[0] as ProgressRow;
      return {
        succeeded: Number(row.succeeded),
        failed: Number(row.failed),
        neverRan: Number(row.never_ran),
        usage: {
          inputTokens: Number(row.input_tokens),
          cachedTokens: Number(row.cached_tokens),
          outputTokens: Number(row.output_tokens),
          reasoningTokens: Number(row.reasoning_tokens),
          totalTokens: Number(row.total_tokens),
        },
      };
    },
  };
}
