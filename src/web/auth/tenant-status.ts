import type { TenantRepository } from '../../infra/store/repository.ts';
import { ServiceUnavailableError } from '../../errors/gateway-error.ts';
import { LookupCache } from './lookup-cache.ts';

// Tenants come from stored keys or from verified JWT claims, so this bound is never reached in practice.
const MAX_CACHED_TENANTS = 10_000;

/**
 * Whether a tenant is disabled, cached in-process for at most `ttlMs`. A change announced
 * through Redis drops the tenant at once on every web process; the TTL bounds a lost one.
 */
export class TenantStatusCache {
  readonly #tenants: TenantRepository;
  readonly #cache: LookupCache<boolean>;

  constructor(tenants: TenantRepository, ttlMs: number, now: () => number = Date.now) {
    this.#tenants = tenants;
    this.#cache = new LookupCache({ ttlMs, maxEntries: MAX_CACHED_TENANTS, now });
  }

  /**
   * True when the tenant is disabled. A tenant the store does not know is not: a JWT may name a
   * tenant that was never created there (docs/roles.md).
   */
  isDisabled(tenantId: string): Promise<boolean> {
    return this.#cache.get(tenantId, async () => {
      try {
        return (await this.#tenants.get(tenantId))?.disabled ?? false;
      } catch {
        throw new ServiceUnavailableError('The credential store is unavailable; retry shortly.', 1);
      }
    });
  }

  /** Forgets the tenant (it was disabled or enabled). */
  invalidate(tenantId: string): void {
    this.#cache.invalidate((cached) => cached === tenantId);
  }
}
