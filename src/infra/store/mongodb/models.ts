/** Mongoose schemas of the MongoDB store, compiled on a given connection (never the global one). */
import { Schema, type Connection, type Model } from 'mongoose';
import { ROLES, type Role } from '../repository.ts';

/** A tenant document; the tenant id is `_id`, which makes it unique. */
export interface TenantDocument {
  _id: string;
  name: string;
  /** Absent on tenants stored before tenants could be disabled: read as false. */
  disabled?: boolean;
  created_at: Date;
}

/** An API key document; the key id is `_id`. */
export interface ApiKeyDocument {
  _id: string;
  tenant_id: string;
  role: Role;
  /** Absent, like expires_at, on keys stored before keys had them: read as null. */
  name?: string | null;
  secret_hash: string;
  created_at: Date;
  expires_at?: Date | null;
  revoked_at: Date | null;
  /** The key's own limits; absent on keys stored before keys had them: read as null. */
  requests_per_minute?: number | null;
  tokens_per_minute?: number | null;
  max_concurrent?: number | null;
}

/** The models of one connection. */
export interface StoreModels {
  Tenant: Model<TenantDocument>;
  ApiKey: Model<ApiKeyDocument>;
}

const tenantSchema = new Schema<TenantDocument>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    disabled: { type: Boolean, default: false },
    created_at: { type: Date, required: true, default: () => new Date() },
  },
  { collection: 'tenants', versionKey: false },
);

const apiKeySchema = new Schema<ApiKeyDocument>(
  {
    _id: { type: String, required: true },
    tenant_id: { type: String, required: true },
    role: { type: String, required: true, enum: ROLES },
    name: { type: String, default: null },
    secret_hash: { type: String, required: true },
    created_at: { type: Date, required: true, default: () => new Date() },
    expires_at: { type: Date, default: null },
    revoked_at: { type: Date, default: null },
    requests_per_minute: { type: Number, default: null },
    tokens_per_minute: { type: Number, default: null },
    max_concurrent: { type: Number, default: null },
  },
  { collection: 'api_keys', versionKey: false },
);
// findByHash looks keys up by hash on every authenticated request; the hash is unique.
apiKeySchema.index({ secret_hash: 1 }, { unique: true });
apiKeySchema.index({ tenant_id: 1, created_at: 1 });

/** Compiles the store's models on `connection`. */
export function createModels(connection: Connection): StoreModels {
  return {
    Tenant: connection.model<TenantDocument>('Tenant', tenantSchema),
    ApiKey: connection.model<ApiKeyDocument>('ApiKey', apiKeySchema),
  };
}
