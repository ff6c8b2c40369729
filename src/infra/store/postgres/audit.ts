/** The hash-chained audit log in PostgreSQL: `audit_events`, plus `audit_heads` (each tenant's chain end). */
import type { Pool, PoolClient } from 'pg';
import { GENESIS_HASH, auditEventHash, verifyChain } from '../../../domain/audit/hash-chain.ts';
import { checkChainEnd } from '../audit-chain-end.ts';
import type { AuditEvent, AuditEventInput, AuditFilter, AuditRepository } from '../repository.ts';
import { fromAuditFields, toAuditFields, type AuditFields } from '../audit-fields.ts';
import { inTransaction } from './transaction.ts';

// bigint arrives as a string.
type AuditRow = Omit<AuditFields, 'seq'> & { seq: string };

interface HeadRow {
  tenant_id: string;
  seq: string;
  hash: string;
  last_id: string | null;
}

/** A tenant's chain end as locked for an append. */
interface ChainHead {
  tenantId: string;
  seq: number;
  hash: string;
  /** The last event's id; null before the first. */
  id: string | null;
}

const COLUMNS = 'id, tenant_id, seq, actor, action, target, outcome, request_id, details, created_at, prev_hash, hash';
const VERIFY_PAGE = 1000;

function toEvent(row: AuditRow): AuditEvent {
  return fromAuditFields({ ...row, seq: Number(row.seq) });
}

/** Locks the chain ends of `tenants` (creating missing ones at seq 0), always in the same order. */
async function lockHeads(client: PoolClient, tenants: string[]): Promise<Map<string, ChainHead>> {
  // Sorted both times so two appends over the same tenants lock them in one order and cannot deadlock.
  await client.query('INSERT INTO audit_heads (tenant_id, seq, hash) SELECT t, 0, $2 FROM unnest($1::text[]) AS t ORDER BY t ON CONFLICT DO NOTHING', [
    tenants,
    GENESIS_HASH,
  ]);
  const heads = await client.query<HeadRow>(
    'SELECT tenant_id, seq, hash, last_id FROM audit_heads WHERE tenant_id = ANY($1::text[]) ORDER BY tenant_id FOR UPDATE',
    [tenants],
  );
  return new Map(heads.rows.map((row) => [row.tenant_id, { tenantId: row.tenant_id, seq: Number(row.seq), hash: row.hash, id: row.last_id }]));
}

/** Chains the events whose id is new onto the locked heads; returns every event as stored. */
async function appendLocked(client: PoolClient, events: AuditEventInput[]): Promise<AuditEvent[]> {
  const heads = await lockHeads(client, [...new Set(events.map((event) => event.tenantId))].sort());
  const existing = await client.query<AuditRow>(`SELECT ${COLUMNS} FROM audit_events WHERE id = ANY($1::text[])`, [events.map((event) => event.id)]);
  const stored = new Map(existing.rows.map((row) => [row.id, toEvent(row)]));
  const added: AuditEvent[] = [];
  const result = events.map((input) => {
    const known = stored.get(input.id);
    if (known) return known;
    const head = heads.get(input.tenantId) ?? { tenantId: input.tenantId, seq: 0, hash: GENESIS_HASH, id: null };
    const seq = head.seq + 1;
    const { id, tenantId, actor, action, target, outcome, requestId, createdAt } = input;
    // As jsonb will hand it back (no undefined, Dates as strings); it hashes the same either way.
    const details = JSON.parse(JSON.stringify(input.details)) as Record<string, unknown>;
    const event: AuditEvent = {
      id,
      tenantId,
      actor,
      action,
      target,
      outcome,
      requestId,
      details,
      createdAt,
      seq,
      prevHash: head.hash,
      hash: auditEventHash(input, seq, head.hash),
    };
    heads.set(tenantId, { tenantId, seq, hash: event.hash, id });
    stored.set(id, event);
    added.push(event);
    return event;
  });
  if (added.length === 0) return result;
  await client.query(`INSERT INTO audit_events (${COLUMNS}) SELECT ${COLUMNS} FROM jsonb_populate_recordset(NULL::audit_events, $1::jsonb)`, [
    JSON.stringify(added.map(toAuditFields)),
  ]);
  const movedTenants = new Set(added.map((event) => event.tenantId));
  const moved = [...heads].filter(([tenantId]) => movedTenants.has(tenantId)).map(([, head]) => head);
  await client.query(
    `UPDATE audit_heads h SET seq = v.seq, hash = v.hash, last_id = v.id
     FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS v (tenant_id, seq, hash, id) WHERE h.tenant_id = v.tenant_id`,
    [moved.map((head) => head.tenantId), moved.map((head) => head.seq), moved.map((head) => head.hash), moved.map((head) => head.id)],
  );
  return result;
}

/** The tenant's events in seq order, read a page at a time. */
async function* eventsInOrder(pool: Pool, tenantId: string): AsyncGenerator<AuditEvent> {
  let afterSeq = 0;
  for (;;) {
    const page = await pool.query<AuditRow>(`SELECT ${COLUMNS} FROM audit_events WHERE tenant_id = $1 AND seq > $2 ORDER BY seq LIMIT ${VERIFY_PAGE}`, [
      tenantId,
      afterSeq,
    ]);
    const events = page.rows.map(toEvent);
    yield* events;
    const last = events.at(-1);
    if (!last || events.length < VERIFY_PAGE) return;
    afterSeq = last.seq;
  }
}

function whereClause(filter: AuditFilter, beforeSeq: number | null): { sql: string; params: unknown[] } {
  const params: unknown[] = [filter.tenantId];
  const conditions = ['tenant_id = $1'];
  const optional: Array<[string, unknown]> = [
    ['seq <', beforeSeq ?? undefined],
    ['created_at >=', filter.since],
    ['created_at <', filter.until],
    ['action =', filter.action],
    ['actor =', filter.actor],
  ];
  for (const [condition, value] of optional) {
    if (value === undefined) continue;
    params.push(value);
    conditions.push(`${condition} $${params.length}`);
  }
  return { sql: conditions.join(' AND '), params };
}

/** The AuditRepository over `pool`. */
export function createAuditRepository(pool: Pool): AuditRepository {
  return {
    async append(events) {
      if (events.length === 0) return [];
      return inTransaction(pool, (client) => appendLocked(client, events));
    },
    async list(filter, limit, beforeSeq) {
      const where = whereClause(filter, beforeSeq);
      const result = await pool.query<AuditRow>(`SELECT ${COLUMNS} FROM audit_events WHERE ${where.sql} ORDER BY seq DESC LIMIT $${where.params.length + 1}`, [
        ...where.params,
        limit,
      ]);
      return result.rows.map(toEvent);
    },
    async verify(tenantId) {
      const head = await pool.query<HeadRow>('SELECT tenant_id, seq, hash, last_id FROM audit_heads WHERE tenant_id = $1', [tenantId]);
      const end = head.rows[0]?.last_id ? { seq: Number(head.rows[0].seq), id: head.rows[0].last_id } : null;
      return checkChainEnd(await verifyChain(eventsInOrder(pool, tenantId)), end);
    },
  };
}
