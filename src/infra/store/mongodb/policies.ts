/** Per-tenant PII and data policies in MongoDB; `_id` is the tenant id. */
import { Schema, type Connection, type Model } from 'mongoose';
import type { DataPolicy, PiiMode, PiiPolicy, PolicyRepository } from '../repository.ts';

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

/** The policy models of one connection. */
export interface PolicyModels {
  Pii: Model<PiiPolicyDocument>;
  Data: Model<DataPolicyDocument>;
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

/** The policy models of one connection. */
export function createPolicyModels(connection: Connection): PolicyModels {
  return { Pii: connection.model<PiiPolicyDocument>('PiiPolicy', schema), Data: connection.model<DataPolicyDocument>('DataPolicy', dataSchema) };
}

function toPolicy(doc: PiiPolicyDocument): PiiPolicy {
  return { tenantId: doc._id, mode: doc.mode, critical: [...doc.critical] };
}

function toDataPolicy(doc: DataPolicyDocument): DataPolicy {
  return { tenantId: doc._id, storeResponses: doc.store_responses, retentionDays: doc.retention_days, updatedAt: doc.updated_at };
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
  };
}
