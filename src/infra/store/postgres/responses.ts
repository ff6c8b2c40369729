/**
 * Stored responses in PostgreSQL: `responses` (one row each, kept as a tombstone once deleted) and
 * `response_items` (each input item and output item by position, found by id too).
 */
import type { Pool, PoolClient } from 'pg';
import type { ResponseRepository, ResponseStatus, StoredItem, StoredResponse } from '../repository.ts';
import { DEFAULT_RETENTION_DAYS, FINAL_RESPONSE_STATUSES, TOMBSTONE_MARGIN_DAYS, UNFINISHED_RESPONSE_STATUSES, itemRowsOf } from '../response-fields.ts';
import { inTransaction } from './transaction.ts';

interface ResponseRow {
  tenant_id: string;
  id: string;
  status: ResponseStatus;
  background: boolean;
  response: Record<string, unknown>;
  previous_response_id: string | null;
  created_at: Date;
  expires_at: Date | null;
  input: StoredItem[];
}

// Lists of our own constants, never of input.
const FINAL = FINAL_RESPONSE_STATUSES.map((status) => `'${status}'`).join(', ');
const UNFINISHED = UNFINISHED_RESPONSE_STATUSES.map((status) => `'${status}'`).join(', ');

// The replace rules in one statement: the row lock it takes orders concurrent puts of an id, and a
// tombstone (deleted_at set) matches no update.
const UPSERT = `
  INSERT INTO responses (tenant_id, id, status, background, response, previous_response_id, created_at, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
  ON CONFLICT (tenant_id, id) DO UPDATE SET status = EXCLUDED.status, background = EXCLUDED.background, response = EXCLUDED.response,
    previous_response_id = EXCLUDED.previous_response_id, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
  WHERE responses.deleted_at IS NULL AND responses.status NOT IN (${FINAL})`;
// What a deleted response keeps: its id and when it went.
const TOMBSTONE_FIELDS = 'deleted_at = now(), status = NULL, response = NULL, previous_response_id = NULL, background = false, expires_at = NULL';
const TOMBSTONE_ROW = `UPDATE responses SET ${TOMBSTONE_FIELDS} WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`;
// The id of a response deleted before the outbox carried it here, kept as a tombstone. A first write
// of it in flight (inserted, not committed, so that TOMBSTONE_ROW saw nothing) is waited for by the
// conflict and tombstoned in turn.
const TOMBSTONE = `
  INSERT INTO responses (tenant_id, id, status, background, response, previous_response_id, created_at, expires_at, deleted_at)
  VALUES ($1, $2, NULL, false, NULL, NULL, now(), NULL, now())
  ON CONFLICT (tenant_id, id) DO UPDATE SET ${TOMBSTONE_FIELDS} WHERE responses.deleted_at IS NULL`;

// Responses whose ids are new, with their items, in one statement: the common case (accepted
// background responses, synchronous ones' ends) costs one round trip for a whole batch, not a
// transaction of five per record. Rows go in key order, as the transaction's do, so that two
// batches cannot deadlock. Returns the rows written; an id that exists (or is a tombstone) is not,
// and the caller applies the replace rules to it.
const INSERT_NEW = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(tenant_id text, id text, status text, background boolean, response jsonb,
      previous_response_id text, created_at timestamptz, expires_at timestamptz, items jsonb)
  ), written AS (
    INSERT INTO responses (tenant_id, id, status, background, response, previous_response_id, created_at, expires_at)
    SELECT tenant_id, id, status, background, response, previous_response_id, created_at, expires_at FROM input ORDER BY tenant_id, id
    ON CONFLICT (tenant_id, id) DO NOTHING
    RETURNING tenant_id, id
  ), items AS (
    INSERT INTO response_items (tenant_id, response_id, kind, position, item_id, item)
    SELECT w.tenant_id, w.id, i.kind, i.position, i.item->>'id', i.item
    FROM written w JOIN input r ON r.tenant_id = w.tenant_id AND r.id = w.id,
      jsonb_to_recordset(r.items) AS i(kind text, position integer, item jsonb)
  )
  SELECT tenant_id, id FROM written`;
const INSERT_ITEMS = `
  INSERT INTO response_items (tenant_id, response_id, kind, position, item_id, item)
  SELECT $1, $2, x.kind, x.position, x.item->>'id', x.item FROM jsonb_to_recordset($3::jsonb) AS x(kind text, position integer, item jsonb)`;

const GET = `
  SELECT r.tenant_id, r.id, r.status, r.background, r.response, r.previous_response_id, r.created_at, r.expires_at,
    coalesce((SELECT jsonb_agg(i.item ORDER BY i.position) FROM response_items i
              WHERE i.tenant_id = r.tenant_id AND i.response_id = r.id AND i.kind = 'input'), '[]'::jsonb) AS input
  FROM responses r WHERE r.tenant_id = $1 AND r.id = $2 AND r.deleted_at IS NULL`;

/**
 * A page of input items; no row at all: no such response. `after` is the last occurrence of that id
 * in the page's order (a client may send one id twice), so paging always moves on; an unknown
 * `after` gives an empty page.
 */
function listInputQuery(order: 'asc' | 'desc'): string {
  const [compare, pick, direction] = order === 'asc' ? ['>', 'max', 'ASC'] : ['<', 'min', 'DESC'];
  return `
    SELECT page.item FROM responses r
    LEFT JOIN LATERAL (
      SELECT i.item, i.position FROM response_items i
      WHERE i.tenant_id = r.tenant_id AND i.response_id = r.id AND i.kind = 'input'
        AND ($3::text IS NULL OR i.position ${compare} (SELECT ${pick}(a.position) FROM response_items a
             WHERE a.tenant_id = r.tenant_id AND a.response_id = r.id AND a.kind = 'input' AND a.item_id = $3))
      ORDER BY i.position ${direction} LIMIT $4
    ) page ON true
    WHERE r.tenant_id = $1 AND r.id = $2 AND r.deleted_at IS NULL
    ORDER BY page.position ${direction}`;
}
const LIST_INPUT = { asc: listInputQuery('asc'), desc: listInputQuery('desc') };

// An id may be both an output item and, sent back by the client, an input item of a later
// response: the output item (as the model made it) wins, then the newest response's.
const FIND_ITEMS = `
  SELECT DISTINCT ON (i.item_id) i.item_id, i.item FROM response_items i
  JOIN responses r ON r.tenant_id = i.tenant_id AND r.id = i.response_id
  WHERE i.tenant_id = $1 AND i.item_id = ANY($2::text[])
  ORDER BY i.item_id, i.kind = 'output' DESC, r.created_at DESC, r.id DESC`;

const LIST_UNFINISHED = `
  SELECT tenant_id, id, created_at FROM responses WHERE background AND status IN (${UNFINISHED}) AND created_at < $1
    AND ($3::timestamptz IS NULL OR (created_at, tenant_id, id) > ($3::timestamptz, $4::text, $5::text))
  ORDER BY created_at, tenant_id, id LIMIT $2`;

// Past `expires_at`, or older than the tenant's retention ($3 days without a policy). The first
// created_at bound (the shortest retention of any tenant) is what the created_at index can serve;
// the second is each tenant's own. Items go with their rows (ON DELETE CASCADE).
const SWEEP_RESPONSES = `
  WITH shortest AS (SELECT least($3::integer, min(retention_days)) AS days FROM data_policies),
  doomed AS (
    SELECT r.tenant_id, r.id FROM responses r LEFT JOIN data_policies p ON p.tenant_id = r.tenant_id
    WHERE r.deleted_at IS NULL AND (
      r.expires_at <= $1::timestamptz
      OR (r.created_at < $1::timestamptz - make_interval(days => coalesce((SELECT days FROM shortest), $3::integer))
          AND r.created_at < $1::timestamptz - make_interval(days => coalesce(p.retention_days, $3::integer))))
    LIMIT $2
  )
  DELETE FROM responses r USING doomed d WHERE r.tenant_id = d.tenant_id AND r.id = d.id AND r.deleted_at IS NULL`;

// Tombstones deleted longer ago than the longest retention of any tenant ($3 at least) plus $4 days.
const SWEEP_TOMBSTONES = `
  WITH horizon AS (SELECT greatest($3::integer, max(retention_days)) + $4::integer AS days FROM data_policies)
  DELETE FROM responses WHERE (tenant_id, id) IN (
    SELECT tenant_id, id FROM responses
    WHERE deleted_at < $1::timestamptz - make_interval(days => coalesce((SELECT days FROM horizon), $3::integer + $4::integer))
    LIMIT $2)`;

// PostgreSQL text, jsonb included, cannot hold U+0000, which a model's output may.
function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, part: unknown) => (typeof part === 'string' && part.includes('\u0000') ? part.replaceAll('\u0000', '\ufffd') : part));
}

function toStored(row: ResponseRow): StoredResponse {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    status: row.status,
    background: row.background,
    response: row.response,
    input: row.input,
    previousResponseId: row.previous_response_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

async function putOne(client: PoolClient, record: StoredResponse): Promise<void> {
  const { tenantId, id } = record;
  const written = await client.query(UPSERT, [
    tenantId,
    id,
    record.status,
    record.background,
    toJson(record.response),
    record.previousResponseId,
    record.createdAt,
    record.expiresAt,
  ]);
  if (written.rowCount === 0) return;
  await client.query('DELETE FROM response_items WHERE tenant_id = $1 AND response_id = $2', [tenantId, id]);
  const items = itemRowsOf(record);
  if (items.length > 0) await client.query(INSERT_ITEMS, [tenantId, id, toJson(items)]);
}

/** Writes the responses whose ids are new (each id's first record of the batch); returns the keys written. */
async function insertNew(pool: Pool, records: readonly StoredResponse[]): Promise<Set<string>> {
  const rows = records.map((record) => ({
    tenant_id: record.tenantId,
    id: record.id,
    status: record.status,
    background: record.background,
    response: record.response,
    previous_response_id: record.previousResponseId,
    created_at: record.createdAt,
    expires_at: record.expiresAt,
    items: itemRowsOf(record),
  }));
  const result = await pool.query<{ tenant_id: string; id: string }>(INSERT_NEW, [toJson(rows)]);
  return new Set(result.rows.map((row) => keyOf(row.tenant_id, row.id)));
}

const keyOf = (tenantId: string, id: string): string => `${tenantId}\n${id}`;

const byKey = (a: StoredResponse, b: StoredResponse): number =>
  a.tenantId === b.tenantId ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.tenantId < b.tenantId ? -1 : 1;

/** The ResponseRepository over `pool`. */
export function createResponseRepository(pool: Pool): ResponseRepository {
  return {
    async put(all) {
      if (all.length === 0) return;
      // Each id's first record tries the one-statement insert; what it did not write (an id that
      // exists, a later record of an id) takes the replace rules, in the batch's order.
      const firsts = new Map<string, StoredResponse>();
      for (const record of all) if (!firsts.has(keyOf(record.tenantId, record.id))) firsts.set(keyOf(record.tenantId, record.id), record);
      const inserted = await insertNew(pool, [...firsts.values()]);
      const records = all.filter((record) => !(inserted.has(keyOf(record.tenantId, record.id)) && firsts.get(keyOf(record.tenantId, record.id)) === record));
      if (records.length === 0) return;
      // One transaction per batch, its rows locked in one order (a stable sort keeps an id's records in
      // the batch's order), so two batches over the same ids cannot deadlock.
      const sorted = [...records].sort(byKey);
      await inTransaction(pool, async (client) => {
        for (const record of sorted) await putOne(client, record);
      });
    },
    async get(tenantId, id) {
      const result = await pool.query<ResponseRow>(GET, [tenantId, id]);
      return result.rows[0] ? toStored(result.rows[0]) : null;
    },
    delete(tenantId, id, known = false) {
      return inTransaction(pool, async (client) => {
        // The row lock first, so that a put in flight has committed its items before they are deleted.
        const tombstoned = await client.query(TOMBSTONE_ROW, [tenantId, id]);
        const wasStored = tombstoned.rowCount !== 0;
        if (!wasStored) {
          if (!known) return false;
          await client.query(TOMBSTONE, [tenantId, id]);
        }
        await client.query('DELETE FROM response_items WHERE tenant_id = $1 AND response_id = $2', [tenantId, id]);
        return wasStored;
      });
    },
    async listInput(tenantId, id, page) {
      const result = await pool.query<{ item: StoredItem | null }>(LIST_INPUT[page.order], [tenantId, id, page.after, page.limit + 1]);
      if (result.rows.length === 0) return null;
      const items = result.rows.flatMap((row) => (row.item === null ? [] : [row.item]));
      return { items: items.slice(0, page.limit), hasMore: items.length > page.limit };
    },
    async findItems(tenantId, ids) {
      if (ids.length === 0) return new Map();
      const result = await pool.query<{ item_id: string; item: StoredItem }>(FIND_ITEMS, [tenantId, [...new Set(ids)]]);
      return new Map(result.rows.map((row) => [row.item_id, row.item]));
    },
    async listUnfinished(before, limit, after = null) {
      const result = await pool.query<{ tenant_id: string; id: string; created_at: Date }>(LIST_UNFINISHED, [
        before,
        limit,
        after?.createdAt ?? null,
        after?.tenantId ?? null,
        after?.id ?? null,
      ]);
      return result.rows.map((row) => ({ tenantId: row.tenant_id, id: row.id, createdAt: row.created_at }));
    },
    async sweep(now, limit) {
      const swept = await pool.query(SWEEP_RESPONSES, [now, limit, DEFAULT_RETENTION_DAYS]);
      await pool.query(SWEEP_TOMBSTONES, [now, limit, DEFAULT_RETENTION_DAYS, TOMBSTONE_MARGIN_DAYS]);
      return swept.rowCount ?? 0;
    },
  };
}
