/**
 * What a request asks of the response cache, in HTTP's own terms (RFC 9111 §5.2.1, the request's
 * Cache-Control), and what the gateway does about it given the tenant's policy.
 */
import { InvalidValueError } from '../../errors/gateway-error.ts';
import type { CachePolicySettings } from '../tenants/tenant-settings.ts';
import { MAX_CACHE_TTL_S } from './cache-policy-admin.ts';

/** The request's Cache-Control directives the cache honours; others are ignored, as RFC 9111 says of unknown ones. */
export interface CacheDirectives {
  /** Seconds: an answer up to this old is accepted, and a fresh one is kept this long. */
  maxAge: number | null;
  noCache: boolean;
  noStore: boolean;
}

/** `x-cache` of a response: served from the cache, looked up and not found, stored without a look-up, or neither. */
export type CacheStatus = 'hit' | 'miss' | 'refresh' | 'bypass';

/** What the cache does for one request: read answers up to `readMaxAgeS` old, store the fresh one for `storeTtlS`. */
export interface CachePlan {
  status: Exclude<CacheStatus, 'hit'>;
  readMaxAgeS: number | null;
  storeTtlS: number | null;
}

/** A request the cache leaves alone. */
export const BYPASS: Readonly<CachePlan> = { status: 'bypass', readMaxAgeS: null, storeTtlS: null };

const MAX_AGE = /^max-age\s*=\s*(?:(\d{1,10})|"(\d{1,10})")$/i;

/** Parses the request's Cache-Control; a `max-age` that is not a number of seconds is refused rather than guessed at. */
export function readCacheControl(header: string | string[] | undefined): CacheDirectives | null {
  if (header === undefined) return null;
  const directives: CacheDirectives = { maxAge: null, noCache: false, noStore: false };
  for (const raw of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const directive = raw.trim();
    const lower = directive.toLowerCase();
    if (lower === 'no-cache') directives.noCache = true;
    else if (lower === 'no-store') directives.noStore = true;
    else if (lower.startsWith('max-age')) {
      const match = MAX_AGE.exec(directive);
      if (!match) throw new InvalidValueError('Cache-Control', "Cache-Control's max-age must be a whole number of seconds, as in 'max-age=300'.");
      directives.maxAge = Math.min(Number(match[1] ?? match[2]), MAX_CACHE_TTL_S);
    }
  }
  return directives;
}

/** What the request is, as far as caching goes. */
export interface CacheCandidate {
  /** The operation can be answered from the cache at all (chat completions). */
  cacheable: boolean;
  /** The request samples (temperature above 0, or absent): cached only when it asks. */
  samples: boolean;
  /** It carries an Idempotency-Key: its retries replay its own events, so it is never answered from the cache. */
  idempotent: boolean;
}

/**
 * The cache's part in one request. A tenant without caching, an operation the cache does not hold
 * and `no-store` bypass it; `no-cache` stores without reading; a request that samples is cached only
 * when its Cache-Control asks (max-age or no-cache), since two samples are meant to differ.
 */
export function planCaching(policy: CachePolicySettings, directives: CacheDirectives | null, request: CacheCandidate): CachePlan {
  if (!policy.enabled || !request.cacheable || directives?.noStore) return BYPASS;
  const asked = directives !== null && (directives.maxAge !== null || directives.noCache);
  if (request.samples && !asked) return BYPASS;
  const ttl = directives?.maxAge ?? policy.defaultTtlS;
  if (ttl <= 0) return BYPASS;
  if (directives?.noCache || request.idempotent) return { status: 'refresh', readMaxAgeS: null, storeTtlS: ttl };
  return { status: 'miss', readMaxAgeS: ttl, storeTtlS: ttl };
}
