/** The durable store's one interface; every adapter (PostgreSQL, MongoDB) implements all of it. */

/** Roles of DESIGN.md; what each may do is decided in src/auth/roles.ts. */
export const ROLES = ['admin', 'developer', 'app', 'auditor'] as const;
/** A principal's role. */
export type Role = (typeof ROLES)[number];

/** A customer of the gateway; every record of every other kind belongs to exactly one. */
export interface Tenant {
  id: string;
  name: string;
  createdAt: Date;
}

/** An API key as stored: only the SHA-256 of the secret, never the secret. */
export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  role: Role;
  secretHash: string;
  createdAt: Date;
  revokedAt: Date | null;
}

/** Tenants. */
export interface TenantRepository {
  /** Creates a tenant; throws TenantExistsError when the id is taken. */
  create(tenant: { id: string; name: string }): Promise<Tenant>;
  get(id: string): Promise<Tenant | null>;
}

/** API keys. */
export interface ApiKeyRepository {
  /** Stores a new key; throws TenantNotFoundError when the tenant does not exist. */
  create(key: { id: string; tenantId: string; role: Role; secretHash: string }): Promise<ApiKeyRecord>;
  /** The key whose secret hashes to `secretHash`, revoked or not. */
  findByHash(secretHash: string): Promise<ApiKeyRecord | null>;
  /** Marks the key revoked; false when no such key exists. Revoking twice keeps the first time. */
  revoke(id: string): Promise<boolean>;
  listByTenant(tenantId: string): Promise<ApiKeyRecord[]>;
}

/** The whole store, as built once per process by src/store/create-store.ts. */
export interface Repository {
  readonly kind: 'postgres' | 'mongodb';
  readonly tenants: TenantRepository;
  readonly apiKeys: ApiKeyRepository;
  /** Creates tables/collections and indexes; idempotent (run by `release`). */
  migrate(): Promise<void>;
  /** Cheap liveness probe for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Thrown by TenantRepository.create for a duplicate id. */
export class TenantExistsError extends Error {
  readonly tenantId: string;
  constructor(tenantId: string) {
    super(`Tenant '${tenantId}' already exists.`);
    this.tenantId = tenantId;
    this.name = 'TenantExistsError';
  }
}

/** Thrown by ApiKeyRepository.create for an unknown tenant. */
export class TenantNotFoundError extends Error {
  readonly tenantId: string;
  constructor(tenantId: string) {
    super(`Tenant '${tenantId}' does not exist.`);
    this.tenantId = tenantId;
    this.name = 'TenantNotFoundError';
  }
}
