import type { Repository } from '../../infra/store/repository.ts';
import { InvalidApiKeyError, MissingApiKeyError, ServiceUnavailableError } from '../../errors/gateway-error.ts';
import { API_KEY_SECRET_PREFIX, hashApiKeySecret } from '../../domain/access/api-key-secret.ts';
import { LookupCache } from './lookup-cache.ts';
import type { Principal } from '../../domain/access/roles.ts';

/** What a key resolves to: a principal with its revocation and expiry, or nothing. */
type Lookup = { principal: Principal; revoked: boolean; expiresAt: Date | null } | null;

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
 * unknown or revoked) in-process for at most `ttlMs`. A revocation announced through
 * Redis drops the tenant's cached keys at once; the TTL bounds a lost announcement.
 */
export class ApiKeyAuthenticator {
  readonly #repository: Repository;
  readonly #now: () => number;
  readonly #cache: LookupCache<Lookup>;

  constructor(repository: Repository, ttlMs: number, now: () => number = Date.now) {
    this.#repository = repository;
    this.#now = now;
    this.#cache = new LookupCache({ ttlMs, maxEntries: MAX_CACHED_KEYS, now });
  }

  /** The principal of an Authorization header; throws 401 errors for missing, bad, revoked or expired keys. */
  async authenticate(header: string | undefined): Promise<Principal> {
    const token = bearerToken(header);
    if (!token.startsWith(API_KEY_SECRET_PREFIX)) throw new InvalidApiKeyError();
    const hash = hashApiKeySecret(token);
    const lookup = await this.#cache.get(hash, () => this.#fetch(hash));
    if (!lookup) throw new InvalidApiKeyError();
    const { tenantId, keyId } = lookup.principal;
    if (lookup.revoked) throw new InvalidApiKeyError('The API key has been revoked.', { tenantId, keyId, reason: 'revoked_key' });
    if (lookup.expiresAt && lookup.expiresAt.getTime() <= this.#now()) {
      throw new InvalidApiKeyError(`The API key expired at ${lookup.expiresAt.toISOString()}.`, { tenantId, keyId, reason: 'expired_key' });
    }
    return lookup.principal;
  }

  /** Forgets the tenant's cached keys (one was revoked, or its limits changed). */
  invalidateTenant(tenantId: string): void {
    this.#cache.invalidate((_hash, lookup) => lookup?.principal.tenantId === tenantId);
  }

  async #fetch(hash: string): Promise<Lookup> {
    let record;
    try {
      record = await this.#repository.apiKeys.findByHash(hash);
    } catch {
      throw new ServiceUnavailableError('The credential store is unavailable; retry shortly.', 1);
    }
    if (!record) return null;
    return {
      principal: { tenantId: record.tenantId, role: record.role, keyId: record.id, limits: record.limits },
      revoked: record.revokedAt !== null,
      expiresAt: record.expiresAt,
    };
  }
}
