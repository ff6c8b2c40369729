/** Budget policies, credit top-ups and tenant plans in MongoDB; field names mirror the PostgreSQL columns. */
import { Schema, type Connection, type Model } from 'mongoose';
import type { BudgetPolicy, BudgetRepository, BudgetWindow, CreditTopUp, TenantPlan } from '../repository.ts';

/** A budget policy; `_id` is the policy id. */
export interface BudgetPolicyDocument {
  _id: string;
  tenant_id: string;
  feature: string | null;
  budget_window: BudgetWindow;
  limit_micros: number;
  created_at: Date;
}

/** A credit top-up; `_id` is the top-up id, so a repeated one is stored once. */
export interface CreditTopUpDocument {
  _id: string;
  tenant_id: string;
  amount_micros: number;
  actor: string;
  created_at: Date;
}

/** A tenant's plan; `_id` is the tenant id. */
export interface TenantPlanDocument {
  _id: string;
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
  key_requests_per_minute: number | null;
  key_tokens_per_minute: number | null;
  max_queued: number | null;
  cache_hit_price_micros: number | null;
}

/** The budget models of one connection. */
export interface BudgetModels {
  PolicyModel: Model<BudgetPolicyDocument>;
  TopUpModel: Model<CreditTopUpDocument>;
  PlanModel: Model<TenantPlanDocument>;
}

// MongoDB server error code for a unique index violation.
const DUPLICATE_KEY = 11000;
const WINDOWS: BudgetWindow[] = ['hour', 'day', 'month'];

const policySchema = new Schema<BudgetPolicyDocument>(
  {
    _id: { type: String, required: true },
    tenant_id: { type: String, required: true },
    feature: { type: String, default: null },
    budget_window: { type: String, required: true, enum: WINDOWS },
    limit_micros: { type: Number, required: true },
    created_at: { type: Date, required: true },
  },
  { collection: 'budget_policies', versionKey: false },
);
policySchema.index({ tenant_id: 1, created_at: 1, _id: 1 });

const topUpSchema = new Schema<CreditTopUpDocument>(
  {
    _id: { type: String, required: true },
    tenant_id: { type: String, required: true },
    amount_micros: { type: Number, required: true },
    actor: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { collection: 'credit_top_ups', versionKey: false },
);
topUpSchema.index({ tenant_id: 1 });

const planSchema = new Schema<TenantPlanDocument>(
  {
    _id: { type: String, required: true },
    requests_per_minute: { type: Number, default: null },
    tokens_per_minute: { type: Number, default: null },
    key_requests_per_minute: { type: Number, default: null },
    key_tokens_per_minute: { type: Number, default: null },
    max_queued: { type: Number, default: null },
    cache_hit_price_micros: { type: Number, default: null },
  },
  { collection: 'tenant_plans', versionKey: false },
);

function isDuplicateKey(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === DUPLICATE_KEY;
}

function toPolicy(doc: BudgetPolicyDocument): BudgetPolicy {
  return {
    id: doc._id,
    tenantId: doc.tenant_id,
    feature: doc.feature ?? null,
    window: doc.budget_window,
    limitMicros: doc.limit_micros,
    createdAt: doc.created_at,
  };
}

function toTopUp(doc: CreditTopUpDocument): CreditTopUp {
  return { id: doc._id, tenantId: doc.tenant_id, amountMicros: doc.amount_micros, actor: doc.actor, createdAt: doc.created_at };
}

function toPlan(doc: TenantPlanDocument): TenantPlan {
  return {
    tenantId: doc._id,
    requestsPerMinute: doc.requests_per_minute ?? null,
    tokensPerMinute: doc.tokens_per_minute ?? null,
    keyRequestsPerMinute: doc.key_requests_per_minute ?? null,
    keyTokensPerMinute: doc.key_tokens_per_minute ?? null,
    maxQueued: doc.max_queued ?? null,
    cacheHitPriceMicros: doc.cache_hit_price_micros ?? null,
  };
}

/** Compiles the budget models on `connection`. */
export function createBudgetModels(connection: Connection): BudgetModels {
  return {
    PolicyModel: connection.model<BudgetPolicyDocument>('BudgetPolicy', policySchema),
    TopUpModel: connection.model<CreditTopUpDocument>('CreditTopUp', topUpSchema),
    PlanModel: connection.model<TenantPlanDocument>('TenantPlan', planSchema),
  };
}

/** Stores a top-up once per id; a repeat returns the stored one. */
async function topUp(TopUp: Model<CreditTopUpDocument>, input: { id: string; tenantId: string; amountMicros: number; actor: string }): Promise<CreditTopUp> {
  const filter = { _id: input.id, tenant_id: input.tenantId };
  const upsert = () =>
    TopUp.findOneAndUpdate(
      filter,
      { $setOnInsert: { amount_micros: input.amountMicros, actor: input.actor, created_at: new Date() } },
      { upsert: true, returnDocument: 'after' },
    )
      .lean<CreditTopUpDocument>()
      .exec();
  // A duplicate key means the id exists: inserted by a concurrent repeat (found below) or another tenant's (not found).
  const doc = await upsert().catch((error: unknown) =>
    isDuplicateKey(error) ? TopUp.findOne(filter).lean<CreditTopUpDocument>().exec() : Promise.reject(error),
  );
  if (!doc) throw new Error(`Top-up id '${input.id}' belongs to another tenant.`);
  return toTopUp(doc);
}

/** Inserts or replaces the tenant's plan, null fields included. */
async function setPlan(Plan: Model<TenantPlanDocument>, plan: TenantPlan): Promise<TenantPlan> {
  const fields = {
    requests_per_minute: plan.requestsPerMinute,
    tokens_per_minute: plan.tokensPerMinute,
    key_requests_per_minute: plan.keyRequestsPerMinute,
    key_tokens_per_minute: plan.keyTokensPerMinute,
    max_queued: plan.maxQueued,
    cache_hit_price_micros: plan.cacheHitPriceMicros,
  };
  const doc = await Plan.findOneAndUpdate({ _id: plan.tenantId }, { $set: fields }, { upsert: true, returnDocument: 'after' })
    .lean<TenantPlanDocument>()
    .exec();
  if (!doc) throw new Error(`Plan of '${plan.tenantId}': upsert returned no document.`);
  return toPlan(doc);
}

/** The BudgetRepository over `models`. */
export function createBudgetRepository({ PolicyModel, TopUpModel, PlanModel }: BudgetModels): BudgetRepository {
  return {
    async createPolicy({ id, tenantId, feature, window, limitMicros }) {
      const doc: BudgetPolicyDocument = { _id: id, tenant_id: tenantId, feature, budget_window: window, limit_micros: limitMicros, created_at: new Date() };
      await PolicyModel.create(doc);
      return toPolicy(doc);
    },
    async deletePolicy(tenantId, id) {
      const result = await PolicyModel.deleteOne({ _id: id, tenant_id: tenantId }).exec();
      return result.deletedCount > 0;
    },
    async listPolicies(tenantId) {
      const docs = await PolicyModel.find({ tenant_id: tenantId }).sort({ created_at: 1, _id: 1 }).lean<BudgetPolicyDocument[]>().exec();
      return docs.map(toPolicy);
    },
    topUp: (input) => topUp(TopUpModel, input),
    async creditToppedUp(tenantId) {
      const [total] = await TopUpModel.aggregate<{ total: number }>([
        { $match: { tenant_id: tenantId } },
        { $group: { _id: null, total: { $sum: '$amount_micros' } } },
      ]).exec();
      // No group at all: the tenant has no credit account.
      return total ? total.total : null;
    },
    async getPlan(tenantId) {
      const doc = await PlanModel.findById(tenantId).lean<TenantPlanDocument>().exec();
      return doc ? toPlan(doc) : null;
    },
    setPlan: (plan) => setPlan(PlanModel, plan),
  };
}
