import { requestFingerprint } from '../idempotency/idempotency-store.ts';

/**
 * The digest that names a request's answer in its tenant's cache: SHA-256 of the canonical JSON
 * (keys sorted, as idempotency fingerprints are) of the operation, the catalog aliases it resolved
 * to (a tier's whole candidate list) and the request as the operation's cache reads it. The tenant
 * is not in it: it is in the Redis key, so no two tenants ever share an entry.
 */
export function cacheDigest(operation: string, candidates: readonly string[], request: unknown): string {
  return requestFingerprint({ operation, candidates, request });
}
