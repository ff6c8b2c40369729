import type { ApiKeyLimits, ApiKeyRepository } from '../../infra/store/repository.ts';

interface Entry {
  limits: Promise<ApiKeyLimits | null>;
  expiresAt: number;
}

/**
 * API keys' own limits by key id, cached in-process for `ttlMs`: what a batch line's admission
 * reads for the key that made its batch, once per key per TTL rather than once per line. A key
 * the store no longer knows has none (null).
 */
export class KeyLimitsCache {
  readonly #apiKeys: Pick<ApiKeyRepository, 'get'>;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();

  constructor(apiKeys: Pick<ApiKeyRepository, 'get'>, ttlMs: number, now: () => number = Date.now) {
    this.#apiKeys = apiKeys;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** The key's own limits, from the cache when fresh. */
  get(tenantId: string, keyId: string): Promise<ApiKeyLimits | null> {
    const id = `${tenantId}\n${keyId}`;
    const cached = this.#entries.get(id);
    if (cached && cached.expiresAt > this.#now()) return cached.limits;
    for (const [other, entry] of this.#entries) if (entry.expiresAt <= this.#now()) this.#entries.delete(other);
    const limits = this.#apiKeys.get(tenantId, keyId).then((key) => key?.limits ?? null);
    this.#entries.set(id, { limits, expiresAt: this.#now() + this.#ttlMs });
    // A failed read must not be cached: the next line asks the store again.
    limits.catch(() => this.#entries.delete(id));
    return limits;
  }
}
