/** Per-tenant PII policies in MongoDB; `_id` is the tenant id. */
import { Schema, type Connection, type Model } from 'mongoose';
import type { PiiMode, PiiPolicy, PolicyRepository } from '../repository.ts';

/** A tenant's PII policy document. */
export interface PiiPolicyDocument {
  _id: string;
  mode: PiiMode;
  critical: string[];
}

const schema = new Schema<PiiPolicyDocument>(
  {
    _id: { type: String, required: true },
    mode: { type: String, required: true, enum: ['block', 'mask', 'flag', 'off'] },
    critical: { type: [String], required: true },
  },
  { collection: 'pii_policies', versionKey: false },
);

/** The PII policy model of one connection. */
export function createPolicyModel(connection: Connection): Model<PiiPolicyDocument> {
  return connection.model<PiiPolicyDocument>('PiiPolicy', schema);
}

function toPolicy(doc: PiiPolicyDocument): PiiPolicy {
  return { tenantId: doc._id, mode: doc.mode, critical: [...doc.critical] };
}

/** The policy repository over its model. */
export function createPolicyRepository(model: Model<PiiPolicyDocument>): PolicyRepository {
  return {
    async getPii(tenantId) {
      const doc = await model.findById(tenantId).lean<PiiPolicyDocument>().exec();
      return doc ? toPolicy(doc) : null;
    },
    async setPii(policy) {
      const doc = await model
        .findByIdAndUpdate(policy.tenantId, { $set: { mode: policy.mode, critical: policy.critical } }, { upsert: true, returnDocument: 'after' })
        .lean<PiiPolicyDocument>()
        .exec();
      return toPolicy(doc);
    },
  };
}
