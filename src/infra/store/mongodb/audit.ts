/**
 * The hash-chained audit log in MongoDB: `audit_events`, plus `audit_heads` (each tenant's chain end).
 *
 * A standalone server has no multi-document transactions, so the event and its head cannot move
 * together. The unique (tenant_id, seq) index is therefore the compare-and-set: an event is
 * inserted as number head.seq + 1 linked to head.hash, and a concurrent append that took that
 * number makes the insert fail, after which the appender re-reads the chain end and retries. The
 * head is moved afterwards and only forwards; if a crash leaves it behind, the next insert
 * collides and the appender continues from the last stored event instead.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Schema, type Connection, type Model, type QueryFilter } from 'mongoose';
import { GENESIS_HASH, auditEventHash, verifyChain } from '../../../domain/audit/hash-chain.ts';
import { checkChainEnd } from '../audit-chain-end.ts';
import type { AuditEvent, AuditEventInput, AuditFilter, AuditRepository } from '../repository.ts';
import { fromAuditFields, type AuditFields } from '../audit-fields.ts';

/** An audit event document; `_id` is the event id. */
export type AuditEventDocument = Omit<AuditFields, 'id'> & { _id: string };

/** A tenant's chain end; `_id` is the tenant id. */
export interface AuditHeadDocument {
  _id: string;
  seq: number;
  hash: string;
  last_id: string;
}

/** The audit models of one connection. */
export interface AuditModels {
  EventModel: Model<AuditEventDocument>;
  HeadModel: Model<AuditHeadDocument>;
}

// MongoDB server error code for a unique index violation.
const DUPLICATE_KEY = 11000;
const VERIFY_PAGE = 1000;
// Each failed attempt means another append succeeded, so this bounds only pathological contention.
const MAX_ATTEMPTS = 100;

const eventSchema = new Schema<AuditEventDocument>(
  {
    _id: { type: String, required: true },
    tenant_id: { type: String, required: true },
    seq: { type: Number, required: true },
    actor: { type: String, required: true },
    action: { type: String, required: true },
    target: { type: String, default: null },
    outcome: { type: String, required: true },
    request_id: { type: String, default: null },
    details: { type: Schema.Types.Mixed, required: true },
    created_at: { type: Date, required: true },
    prev_hash: { type: String, required: true },
    hash: { type: String, required: true },
  },
  // minimize: false keeps `details: {}`, which is hashed as such.
  { collection: 'audit_events', versionKey: false, minimize: false },
);
eventSchema.index({ tenant_id: 1, seq: -1 }, { unique: true });
eventSchema.index({ tenant_id: 1, action: 1, seq: -1 });
eventSchema.index({ tenant_id: 1, actor: 1, seq: -1 });

const headSchema = new Schema<AuditHeadDocument>(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    hash: { type: String, required: true },
    last_id: { type: String, required: true },
  },
  { collection: 'audit_heads', versionKey: false },
);

function isDuplicateKey(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === DUPLICATE_KEY;
}

function toEvent(doc: AuditEventDocument): AuditEvent {
  const { _id, ...fields } = doc;
  return fromAuditFields({ id: _id, ...fields });
}

function toDocument(input: AuditEventInput, seq: number, prevHash: string): AuditEventDocument {
  return {
    _id: input.id,
    tenant_id: input.tenantId,
    seq,
    actor: input.actor,
    action: input.action,
    target: input.target,
    outcome: input.outcome,
    request_id: input.requestId,
    // Stored as JSON, as PostgreSQL stores it: BSON would keep `undefined` as null and Dates as
    // Dates, and the event read back must hash as it did when it was appended.
    details: JSON.parse(JSON.stringify(input.details)) as Record<string, unknown>,
    created_at: input.createdAt,
    prev_hash: prevHash,
    hash: auditEventHash(input, seq, prevHash),
  };
}

/** Compiles the audit models on `connection`. */
export function createAuditModels(connection: Connection): AuditModels {
  return {
    EventModel: connection.model<AuditEventDocument>('AuditEvent', eventSchema),
    HeadModel: connection.model<AuditHeadDocument>('AuditHead', headSchema),
  };
}

/**
 * Where the tenant's next event attaches: the head, or the last stored event when that is further
 * (the head lags after a crash). Taking the further one keeps a gap left by removed last events
 * visible instead of reusing their numbers.
 */
async function chainEnd({ EventModel, HeadModel }: AuditModels, tenantId: string): Promise<{ seq: number; hash: string }> {
  const [head, last] = await Promise.all([
    HeadModel.findById(tenantId).lean<AuditHeadDocument>().exec(),
    EventModel.findOne({ tenant_id: tenantId }).sort({ seq: -1 }).select({ seq: 1, hash: 1 }).lean<AuditEventDocument>().exec(),
  ]);
  const ends = [head, last].filter((end) => end !== null).sort((a, b) => b.seq - a.seq);
  return ends[0] ? { seq: ends[0].seq, hash: ends[0].hash } : { seq: 0, hash: GENESIS_HASH };
}

/** Appends one event (or finds it stored already), retrying while other appends take its number. */
async function appendOne(models: AuditModels, input: AuditEventInput): Promise<AuditEvent> {
  const { EventModel, HeadModel } = models;
  let end = await chainEnd(models, input.tenantId);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const doc = toDocument(input, end.seq + 1, end.hash);
    try {
      await EventModel.create(doc);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const stored = await EventModel.findById(input.id).lean<AuditEventDocument>().exec();
      if (stored) return toEvent(stored);
      end = await chainEnd(models, input.tenantId);
      // Spreads the retries of appenders that collided on the same number.
      await sleep(Math.random() * attempt);
      continue;
    }
    // Forward only: when a later append already moved the head, the upsert collides on _id and is dropped.
    await HeadModel.updateOne({ _id: input.tenantId, seq: { $lt: doc.seq } }, { $set: { seq: doc.seq, hash: doc.hash, last_id: doc._id } }, { upsert: true })
      .exec()
      .catch((error: unknown) => (isDuplicateKey(error) ? undefined : Promise.reject(error)));
    return toEvent(doc);
  }
  throw new Error(`Audit event ${input.id}: tenant ${input.tenantId}'s chain stayed contended for ${MAX_ATTEMPTS} attempts.`);
}

/** The tenant's events in seq order, read a page at a time. */
async function* eventsInOrder({ EventModel }: AuditModels, tenantId: string): AsyncGenerator<AuditEvent> {
  let afterSeq = 0;
  for (;;) {
    const docs = await EventModel.find({ tenant_id: tenantId, seq: { $gt: afterSeq } })
      .sort({ seq: 1 })
      .limit(VERIFY_PAGE)
      .lean<AuditEventDocument[]>()
      .exec();
    yield* docs.map(toEvent);
    const last = docs.at(-1);
    if (!last || docs.length < VERIFY_PAGE) return;
    afterSeq = last.seq;
  }
}

function toQuery(filter: AuditFilter, beforeSeq: number | null): QueryFilter<AuditEventDocument> {
  const query: QueryFilter<AuditEventDocument> = { tenant_id: filter.tenantId };
  if (beforeSeq !== null) query.seq = { $lt: beforeSeq };
  if (filter.since || filter.until) {
    query.created_at = { ...(filter.since && { $gte: filter.since }), ...(filter.until && { $lt: filter.until }) };
  }
  if (filter.action !== undefined) query.action = filter.action;
  if (filter.actor !== undefined) query.actor = filter.actor;
  return query;
}

/** The AuditRepository over `models`. */
export function createAuditRepository(models: AuditModels): AuditRepository {
  return {
    async append(events) {
      const stored: AuditEvent[] = [];
      // In order: each event's number and link depend on the one before it.
      for (const event of events) stored.push(await appendOne(models, event));
      return stored;
    },
    async list(filter, limit, beforeSeq) {
      const docs = await models.EventModel.find(toQuery(filter, beforeSeq)).sort({ seq: -1 }).limit(limit).lean<AuditEventDocument[]>().exec();
      return docs.map(toEvent);
    },
    async verify(tenantId) {
      const head = await models.HeadModel.findById(tenantId).lean<AuditHeadDocument>().exec();
      const end = head ? { seq: head.seq, id: head.last_id } : null;
      return checkChainEnd(await verifyChain(eventsInOrder(models, tenantId)), end);
    },
  };
}
