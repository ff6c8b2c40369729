import type { PromptRepository, PromptVersion } from '../../infra/store/repository.ts';

interface Entry {
  version: PromptVersion | null;
  expiresAt: number;
}

// Bounds memory across many tenants and names; the oldest entry goes first.
const MAX_ENTRIES = 10_000;

/**
 * Active prompt versions cached in the web process. An activation anywhere publishes an
 * invalidation through Redis that every web process applies at once; the TTL bounds
 * staleness if such a message is lost (pub/sub is at-most-once).
 */
export class PromptCache {
  readonly #prompts: PromptRepository;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();

  constructor(prompts: PromptRepository, ttlMs: number, now: () => number = Date.now) {
    this.#prompts = prompts;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** The active version of the tenant's prompt, or null when it has none of that name. */
  async getActive(tenantId: string, name: string): Promise<PromptVersion | null> {
    const key = cacheKey(tenantId, name);
    const cached = this.#entries.get(key);
    if (cached && cached.expiresAt > this.#now()) return cached.version;
    const version = await this.#prompts.getActive(tenantId, name);
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { version, expiresAt: this.#now() + this.#ttlMs });
    return version;
  }

  /** Drops one prompt (the message of an invalidation: `<tenant>\n<name>`). */
  invalidate(message: string): void {
    this.#entries.delete(message);
  }
}

/** The invalidation message for a prompt, and its cache key. */
export function cacheKey(tenantId: string, name: string): string {
  return `${tenantId}\n${name}`;
}
