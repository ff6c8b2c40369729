/** Per-tenant PII, data and response cache policies in MongoDB; `_id` is the tenant id. */
import { Schema, type Connection, type Model } from 'mongoose';
import type { CachePolicy, DataPolicy, PiiMode, PiiPolicy, PolicyRepository } from '../repository.ts';

/** A tenant's PII policy document. */
export interface PiiPolicyDocument {
  _id: string;
  mode: PiiMode;
  critical: string[];
}

/** A tenant's data policy document. */
export interface DataPolicyDocument {
  _id: string;
  store_responses: boolean;
  retention_days: number;
  updated_at: Date;
}

/** A tenant's response cache policy document. */
export interface CachePolicyDocument {
  _id: string;
  enabled: boolean;
  default_ttl_s: number;
  max_bytes: number;
  updated_at: Date;
}

/** The policy models of one connection. */
export interface PolicyModels {
  Pii: Model<PiiPolicyDocument>;
  Data: Model<DataPolicyDocument>;
  Cache: Model<CachePolicyDocument>;
}

const schema = new Schema<PiiPolicyDocument>(
  {
    _id: { type: String, required: true },
    mode: { type: String, required: true, enum: ['block', 'mask', 'flag', 'off'] },
    critical: { type: [String], required: true },
  },
  { collection: 'pii_policies', versionKey: false },
);

const dataSchema = new Schema<DataPolicyDocument>(
  {
    _id: { type: String, required: true },
    store_responses: { type: Boolean, required: true },
    retention_days: { type: Number, required: true, min: 1 },
    updated_at: { type: Date, required: true },
  },
  { collection: 'data_policies', versionKey: false },
);

const cacheSchema = new Schema<CachePolicyDocument>(
  {
    _id: { type: String, required: true },
    enabled: { type: Boolean, required: true },
    default_ttl_s: { type: Number, required: true, min: 1 },
    max_bytes: { type: Number, required: true, min: 1 },
    updated_at: { type: Date, required: true },
  },
  { collection: 'cache_policies', versionKey: false },
);

/** The policy models of one connection. */
export function createPolicyModels(connection: Connection): PolicyModels {
  return {
    Pii: connection.model<PiiPolicyDocument>('PiiPolicy', schema),
    Data: connection.model<DataPolicyDocument>('DataPolicy', dataSchema),
    Cache: connection.model<CachePolicyDocument>('CachePolicy', cacheSchema),
  };
}

function toPolicy(doc: PiiPolicyDocument): PiiPolicy {
  return { tenantId: doc._id, mode: doc.mode, critical: [...doc.critical] };
}

function toDataPolicy(doc: DataPolicyDocument): DataPolicy {
  return { tenantId: doc._id, storeResponses: doc.store_responses, retentionDays: doc.retention_days, updatedAt: doc.updated_at };
}

function toCachePolicy(doc: CachePolicyDocument): CachePolicy {
  return { tenantId: doc._id, enabled: doc.enabled, defaultTtlS: doc.default_ttl_s, maxBytes: doc.max_bytes, updatedAt: doc.updated_at };
}

/** The policy repository over its models. */
export function createPolicyRepository(models: PolicyModels): PolicyRepository {
  return {
    async getPii(tenantId) {
      const doc = await models.Pii.findById(tenantId).lean<PiiPolicyDocument>().exec();
      return doc ? toPolicy(doc) : null;
    },
    async setPii(policy) {
      const doc = await models.Pii.findByIdAndUpdate(
        policy.tenantId,
        { $set: { mode: policy.mode, critical: policy.critical } },
        { upsert: true, returnDocument: 'after' },
      )
        .lean<PiiPolicyDocument>()
        .exec();
      return toPolicy(doc);
    },
    async getData(tenantId) {
      const doc = await models.Data.findById(tenantId).lean<DataPolicyDocument>().exec();
      return doc ? toDataPolicy(doc) : null;
    },
    async setData(policy) {
      const change = { store_responses: policy.storeResponses, retention_days: policy.retentionDays, updated_at: new Date() };
      const doc = await models.Data.findByIdAndUpdate(policy.tenantId, { $set: change }, { upsert: true, returnDocument: 'after' })
        .lean<DataPolicyDocument>()
        .exec();
      return toDataPolicy(doc);
    },
    async getCache(tenantId) {
      const doc = await models.Cache.findById(tenantId).lean<CachePolicyDocument>().exec();
      return doc ? toCachePolicy(doc) : null;
    },
    async setCache(policy) {
      const change = { enabled: policy.enabled, default_ttl_s: policy.defaultTtlS, max_bytes: policy.maxBytes, updated_at: new Date() };
      const doc = await models.Cache.findByIdAndUpdate(policy.tenantId, { $set: change }, { upsert: true, returnDocument: 'after' })
        .lean<CachePolicyDocument>()
        .exec();
      return toCachePolicy(doc);
    },
  };
}
