/** The Repository over MongoDB via mongoose, on a dedicated connection. */
import mongoose from 'mongoose';
import {
  TenantExistsError,
  TenantNotFoundError,
  type ApiKeyRecord,
  type ApiKeyRepository,
  type Repository,
  type Tenant,
  type TenantRepository,
} from '../repository.ts';
import { createAuditModels, createAuditRepository } from './audit.ts';
import { createBudgetModels, createBudgetRepository } from './budgets.ts';
import { createPolicyModel, createPolicyRepository } from './policies.ts';
import { createModels, type ApiKeyDocument, type StoreModels, type TenantDocument } from './models.ts';
import { createPromptModels, createPromptRepository } from './prompts.ts';
import { createUsageModel, createUsageRepository } from './usage.ts';

// MongoDB server error code for a unique index violation.
const DUPLICATE_KEY = 11000;

function isDuplicateKey(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === DUPLICATE_KEY;
}

function toTenant(doc: TenantDocument): Tenant {
  return { id: doc._id, name: doc.name, createdAt: doc.created_at };
}

function toApiKey(doc: ApiKeyDocument): ApiKeyRecord {
  return {
    id: doc._id,
    tenantId: doc.tenant_id,
    role: doc.role,
    secretHash: doc.secret_hash,
    createdAt: doc.created_at,
    revokedAt: doc.revoked_at ?? null,
  };
}

function createTenantRepository({ Tenant }: StoreModels): TenantRepository {
  return {
    async create({ id, name }) {
      const doc: TenantDocument = { _id: id, name, created_at: new Date() };
      try {
        await Tenant.create(doc);
      } catch (error) {
        if (isDuplicateKey(error)) throw new TenantExistsError(id);
        throw error;
      }
      return toTenant(doc);
    },
    async get(id) {
      const doc = await Tenant.findById(id).lean<TenantDocument>().exec();
      return doc ? toTenant(doc) : null;
    },
  };
}

function createApiKeyRepository({ Tenant, ApiKey }: StoreModels): ApiKeyRepository {
  return {
    async create({ id, tenantId, role, secretHash }) {
      // No foreign keys in MongoDB; tenants are never deleted, so checking first cannot race.
      if (!(await Tenant.exists({ _id: tenantId }))) throw new TenantNotFoundError(tenantId);
      const doc: ApiKeyDocument = {
        _id: id,
        tenant_id: tenantId,
        role,
        secret_hash: secretHash,
        created_at: new Date(),
        revoked_at: null,
      };
      await ApiKey.create(doc);
      return toApiKey(doc);
    },
    async findByHash(secretHash) {
      const doc = await ApiKey.findOne({ secret_hash: secretHash }).lean<ApiKeyDocument>().exec();
      return doc ? toApiKey(doc) : null;
    },
    async revoke(id) {
      // The filter on revoked_at keeps the first revocation time when a key is revoked twice.
      const revoked = await ApiKey.findOneAndUpdate({ _id: id, revoked_at: null }, { $set: { revoked_at: new Date() } }, { returnDocument: 'after' })
        .lean<ApiKeyDocument>()
        .exec();
      const doc = revoked ?? (await ApiKey.findById(id).lean<ApiKeyDocument>().exec());
      return doc ? toApiKey(doc) : null;
    },
    async listByTenant(tenantId) {
      const docs = await ApiKey.find({ tenant_id: tenantId }).sort({ created_at: 1, _id: 1 }).lean<ApiKeyDocument[]>().exec();
      return docs.map(toApiKey);
    },
  };
}

/** Connects (failing within 5 s when MongoDB is unreachable) and returns the Repository. */
export async function createMongoRepository(uri: string): Promise<Repository> {
  const connection = mongoose.createConnection(uri, {
    maxPoolSize: 10,
    serverSelectionTimeoutMS: 5_000,
    // Indexes are built by migrate() (the release step), not as a side effect of every boot;
    // and with no buffering an outage is an error at once rather than a queued operation.
    autoIndex: false,
    bufferCommands: false,
  });
  try {
    await connection.asPromise();
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
  const models = createModels(connection);
  const promptModels = createPromptModels(connection);
  const usageModel = createUsageModel(connection);
  const auditModels = createAuditModels(connection);
  const budgetModels = createBudgetModels(connection);
  const policyModel = createPolicyModel(connection);
  const indexed = [
    models.Tenant,
    models.ApiKey,
    promptModels.PromptHead,
    promptModels.PromptVersion,
    usageModel,
    auditModels.EventModel,
    auditModels.HeadModel,
    budgetModels.PolicyModel,
    budgetModels.TopUpModel,
    budgetModels.PlanModel,
    policyModel,
  ];
  return {
    kind: 'mongodb',
    tenants: createTenantRepository(models),
    apiKeys: createApiKeyRepository(models),
    prompts: createPromptRepository(promptModels),
    usage: createUsageRepository(usageModel),
    audit: createAuditRepository(auditModels),
    budgets: createBudgetRepository(budgetModels),
    policies: createPolicyRepository(policyModel),
    async migrate() {
      for (const model of indexed) await model.syncIndexes();
    },
    async ping() {
      const db = connection.db;
      if (!db) throw new Error('MongoDB connection is not open.');
      await db.command({ ping: 1 });
    },
    async close() {
      await connection.close();
    },
  };
}
