/**
 * Key sets per allow-listed issuer. Hand-written on undici instead of get-jwks (DESIGN pitfalls):
 * get-jwks serves expired keys from its stale cache, times its TTL with its own clock, caches one
 * kid per fetch (so a second kid of the same set costs a second fetch) and refetches on every
 * unknown kid. Rules kept here:
 * - a set is used for `ttlMs` from the moment its fetch started, never longer;
 * - an unknown kid refetches at most once per `refetchIntervalMs` per issuer, and so does a failed fetch;
 * - concurrent callers share one in-flight fetch;
 * - no usable set within its TTL → JwksUnavailableError (503) with Retry-After.
 */
import { JwksUnavailableError } from '../../../errors/gateway-error.ts';
import { createJwksAgent, fetchKeySet, JwksFetchError, type VerificationKey } from './jwks-fetch.ts';

/** How the cache fetches and for how long it trusts a set. */
export interface JwksCacheOptions {
  /** JWKS URL of each allow-listed issuer. */
  jwksUrls: ReadonlyMap<string, string>;
  ttlMs: number;
  refetchIntervalMs: number;
  timeoutMs: number;
  now: () => number;
}

interface IssuerState {
  url: string;
  keys: ReadonlyMap<string, VerificationKey> | null;
  expiresAt: number;
  lastAttemptAt: number;
  /** The failure of the latest attempt; null when it succeeded (or none was made). */
  lastError: JwksFetchError | null;
  inFlight: Promise<void> | null;
}

/** Key sets of the allow-listed issuers, fetched lazily. */
export class JwksCache {
  readonly #states = new Map<string, IssuerState>();
  readonly #options: JwksCacheOptions;
  readonly #agent;

  constructor(options: JwksCacheOptions) {
    this.#options = options;
    this.#agent = createJwksAgent(options.timeoutMs);
    for (const [issuer, url] of options.jwksUrls) {
      this.#states.set(issuer, { url, keys: null, expiresAt: 0, lastAttemptAt: -Infinity, lastError: null, inFlight: null });
    }
  }

  /**
   * The key `kid` of `issuer`: null when the issuer is not allow-listed or its current set lacks the kid;
   * throws JwksUnavailableError when no set within its TTL can be had or the latest refetch failed.
   */
  async getKey(issuer: string, kid: string): Promise<VerificationKey | null> {
    const state = this.#states.get(issuer);
    // Pitfall (DESIGN, get-jwks): never fetch for an issuer that is not allow-listed.
    if (!state) return null;
    const fresh = this.#fresh(state);
    const hit = fresh?.get(kid);
    if (hit) return hit;
    if (state.inFlight || this.#mayFetch(state, fresh !== null)) await this.#refresh(state);
    const current = this.#fresh(state);
    const key = current?.get(kid);
    if (key) return key;
    if (!current || state.lastError) throw this.#unavailable(state);
    return null;
  }

  /** Stops the dispatcher; in-flight fetches fail. */
  async close(): Promise<void> {
    await this.#agent.destroy();
  }

  /** The set when it is within its TTL; an expired set is dropped so it can never be used. */
  #fresh(state: IssuerState): ReadonlyMap<string, VerificationKey> | null {
    if (state.keys && this.#options.now() < state.expiresAt) return state.keys;
    state.keys = null;
    return null;
  }

  #mayFetch(state: IssuerState, haveFreshSet: boolean): boolean {
    if (this.#options.now() - state.lastAttemptAt >= this.#options.refetchIntervalMs) return true;
    // Within the cooldown only a set that simply aged out (TTL shorter than the interval) is fetched again.
    return !haveFreshSet && state.lastError === null;
  }

  #refresh(state: IssuerState): Promise<void> {
    if (!state.inFlight) {
      const startedAt = this.#options.now();
      state.lastAttemptAt = startedAt;
      state.inFlight = this.#fetch(state, startedAt).finally(() => {
        state.inFlight = null;
      });
    }
    return state.inFlight;
  }

  async #fetch(state: IssuerState, startedAt: number): Promise<void> {
    try {
      const keys = await fetchKeySet(state.url, this.#agent, this.#options.timeoutMs);
      // The TTL counts from the request, so a slow answer never stretches it.
      state.keys = keys;
      state.expiresAt = startedAt + this.#options.ttlMs;
      state.lastError = null;
    } catch (error) {
      // Pitfall (DESIGN, get-jwks): every kind of outage is one error type here, mapped to one 503.
      state.lastError = error instanceof JwksFetchError ? error : new JwksFetchError('the key set could not be fetched', error);
    }
  }

  #unavailable(state: IssuerState): JwksUnavailableError {
    const nextAttemptAt = state.lastAttemptAt + this.#options.refetchIntervalMs;
    const retryAfter = Math.max(1, Math.ceil((nextAttemptAt - this.#options.now()) / 1000));
    const why = state.lastError?.message ?? 'the key set has expired';
    const message = `The identity provider's key set is unavailable (${why}) and no key within its cache lifetime can verify the token; retry after ${retryAfter} seconds.`;
    return new JwksUnavailableError(message, retryAfter, state.lastError ?? undefined);
  }
}
