import type { Repository } from '../store/repository.ts';
import { InvalidApiKeyError, MissingApiKeyError, ServiceUnavailableError } from '../errors/gateway-error.ts';
import { API_KEY_SECRET_PREFIX, hashApiKeySecret } from './api-key-secret.ts';
import type { Principal } from './roles.ts';

/** What a key resolves to: a principal, a revoked key of a known tenant, or nothing. */
type Lookup = { principal: Principal; revoked: boolean } | null;

interface CacheEntry {
  lookup: Lookup;
  expiresAt: number;
}

// Bounds memory when someone sprays random keys at us; unknown keys are cached too.
const MAX_CACHED_KEYS = 10_000;

/** Extracts the token of an `Authorization: Bearer <token>` header. */
export function bearerToken(header: string | undefined): string {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!header || header.trim() === '') throw new MissingApiKeyError();
  if (!match) throw new InvalidApiKeyError('The Authorization header must be `Bearer <API_KEY>`.');
  return match[1] as string;
}

/**
 * Resolves API keys to principals through the store, caching each answer (known,
 * unknown or revoked) in-process for at most `ttlMs`, so a revoked key stops working
 * within that time on every web process.
 */
export class ApiKeyAuthenticator {
  readonly #repository: Repository;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #inFlight = new Map<string, Promise<Lookup>>();

  constructor(repository: Repository, ttlMs: number, now: () => number = Date.now) {
    this.#repository = repository;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** The principal of an Authorization header; throws 401 errors for missing or bad keys. */
  async authenticate(header: string | undefined): Promise<Principal> {
    const token = bearerToken(header);
    if (!token.startsWith(API_KEY_SECRET_PREFIX)) throw new InvalidApiKeyError();
    const lookup = await this.#lookup(hashApiKeySecret(token));
    if (!lookup) throw new InvalidApiKeyError();
    if (lookup.revoked) throw new InvalidApiKeyError('The API key has been revoked.', { tenantId: lookup.principal.tenantId, keyId: lookup.principal.keyId });
    return lookup.principal;
  }

  async #lookup(hash: string): Promise<Lookup> {
    const cached = this.#cache.get(hash);
    if (cached && cached.expiresAt > this.#now()) return cached.lookup;
    let pending = this.#inFlight.get(hash);
    if (!pending) {
      pending = this.#fetch(hash).finally(() => this.#inFlight.delete(hash));
      this.#inFlight.set(hash, pending);
    }
    return pending;
  }

  async #fetch(hash: string): Promise<Lookup> {
    let record;
    try {
      record = await this.#repository.apiKeys.findByHash(hash);
    } catch {
      throw new ServiceUnavailableError('The credential store is unavailable; retry shortly.', 1);
    }
    const lookup: Lookup = record ? { principal: { tenantId: record.tenantId, role: record.role, keyId: record.id }, revoked: record.revokedAt !== null } : null;
    if (this.#ttlMs > 0) {
      if (this.#cache.size >= MAX_CACHED_KEYS) this.#cache.delete(this.#cache.keys().next().value as string);
      this.#cache.delete(hash);
      this.#cache.set(hash, { lookup, expiresAt: this.#now() + this.#ttlMs });
    }
    return lookup;
  }
}
