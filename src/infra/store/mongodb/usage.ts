/** Usage records in MongoDB: `_id` is the request id, so a redelivered record is rejected by the primary key. */
import mongoose, { Schema, type Connection, type Model, type PipelineStage, type QueryFilter } from 'mongoose';
import type { UsageCursor, UsageFilter, UsageGroup, UsageRecord, UsageRepository } from '../repository.ts';
import { fromUsageFields, toUsageFields, type UsageFields } from '../usage-fields.ts';

/** A usage record document; field names mirror the PostgreSQL columns. */
export type UsageDocument = Omit<UsageFields, 'request_id'> & { _id: string };

interface GroupDocument {
  _id: string | null;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_micros: number;
}

// MongoDB server error code for a unique index violation.
const DUPLICATE_KEY = 11000;

const usageSchema = new Schema<UsageDocument>(
  {
    _id: { type: String, required: true },
    tenant_id: { type: String, required: true },
    key_id: { type: String, required: true },
    feature: { type: String, default: null },
    // The operations' usage kinds (src/operations/index.ts, which infra/ may not import), held to
    // them by test/unit/operations/usage-kinds.test.ts.
    operation: { type: String, default: 'chat', enum: ['chat', 'embeddings', 'messages', 'responses', 'responses_compact'] },
    requested_model: { type: String, required: true },
    model: { type: String, required: true },
    provider: { type: String, required: true },
    upstream_model: { type: String, required: true },
    prompt_name: { type: String, default: null },
    prompt_version: { type: Number, default: null },
    prompt_tokens: { type: Number, required: true },
    completion_tokens: { type: Number, required: true },
    total_tokens: { type: Number, required: true },
    cached_tokens: { type: Number, default: 0 },
    cache_write_tokens: { type: Number, default: 0 },
    reasoning_tokens: { type: Number, default: 0 },
    usage_source: { type: String, required: true, enum: ['provider', 'estimated'] },
    cost_micros: { type: Number, required: true },
    status: { type: String, required: true, enum: ['succeeded', 'failed', 'cancelled'] },
    error_code: { type: String, default: null },
    queue_wait_ms: { type: Number, required: true },
    ttft_ms: { type: Number, default: null },
    latency_ms: { type: Number, required: true },
    stream: { type: Boolean, required: true },
    pii_flags: { type: [String], required: true },
    response_id: { type: String, default: null },
    batch_id: { type: String, default: null },
    custom_id: { type: String, default: null },
    deployment: { type: String, default: null },
    cache_hit: { type: Boolean, default: false },
    idempotency_key: { type: String, default: null },
    created_at: { type: Date, required: true },
  },
  { collection: 'usage_records', versionKey: false },
);
// The same shape as the PostgreSQL indexes: one tenant's time range, newest first, per filter.
usageSchema.index({ tenant_id: 1, created_at: -1, _id: -1 });
usageSchema.index({ tenant_id: 1, model: 1, created_at: -1, _id: -1 });
usageSchema.index({ tenant_id: 1, key_id: 1, created_at: -1, _id: -1 });
usageSchema.index({ tenant_id: 1, feature: 1, created_at: -1, _id: -1 });
usageSchema.index({ tenant_id: 1, idempotency_key: 1, created_at: 1 }, { partialFilterExpression: { idempotency_key: { $type: 'string' } } });

const GROUP_KEYS = {
  day: { $dateToString: { format: '%Y-%m-%d', date: '$created_at', timezone: 'UTC' } },
  model: '$model',
  feature: '$feature',
} as const;

function toDocument(record: UsageRecord): UsageDocument {
  const { request_id, ...fields } = toUsageFields(record);
  return { _id: request_id, ...fields };
}

function toRecord(doc: UsageDocument): UsageRecord {
  const { _id, ...fields } = doc;
  return fromUsageFields({ request_id: _id, ...fields });
}

/** How many documents an unordered insert stored, when its only failures were duplicate request ids. */
function insertedDespiteDuplicates(error: unknown): number | null {
  if (!(error instanceof mongoose.mongo.MongoBulkWriteError) || error.err) return null;
  // A network failure also arrives as a bulk write error, but with no write errors: not a duplicate.
  const failures = [error.writeErrors].flat();
  return failures.length > 0 && failures.every((failure) => failure.code === DUPLICATE_KEY) ? error.insertedCount : null;
}

function toQuery(filter: UsageFilter, cursor: UsageCursor | null = null): QueryFilter<UsageDocument> {
  const query: QueryFilter<UsageDocument> = {
    tenant_id: filter.tenantId,
    created_at: cursor ? { $gte: filter.since, $lt: filter.until, $lte: cursor.createdAt } : { $gte: filter.since, $lt: filter.until },
  };
  if (filter.model !== undefined) query.model = filter.model;
  if (filter.feature !== undefined) query.feature = filter.feature;
  if (filter.keyId !== undefined) query.key_id = filter.keyId;
  // With created_at ≤ the cursor's already required, "strictly after it" leaves: older, or same time and smaller id.
  if (cursor) query.$or = [{ created_at: { $lt: cursor.createdAt } }, { _id: { $lt: cursor.requestId } }];
  return query;
}

/** Compiles the usage model on `connection`. */
export function createUsageModel(connection: Connection): Model<UsageDocument> {
  return connection.model<UsageDocument>('UsageRecord', usageSchema);
}

/** The UsageRepository over `Usage`. */
export function createUsageRepository(Usage: Model<UsageDocument>): UsageRepository {
  return {
    async insertMany(records) {
      if (records.length === 0) return 0;
      try {
        // Unordered, so one duplicate does not stop the rest of the batch; lean skips per-document hydration.
        const result = await Usage.insertMany(records.map(toDocument), { ordered: false, lean: true, rawResult: true });
        return result.insertedCount;
      } catch (error) {
        const inserted = insertedDespiteDuplicates(error);
        if (inserted === null) throw error;
        return inserted;
      }
    },
    async list(filter, limit, cursor) {
      const docs = await Usage.find(toQuery(filter, cursor)).sort({ created_at: -1, _id: -1 }).limit(limit).lean<UsageDocument[]>().exec();
      return docs.map(toRecord);
    },
    async sum(filter, groupBy) {
      const pipeline: PipelineStage[] = [
        { $match: toQuery(filter) },
        {
          $group: {
            _id: GROUP_KEYS[groupBy],
            requests: { $sum: 1 },
            prompt_tokens: { $sum: '$prompt_tokens' },
            completion_tokens: { $sum: '$completion_tokens' },
            total_tokens: { $sum: '$total_tokens' },
            cost_micros: { $sum: '$cost_micros' },
          },
        },
        { $sort: { _id: 1 } },
      ];
      const groups = await Usage.aggregate<GroupDocument>(pipeline).exec();
      return groups.map((group): UsageGroup => ({
        key: group._id,
        requests: group.requests,
        promptTokens: group.prompt_tokens,
        completionTokens: group.completion_tokens,
        totalTokens: group.total_tokens,
        costMicros: group.cost_micros,
      }));
    },
    async spentMicros(tenantId, feature, since, until, among) {
      const match: QueryFilter<UsageDocument> = { tenant_id: tenantId, created_at: { $gte: since, $lt: until } };
      if (feature !== null) match.feature = feature;
      // One aggregation over the records: the sum, and the requests among those asked about that it counts.
      const [result] = await Usage.aggregate<{ total: Array<{ spent: number }>; counted: Array<{ _id: string }> }>([
        { $match: match },
        {
          $facet: {
            total: [{ $group: { _id: null, spent: { $sum: '$cost_micros' } } }],
            counted: [{ $match: { _id: { $in: [...among] } } }, { $project: { _id: 1 } }],
          },
        },
      ]).exec();
      return { micros: result?.total[0]?.spent ?? 0, counted: (result?.counted ?? []).map((record) => record._id) };
    },
    async answeredBy(tenantId, keyDigest, since) {
      const answered = await Usage.findOne(
        { tenant_id: tenantId, idempotency_key: keyDigest, created_at: { $gte: since }, $or: [{ status: 'succeeded' }, { cost_micros: { $gt: 0 } }] },
        { _id: 1 },
      )
        .sort({ created_at: 1 })
        .lean<{ _id: string }>()
        .exec();
      return answered?._id ?? null;
    },
    async lastUsed(tenantId, keyIds) {
      // One index probe per key ({tenant_id, key_id, created_at}), however many records it made.
      const newest = await Promise.all(
        keyIds.map((keyId) =>
          Usage.findOne({ tenant_id: tenantId, key_id: keyId }, { created_at: 1 }).sort({ created_at: -1 }).lean<{ created_at: Date }>().exec(),
        ),
      );
      return new Map(keyIds.flatMap((keyId, i) => (newest[i] ? [[keyId, newest[i].created_at] as const] : [])));
    },
  };
}
