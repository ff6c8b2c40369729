/** Tenants and API keys in MongoDB. */
import {
  TenantExistsError,
  TenantNotFoundError,
  type ApiKeyLimits,
  type ApiKeyRecord,
  type ApiKeyRepository,
  type Tenant,
  type TenantRepository,
} from '../repository.ts';
import type { ApiKeyDocument, StoreModels, TenantDocument } from './models.ts';

// MongoDB server error code for a unique index violation.
const DUPLICATE_KEY = 11000;

function isDuplicateKey(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === DUPLICATE_KEY;
}

function toTenant(doc: TenantDocument): Tenant {
  return { id: doc._id, name: doc.name, disabled: doc.disabled ?? false, createdAt: doc.created_at };
}

function toApiKey(doc: ApiKeyDocument): ApiKeyRecord {
  return {
    id: doc._id,
    tenantId: doc.tenant_id,
    role: doc.role,
    name: doc.name ?? null,
    secretHash: doc.secret_hash,
    createdAt: doc.created_at,
    expiresAt: doc.expires_at ?? null,
    revokedAt: doc.revoked_at ?? null,
    limits: {
      requestsPerMinute: doc.requests_per_minute ?? null,
      tokensPerMinute: doc.tokens_per_minute ?? null,
      maxConcurrent: doc.max_concurrent ?? null,
    },
  };
}

/** The fields of each limit, in ApiKeyLimits's terms. */
const LIMIT_FIELDS = { requestsPerMinute: 'requests_per_minute', tokensPerMinute: 'tokens_per_minute', maxConcurrent: 'max_concurrent' } as const;

/** The tenant repository over its model. */
export function createTenantRepository({ Tenant }: StoreModels): TenantRepository {
  const get = async (id: string) => {
    const doc = await Tenant.findById(id).lean<TenantDocument>().exec();
    return doc ? toTenant(doc) : null;
  };
  return {
    async create({ id, name }) {
      const doc: TenantDocument = { _id: id, name, disabled: false, created_at: new Date() };
      try {
        await Tenant.create(doc);
      } catch (error) {
        if (isDuplicateKey(error)) throw new TenantExistsError(id);
        throw error;
      }
      return toTenant(doc);
    },
    get,
    async list() {
      const docs = await Tenant.find().sort({ _id: 1 }).lean<TenantDocument[]>().exec();
      return docs.map(toTenant);
    },
    async update(id, change) {
      const set: Partial<TenantDocument> = {};
      if (change.name !== undefined) set.name = change.name;
      if (change.disabled !== undefined) set.disabled = change.disabled;
      // The driver refuses an update without operators; nothing to change is a read.
      if (Object.keys(set).length === 0) return get(id);
      const doc = await Tenant.findByIdAndUpdate(id, { $set: set }, { returnDocument: 'after' }).lean<TenantDocument>().exec();
      return doc ? toTenant(doc) : null;
    },
  };
}

/** The API key repository over its models. */
export function createApiKeyRepository({ Tenant, ApiKey }: StoreModels): ApiKeyRepository {
  return {
    async create({ id, tenantId, role, secretHash, name = null, expiresAt = null, limits = {} }) {
      // No foreign keys in MongoDB; tenants are never deleted, so checking first cannot race.
      if (!(await Tenant.exists({ _id: tenantId }))) throw new TenantNotFoundError(tenantId);
      const doc: ApiKeyDocument = {
        _id: id,
        tenant_id: tenantId,
        role,
        name,
        secret_hash: secretHash,
        created_at: new Date(),
        expires_at: expiresAt,
        revoked_at: null,
        requests_per_minute: limits.requestsPerMinute ?? null,
        tokens_per_minute: limits.tokensPerMinute ?? null,
        max_concurrent: limits.maxConcurrent ?? null,
      };
      await ApiKey.create(doc);
      return toApiKey(doc);
    },
    async findByHash(secretHash) {
      const doc = await ApiKey.findOne({ secret_hash: secretHash }).lean<ApiKeyDocument>().exec();
      return doc ? toApiKey(doc) : null;
    },
    async get(tenantId, id) {
      const doc = await ApiKey.findOne({ _id: id, tenant_id: tenantId }).lean<ApiKeyDocument>().exec();
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
    async setLimits(id, change) {
      const set: Partial<ApiKeyDocument> = {};
      for (const name of Object.keys(LIMIT_FIELDS) as Array<keyof ApiKeyLimits>) {
        const value = change[name];
        if (value !== undefined) set[LIMIT_FIELDS[name]] = value;
      }
      // The driver refuses an update without operators; nothing to change is a read.
      const doc =
        Object.keys(set).length === 0
          ? await ApiKey.findById(id).lean<ApiKeyDocument>().exec()
          : await ApiKey.findByIdAndUpdate(id, { $set: set }, { returnDocument: 'after' }).lean<ApiKeyDocument>().exec();
      return doc ? toApiKey(doc) : null;
    },
    async listByTenant(tenantId) {
      const docs = await ApiKey.find({ tenant_id: tenantId }).sort({ created_at: 1, _id: 1 }).lean<ApiKeyDocument[]>().exec();
      return docs.map(toApiKey);
    },
  };
}
