import type { BudgetPolicy, BudgetRepository, PiiMode, PiiPolicy, PolicyRepository, TenantPlan } from '../../infra/store/repository.ts';
import { DEFAULT_RETENTION_DAYS } from '../../infra/store/response-fields.ts';
import { PII_CATEGORIES } from '../pii/types.ts';

/** A tenant's data policy as the web tier applies it. */
export interface DataPolicySettings {
  /** False: `store: true` is ignored and `previous_response_id` refused. */
  storeResponses: boolean;
  /** Days a stored response is kept. */
  retentionDays: number;
}

/** The data policy of a tenant that has set none: responses stored, kept 30 days. */
export const DEFAULT_DATA_POLICY: Readonly<DataPolicySettings> = { storeResponses: true, retentionDays: DEFAULT_RETENTION_DAYS };

/** A tenant's response cache policy as the web tier applies it. */
export interface CachePolicySettings {
  enabled: boolean;
  /** An answer's lifetime when the request's Cache-Control names none. */
  defaultTtlS: number;
  /** The most the tenant's cached answers may take in Redis. */
  maxBytes: number;
}

/** The cache policy of a tenant that has set none: nothing cached (caching is opt-in). */
export const DEFAULT_CACHE_POLICY: Readonly<CachePolicySettings> = { enabled: false, defaultTtlS: 300, maxBytes: 64 * 1024 * 1024 };

/** What admission needs to know of a tenant besides its key. */
export interface TenantSettings {
  policies: BudgetPolicy[];
  /** The tenant has a credit account (it was topped up at least once): requests draw it down. */
  creditEnforced: boolean;
  plan: TenantPlan | null;
  /** The tenant's PII policy, or the configured default (every category critical). */
  pii: PiiPolicy;
  /** The tenant's data policy, or DEFAULT_DATA_POLICY. */
  dataPolicy: DataPolicySettings;
  /** The tenant's response cache policy, or DEFAULT_CACHE_POLICY. */
  cache: CachePolicySettings;
}

interface Entry {
  settings: Promise<TenantSettings>;
  expiresAt: number;
}

/**
 * Budget policies, credit account, plan, PII, data and cache policies per tenant, cached in the web process. A change
 * publishes the tenant on a Redis channel and every web process drops it at once; the TTL
 * bounds staleness if that message is lost.
 */
export class TenantSettingsCache {
  readonly #budgets: BudgetRepository;
  readonly #policies: PolicyRepository;
  readonly #defaultPii: PiiMode;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();

  constructor(store: { budgets: BudgetRepository; policies: PolicyRepository }, defaultPii: PiiMode, ttlMs: number, now: () => number = Date.now) {
    this.#budgets = store.budgets;
    this.#policies = store.policies;
    this.#defaultPii = defaultPii;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** The tenant's settings, from the cache when fresh. */
  get(tenantId: string): Promise<TenantSettings> {
    const cached = this.#entries.get(tenantId);
    if (cached && cached.expiresAt > this.#now()) return cached.settings;
    const settings = this.#load(tenantId);
    this.#entries.set(tenantId, { settings, expiresAt: this.#now() + this.#ttlMs });
    // A failed load must not be cached: the next request asks the store again.
    settings.catch(() => this.#entries.delete(tenantId));
    return settings;
  }

  /** Drops a tenant (the message of an invalidation is its id). */
  invalidate(tenantId: string): void {
    this.#entries.delete(tenantId);
  }

  async #load(tenantId: string): Promise<TenantSettings> {
    const [policies, toppedUp, plan, pii, data, cache] = await Promise.all([
      this.#budgets.listPolicies(tenantId),
      this.#budgets.creditToppedUp(tenantId),
      this.#budgets.getPlan(tenantId),
      this.#policies.getPii(tenantId),
      this.#policies.getData(tenantId),
      this.#policies.getCache(tenantId),
    ]);
    return {
      policies,
      creditEnforced: toppedUp !== null,
      plan,
      pii: pii ?? { tenantId, mode: this.#defaultPii, critical: [...PII_CATEGORIES] },
      dataPolicy: data ? { storeResponses: data.storeResponses, retentionDays: data.retentionDays } : { ...DEFAULT_DATA_POLICY },
      cache: cache ? { enabled: cache.enabled, defaultTtlS: cache.defaultTtlS, maxBytes: cache.maxBytes } : { ...DEFAULT_CACHE_POLICY },
    };
  }
}
