/**
 * Batches and their lines' results in MongoDB, without multi-document transactions (a standalone
 * server has none): a transition is one conditional update, and a result's line is kept once by
 * the unique index on (batch_id, line).
 */
import mongoose, { type QueryFilter } from 'mongoose';
import { ACTIVE_BATCH_STATUSES, batchPage, firstPerLine, resultFields, resultOf } from '../batch-fields.ts';
import type { BatchLineResult, BatchRepository, StoredBatch } from '../repository.ts';
import type { BatchDocument, BatchModels, BatchResultDocument } from './batch-models.ts';

type BatchChange = Partial<Omit<StoredBatch, 'id' | 'tenantId'>>;

interface ProgressDocument {
  succeeded: number;
  failed: number;
  never_ran: number;
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  total_tokens: number;
}

// MongoDB server error code for a unique index violation (here: a line that already has its result).
const DUPLICATE_KEY = 11000;

const metadataJson = (metadata: StoredBatch['metadata']): string | null => (metadata === null ? null : JSON.stringify(metadata));

/** The field of every field a transition may change, and how its value is stored: the only names that reach the update. */
const CHANGE_FIELDS: Record<keyof BatchChange, { field: keyof BatchDocument; stored?: (value: never) => unknown }> = {
  keyId: { field: 'key_id' },
  dialect: { field: 'dialect' },
  endpoint: { field: 'endpoint' },
  inputFileId: { field: 'input_file_id' },
  completionWindow: { field: 'completion_window' },
  status: { field: 'status' },
  metadata: { field: 'metadata_json', stored: metadataJson },
  feature: { field: 'feature' },
  errors: { field: 'validation_errors' },
  total: { field: 'total' },
  segments: { field: 'segments' },
  outputFileId: { field: 'output_file_id' },
  errorFileId: { field: 'error_file_id' },
  usage: { field: 'usage' },
  createdAt: { field: 'created_at' },
  expiresAt: { field: 'expires_at' },
  inProgressAt: { field: 'in_progress_at' },
  finalizingAt: { field: 'finalizing_at' },
  completedAt: { field: 'completed_at' },
  failedAt: { field: 'failed_at' },
  expiredAt: { field: 'expired_at' },
  cancellingAt: { field: 'cancelling_at' },
  cancelledAt: { field: 'cancelled_at' },
};

function toDocument(b: StoredBatch): BatchDocument {
  return {
    _id: b.id,
    tenant_id: b.tenantId,
    key_id: b.keyId,
    dialect: b.dialect,
    endpoint: b.endpoint,
    input_file_id: b.inputFileId,
    completion_window: b.completionWindow,
    status: b.status,
    metadata_json: metadataJson(b.metadata),
    feature: b.feature,
    validation_errors: b.errors,
    total: b.total,
    segments: b.segments,
    output_file_id: b.outputFileId,
    error_file_id: b.errorFileId,
    usage: b.usage,
    created_at: b.createdAt,
    expires_at: b.expiresAt,
    in_progress_at: b.inProgressAt,
    finalizing_at: b.finalizingAt,
    completed_at: b.completedAt,
    failed_at: b.failedAt,
    expired_at: b.expiredAt,
    cancelling_at: b.cancellingAt,
    cancelled_at: b.cancelledAt,
  };
}

function toBatch(doc: BatchDocument): StoredBatch {
  return {
    id: doc._id,
    tenantId: doc.tenant_id,
    keyId: doc.key_id,
    dialect: doc.dialect,
    endpoint: doc.endpoint,
    inputFileId: doc.input_file_id,
    completionWindow: doc.completion_window,
    status: doc.status,
    metadata: doc.metadata_json == null ? null : (JSON.parse(doc.metadata_json) as Record<string, string>),
    feature: doc.feature ?? null,
    errors: doc.validation_errors ?? [],
    total: doc.total,
    segments: doc.segments ?? [],
    outputFileId: doc.output_file_id ?? null,
    errorFileId: doc.error_file_id ?? null,
    usage: doc.usage ?? null,
    createdAt: doc.created_at,
    expiresAt: doc.expires_at,
    inProgressAt: doc.in_progress_at ?? null,
    finalizingAt: doc.finalizing_at ?? null,
    completedAt: doc.completed_at ?? null,
    failedAt: doc.failed_at ?? null,
    expiredAt: doc.expired_at ?? null,
    cancellingAt: doc.cancelling_at ?? null,
    cancelledAt: doc.cancelled_at ?? null,
  };
}

/** The `$set` of `change` (fields given as undefined are left alone). */
function toSet(change: BatchChange): Record<string, unknown> {
  const set: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(change)) {
    if (value === undefined) continue;
    if (!Object.hasOwn(CHANGE_FIELDS, key)) throw new Error(`A batch has no field '${key}' to change.`);
    const { field, stored } = CHANGE_FIELDS[key as keyof BatchChange];
    set[field] = stored ? stored(value as never) : value;
  }
  return set;
}

/** Whether an unordered insert failed only on lines that already had their result. */
function onlyDuplicates(error: unknown): boolean {
  if (!(error instanceof mongoose.mongo.MongoBulkWriteError) || error.err) return false;
  // A network failure also arrives as a bulk write error, but with no write errors: not a duplicate.
  const failures = [error.writeErrors].flat();
  return failures.length > 0 && failures.every((failure) => failure.code === DUPLICATE_KEY);
}

/** The scope's batches older (`$lt`) or newer (`$gt`) than the batch of id `at`; none when there is no such batch. */
async function batchesBeyond(
  models: BatchModels,
  scope: QueryFilter<BatchDocument>,
  at: string | null,
  side: '$lt' | '$gt',
): Promise<QueryFilter<BatchDocument>> {
  if (at === null) return scope;
  const cursor = await models.Batches.findOne({ ...scope, _id: at }, { created_at: 1 })
    .lean<Pick<BatchDocument, '_id' | 'created_at'>>()
    .exec();
  if (!cursor) return { ...scope, _id: { $in: [] as string[] } };
  return { ...scope, $or: [{ created_at: { [side]: cursor.created_at } }, { created_at: cursor.created_at, _id: { [side]: cursor._id } }] };
}

/** The batch repository over its models. */
export function createBatchRepository(models: BatchModels): BatchRepository {
  const { Batches, Results } = models;
  return {
    async create(batch) {
      await Batches.create(toDocument(batch));
    },
    async get(tenantId, id) {
      const doc = await Batches.findOne({ _id: id, tenant_id: tenantId }).lean<BatchDocument>().exec();
      return doc ? toBatch(doc) : null;
    },
    async list(tenantId, page) {
      // Before a batch, the nearest newer ones are read oldest first, then shown newest first.
      const before = page.before ?? null;
      const scope = { tenant_id: tenantId, dialect: page.dialect };
      const filter = await batchesBeyond(models, scope, before ?? page.after, before ? '$gt' : '$lt');
      const order = before ? 1 : -1;
      // One more than asked tells whether there are more.
      const docs = await Batches.find(filter)
        .sort({ created_at: order, _id: order })
        .limit(page.limit + 1)
        .lean<BatchDocument[]>()
        .exec();
      return batchPage(docs.map(toBatch), page.limit, before !== null);
    },
    async transition(tenantId, id, from, change) {
      const filter = { _id: id, tenant_id: tenantId, status: { $in: [...from] } };
      const set = toSet(change);
      // Nothing to change: the batch as it is, while in one of `from`.
      const query = Object.keys(set).length === 0 ? Batches.findOne(filter) : Batches.findOneAndUpdate(filter, { $set: set }, { returnDocument: 'after' });
      const doc = await query.lean<BatchDocument>().exec();
      return doc ? toBatch(doc) : null;
    },
    async listActive(limit, after) {
      const filter: QueryFilter<BatchDocument> = { status: { $in: [...ACTIVE_BATCH_STATUSES] } };
      // By id, not by creation: an id is a cursor that stays valid when its batch ends or goes meanwhile.
      if (after !== null) filter._id = { $gt: after };
      const docs = await Batches.find(filter).sort({ _id: 1 }).limit(limit).lean<BatchDocument[]>().exec();
      return docs.map(toBatch);
    },
    async readsFile(tenantId, fileId) {
      return (await Batches.exists({ tenant_id: tenantId, input_file_id: fileId, status: { $in: [...ACTIVE_BATCH_STATUSES] } }).exec()) !== null;
    },
    async delete(tenantId, id) {
      const removed = await Batches.deleteOne({ _id: id, tenant_id: tenantId }).exec();
      if (removed.deletedCount === 0) return false;
      // The batch first: stopped between the two, what is left is results no batch shows.
      await Results.deleteMany({ tenant_id: tenantId, batch_id: id }).exec();
      return true;
    },
    async insertResults(results) {
      const docs = firstPerLine(results).map(resultFields);
      if (docs.length === 0) return;
      try {
        // Unordered, so that a line already stored does not stop the rest; lean skips per-document hydration.
        await Results.insertMany(docs, { ordered: false, lean: true });
      } catch (error) {
        if (!onlyDuplicates(error)) throw error;
      }
    },
    async doneLines(tenantId, batchId, from, to) {
      const docs = await Results.find({ tenant_id: tenantId, batch_id: batchId, line: { $gte: from, $lt: to } }, { line: 1, _id: 0 })
        .sort({ line: 1 })
        .lean<Array<Pick<BatchResultDocument, 'line'>>>()
        .exec();
      return docs.map((doc) => doc.line);
    },
    async readResults(tenantId, batchId, afterLine, limit) {
      const docs = await Results.find({ tenant_id: tenantId, batch_id: batchId, line: { $gt: afterLine } })
        .sort({ line: 1 })
        .limit(limit)
        .lean<BatchResultDocument[]>()
        .exec();
      return docs.map(resultOf);
    },
    async progress(tenantId, batchId) {
      const counted = (status: BatchLineResult['status']) => ({ $sum: { $cond: [{ $eq: ['$status', status] }, 1, 0] } });
      const [sums] = await Results.aggregate<ProgressDocument>([
        { $match: { tenant_id: tenantId, batch_id: batchId } },
        {
          $group: {
            _id: null,
            succeeded: counted('succeeded'),
            failed: counted('failed'),
            // A line that never ran (the batch expired or was cancelled first) has status code 0.
            never_ran: { $sum: { $cond: [{ $eq: ['$status_code', 0] }, 1, 0] } },
            input_tokens: { $sum: '$input_tokens' },
            cached_tokens: { $sum: '$cached_tokens' },
            output_tokens: { $sum: '$output_tokens' },
            reasoning_tokens: { $sum: '$reasoning_tokens' },
            total_tokens: { $sum: '$total_tokens' },
          },
        },
      ]).exec();
      // No results: $group over nothing answers no document at all.
      return {
        succeeded: sums?.succeeded ?? 0,
        failed: sums?.failed ?? 0,
        neverRan: sums?.never_ran ?? 0,
        usage: {
          inputTokens: sums?.input_tokens ?? 0,
          cachedTokens: sums?.cached_tokens ?? 0,
          outputTokens: sums?.output_tokens ?? 0,
          reasoningTokens: sums?.reasoning_tokens ?? 0,
          totalTokens: sums?.total_tokens ?? 0,
        },
      };
    },
  };
}
