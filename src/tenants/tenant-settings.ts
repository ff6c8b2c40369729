import type { BudgetPolicy, BudgetRepository, TenantPlan } from '../store/repository.ts';

/** What admission needs to know of a tenant besides its key. */
export interface TenantSettings {
  policies: BudgetPolicy[];
  /** The tenant has a credit account (it was topped up at least once): requests draw it down. */
  creditEnforced: boolean;
  plan: TenantPlan | null;
}

interface Entry {
  settings: Promise<TenantSettings>;
  expiresAt: number;
}

/**
 * Budget policies, credit account and plan per tenant, cached in the web process. A change
 * publishes the tenant on a Redis channel and every web process drops it at once; the TTL
 * bounds staleness if that message is lost.
 */
export class TenantSettingsCache {
  readonly #budgets: BudgetRepository;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();

  constructor(budgets: BudgetRepository, ttlMs: number, now: () => number = Date.now) {
    this.#budgets = budgets;
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
    const [policies, toppedUp, plan] = await Promise.all([
      this.#budgets.listPolicies(tenantId),
      this.#budgets.creditToppedUp(tenantId),
      this.#budgets.getPlan(tenantId),
    ]);
    return { policies, creditEnforced: toppedUp !== null, plan };
  }
}
