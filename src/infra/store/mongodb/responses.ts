/**
 * Stored responses in MongoDB, without multi-document transactions (a standalone server has none).
 * A write inserts its items under a fresh `rev` first, then switches the response to that `rev` in
 * one conditional upsert (the replace rules), then removes the items of the `rev` it replaced. Reads
 * take only the items of the response's current `rev`, so a write in flight or cut short is never
 * seen; what it leaves behind goes when the response is deleted or swept.
 */
import mongoose, { type Model, type QueryFilter } from 'mongoose';
import type { ResponseRepository, StoredItem, StoredResponse } from '../repository.ts';
import { DEFAULT_RETENTION_DAYS, TOMBSTONE_MARGIN_DAYS, UNFINISHED_RESPONSE_STATUSES, itemRowsOf } from '../response-fields.ts';
import type { DataPolicyDocument } from './policies.ts';
import { responseKey, type ResponseDocument, type ResponseItemDocument, type ResponseModels } from './response-models.ts';

// MongoDB server error code for a unique index violation (here: the `_id` of a response the filter did not match).
const DUPLICATE_KEY = 11000;
const DAY_MS = 86_400_000;
// A read that finds fewer input items than its response's write made raced a replacement; it reads again.
const READ_ATTEMPTS = 3;

const isDuplicate = (error: unknown): boolean => error instanceof mongoose.mongo.MongoServerError && error.code === DUPLICATE_KEY;
const parseItem = (doc: Pick<ResponseItemDocument, 'item_json'>): StoredItem => JSON.parse(doc.item_json) as StoredItem;

/**
 * Switches the response to `rev` if the replace rules allow; returns the `rev` it replaced (null
 * for none), or false when the record was refused (a final answer or a tombstone stands).
 */
async function switchTo(Responses: Model<ResponseDocument>, record: StoredResponse, rev: string): Promise<string | null | false> {
  // Only a response not final yet is replaced: the first final one stays.
  const filter: QueryFilter<ResponseDocument> = {
    _id: responseKey(record.tenantId, record.id),
    deleted_at: null,
    status: { $in: UNFINISHED_RESPONSE_STATUSES },
  };
  const change = {
    tenant_id: record.tenantId,
    id: record.id,
    status: record.status,
    background: record.background,
    response_json: JSON.stringify(record.response),
    previous_response_id: record.previousResponseId,
    created_at: record.createdAt,
    expires_at: record.expiresAt,
    rev,
    input_count: record.input.length,
  };
  // A document the filter does not match makes the upsert insert, which its `_id` refuses. Two
  // first writes of an id racing also meet there; the second then retries as an update.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const before = await Responses.findOneAndUpdate(filter, { $set: change }, { upsert: true, returnDocument: 'before', projection: { rev: 1 } })
        .lean<Pick<ResponseDocument, 'rev'>>()
        .exec();
      return before?.rev ?? null;
    } catch (error) {
      if (!isDuplicate(error)) throw error;
    }
  }
  return false;
}

async function putOne(models: ResponseModels, record: StoredResponse): Promise<void> {
  const { Responses, Items } = models;
  const owner = { tenant_id: record.tenantId, response_id: record.id };
  const rev = new mongoose.Types.ObjectId().toHexString();
  const rows = itemRowsOf(record).map(({ kind, position, item }) => ({ ...owner, rev, kind, position, item_id: item.id, item_json: JSON.stringify(item) }));
  if (rows.length > 0) await Items.insertMany(rows, { lean: true });
  const replaced = await switchTo(Responses, record, rev);
  if (replaced === false) {
    await Items.deleteMany({ ...owner, rev });
    return;
  }
  if (replaced !== null) await Items.deleteMany({ ...owner, rev: replaced });
  // A delete, a sweep or a later write that came between the insert and now: leave nothing behind.
  const now = await Responses.findById(responseKey(record.tenantId, record.id), { rev: 1, deleted_at: 1 })
    .lean<Pick<ResponseDocument, 'rev' | 'deleted_at'>>()
    .exec();
  if (!now || now.deleted_at != null) await Items.deleteMany(owner);
  else if (now.rev !== rev) await Items.deleteMany({ ...owner, rev });
}

async function readStored(models: ResponseModels, tenantId: string, id: string): Promise<StoredResponse | null> {
  for (let attempt = 1; ; attempt += 1) {
    const doc = await models.Responses.findOne({ _id: responseKey(tenantId, id), deleted_at: null })
      .lean<ResponseDocument>()
      .exec();
    if (!doc || doc.status == null || doc.response_json == null) return null;
    const input = await models.Items.find({ tenant_id: tenantId, response_id: id, rev: doc.rev, kind: 'input' })
      .sort({ position: 1 })
      .lean<ResponseItemDocument[]>()
      .exec();
    if (input.length !== doc.input_count && attempt < READ_ATTEMPTS) continue;
    return {
      id: doc.id,
      tenantId: doc.tenant_id,
      status: doc.status,
      background: doc.background,
      response: JSON.parse(doc.response_json) as Record<string, unknown>,
      input: input.map(parseItem),
      previousResponseId: doc.previous_response_id ?? null,
      createdAt: doc.created_at,
      expiresAt: doc.expires_at ?? null,
    };
  }
}

/** Removes the responses (not tombstones) of `ids` that still match `filter`, and their items; returns how many went. */
async function removeResponses(models: ResponseModels, ids: string[], filter: QueryFilter<ResponseDocument>): Promise<number> {
  if (ids.length === 0) return 0;
  const doomed = await models.Responses.find({ _id: { $in: ids } }, { tenant_id: 1, id: 1 })
    .lean<Array<Pick<ResponseDocument, '_id' | 'tenant_id' | 'id'>>>()
    .exec();
  const removed = await models.Responses.deleteMany({ ...filter, _id: { $in: ids }, deleted_at: null }).exec();
  const left = new Set(
    (
      await models.Responses.find({ _id: { $in: ids } }, { _id: 1 })
        .lean<Array<{ _id: string }>>()
        .exec()
    ).map((doc) => doc._id),
  );
  const gone = doomed.filter((doc) => !left.has(doc._id));
  if (gone.length > 0) await models.Items.deleteMany({ $or: gone.map((doc) => ({ tenant_id: doc.tenant_id, response_id: doc.id })) }).exec();
  return removed.deletedCount;
}

/** The responses a sweep at `now` may remove: expired, or older than their tenant's retention. */
function sweepable(now: Date, policies: Array<Pick<DataPolicyDocument, '_id' | 'retention_days'>>): QueryFilter<ResponseDocument> {
  const before = (days: number) => new Date(now.getTime() - days * DAY_MS);
  const byDays = new Map<number, string[]>();
  for (const policy of policies) {
    if (policy.retention_days !== DEFAULT_RETENTION_DAYS) byDays.set(policy.retention_days, [...(byDays.get(policy.retention_days) ?? []), policy._id]);
  }
  const ownRetention = [...byDays.values()].flat();
  return {
    deleted_at: null,
    $or: [
      { expires_at: { $lte: now } },
      { tenant_id: { $nin: ownRetention }, created_at: { $lt: before(DEFAULT_RETENTION_DAYS) } },
      ...[...byDays].map(([days, tenants]) => ({ tenant_id: { $in: tenants }, created_at: { $lt: before(days) } })),
    ],
  };
}

/** The ResponseRepository over its models and the data policies (the sweep reads each tenant's retention). */
export function createResponseRepository(models: ResponseModels, DataPolicies: Model<DataPolicyDocument>): ResponseRepository {
  const { Responses, Items } = models;
  return {
    async put(records) {
      for (const record of records) await putOne(models, record);
    },
    get: (tenantId, id) => readStored(models, tenantId, id),
    async delete(tenantId, id, known = false) {
      const content = { status: null, response_json: null, previous_response_id: null, background: false, expires_at: null, rev: null, input_count: 0 };
      const tombstone = () =>
        Responses.updateOne({ _id: responseKey(tenantId, id), deleted_at: null }, { $set: { ...content, deleted_at: new Date() } }).exec();
      const wasStored = (await tombstone()).matchedCount > 0;
      if (!wasStored) {
        if (!known) return false;
        // The id of a response deleted before the outbox carried it here, kept as a tombstone; a first
        // write of it that landed between the look above and this one is found by the look after.
        await Responses.updateOne(
          { _id: responseKey(tenantId, id) },
          { $setOnInsert: { ...content, tenant_id: tenantId, id, created_at: new Date(), deleted_at: new Date() } },
          { upsert: true },
        ).exec();
        await tombstone();
      }
      await Items.deleteMany({ tenant_id: tenantId, response_id: id }).exec();
      return wasStored;
    },
    async listInput(tenantId, id, page) {
      const doc = await Responses.findOne({ _id: responseKey(tenantId, id), deleted_at: null }, { rev: 1 })
        .lean<Pick<ResponseDocument, 'rev'>>()
        .exec();
      if (!doc) return null;
      const scope: QueryFilter<ResponseItemDocument> = { tenant_id: tenantId, response_id: id, rev: doc.rev ?? '', kind: 'input' };
      const [direction, backwards] = page.order === 'asc' ? ([1, -1] as const) : ([-1, 1] as const);
      if (page.after !== null) {
        // The last occurrence of `after` in the page's order (an id may come twice), so paging always moves on.
        const [anchor] = await Items.find({ ...scope, item_id: page.after }, { position: 1 })
          .sort({ position: backwards })
          .limit(1)
          .lean<Array<Pick<ResponseItemDocument, 'position'>>>()
          .exec();
        if (!anchor) return { items: [], hasMore: false };
        scope.position = page.order === 'asc' ? { $gt: anchor.position } : { $lt: anchor.position };
      }
      const found = await Items.find(scope)
        .sort({ position: direction })
        .limit(page.limit + 1)
        .lean<ResponseItemDocument[]>()
        .exec();
      return { items: found.slice(0, page.limit).map(parseItem), hasMore: found.length > page.limit };
    },
    async findItems(tenantId, ids) {
      if (ids.length === 0) return new Map();
      const items = await Items.find({ tenant_id: tenantId, item_id: { $in: [...new Set(ids)] } })
        .lean<ResponseItemDocument[]>()
        .exec();
      const owners = [...new Set(items.map((item) => item.response_id))].map((id) => responseKey(tenantId, id));
      const current = await Responses.find({ _id: { $in: owners }, deleted_at: null }, { id: 1, rev: 1, created_at: 1 })
        .lean<Array<Pick<ResponseDocument, 'id' | 'rev' | 'created_at'>>>()
        .exec();
      const byId = new Map(current.map((doc) => [doc.id, doc]));
      // As in PostgreSQL: an output item before an input item of that id, then the newest response's.
      const rank = (item: ResponseItemDocument): [number, number, string] => [
        item.kind === 'output' ? 1 : 0,
        byId.get(item.response_id)?.created_at.getTime() ?? 0,
        item.response_id,
      ];
      const found = new Map<string, ResponseItemDocument>();
      for (const item of items) {
        if (byId.get(item.response_id)?.rev !== item.rev) continue;
        const held = found.get(item.item_id);
        if (!held || compareRank(rank(item), rank(held)) > 0) found.set(item.item_id, item);
      }
      return new Map([...found].map(([id, item]) => [id, parseItem(item)]));
    },
    async listUnfinished(before, limit, after = null) {
      const filter: QueryFilter<ResponseDocument> = { background: true, status: { $in: UNFINISHED_RESPONSE_STATUSES }, created_at: { $lt: before } };
      // After the cursor in (created_at, tenant_id, id) order.
      if (after)
        filter.$or = [
          { created_at: { $gt: after.createdAt } },
          { created_at: after.createdAt, tenant_id: { $gt: after.tenantId } },
          { created_at: after.createdAt, tenant_id: after.tenantId, id: { $gt: after.id } },
        ];
      const docs = await Responses.find(filter, { tenant_id: 1, id: 1, created_at: 1 })
        .sort({ created_at: 1, tenant_id: 1, id: 1 })
        .limit(limit)
        .lean<Array<Pick<ResponseDocument, 'tenant_id' | 'id' | 'created_at'>>>()
        .exec();
      return docs.map((doc) => ({ tenantId: doc.tenant_id, id: doc.id, createdAt: doc.created_at }));
    },
    async sweep(now, limit) {
      const policies = await DataPolicies.find({}, { retention_days: 1 }).lean<Array<Pick<DataPolicyDocument, '_id' | 'retention_days'>>>().exec();
      const filter = sweepable(now, policies);
      const doomed = await Responses.find(filter, { _id: 1 }).limit(limit).lean<Array<{ _id: string }>>().exec();
      const swept = await removeResponses(
        models,
        doomed.map((doc) => doc._id),
        filter,
      );
      const horizonDays = Math.max(DEFAULT_RETENTION_DAYS, ...policies.map((policy) => policy.retention_days)) + TOMBSTONE_MARGIN_DAYS;
      const old = await Responses.find({ deleted_at: { $lt: new Date(now.getTime() - horizonDays * DAY_MS) } }, { _id: 1 })
        .limit(limit)
        .lean<Array<{ _id: string }>>()
        .exec();
      if (old.length > 0) await Responses.deleteMany({ _id: { $in: old.map((doc) => doc._id) }, deleted_at: { $ne: null } }).exec();
      return swept;
    },
  };
}

function compareRank(a: [number, number, string], b: [number, number, string]): number {
  return a[0] - b[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0);
}
