/** A bounded in-process cache of store lookups, shared by the key and tenant checks of authentication. */

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * Answers live `ttlMs` (0: nothing is cached), concurrent misses of one key share one fetch,
 * and a failed fetch is not cached. An invalidation wins over a fetch already under way: that
 * fetch may have read the store before the change, so its answer is not kept.
 */
export class LookupCache<V> {
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry<V>>();
  readonly #inFlight = new Map<string, Promise<V>>();
  #generation = 0;

  constructor(options: { ttlMs: number; maxEntries: number; now: () => number }) {
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = options.maxEntries;
    this.#now = options.now;
  }

  /** The cached answer for `key` while fresh, else the answer of `fetch` (shared with concurrent callers). */
  async get(key: string, fetch: () => Promise<V>): Promise<V> {
    const cached = this.#entries.get(key);
    if (cached && cached.expiresAt > this.#now()) return cached.value;
    const pending = this.#inFlight.get(key);
    if (pending) return pending;
    const generation = this.#generation;
    const fetched: Promise<V> = fetch()
      .then((value) => {
        if (generation === this.#generation) this.#store(key, value);
        return value;
      })
      .finally(() => {
        if (this.#inFlight.get(key) === fetched) this.#inFlight.delete(key);
      });
    this.#inFlight.set(key, fetched);
    return fetched;
  }

  /** Drops the entries `matches` selects; lookups after this call ask the store again. */
  invalidate(matches: (key: string, value: V) => boolean): void {
    this.#generation++;
    this.#inFlight.clear();
    for (const [key, entry] of this.#entries) if (matches(key, entry.value)) this.#entries.delete(key);
  }

  #store(key: string, value: V): void {
    if (this.#ttlMs <= 0) return;
    // Evicts the oldest entry: bounds memory when someone sprays random keys at us.
    if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: this.#now() + this.#ttlMs });
  }
}
