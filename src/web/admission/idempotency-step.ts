import { IdempotencyKeyInvalidError, IdempotencyKeyReusedError, InvalidValueError } from '../../errors/gateway-error.ts';
import type { ClaimResult } from '../../domain/idempotency/idempotency-store.ts';

/** The spec's limit on an Idempotency-Key. */
const MAX_KEY_LENGTH = 255;

/** The spec's lifetime of an idempotency key: afterwards the same key is a new request. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** The `Idempotency-Key` header, validated; null when absent. */
export function readIdempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  if (typeof header !== 'string') throw new IdempotencyKeyInvalidError(0);
  if (header.length === 0 || header.length > MAX_KEY_LENGTH) throw new IdempotencyKeyInvalidError(header.length);
  return header;
}

/** The `Last-Event-ID` of a resuming SSE client: events after it are sent. */
export function readLastEventId(header: string | string[] | undefined): number {
  if (header === undefined) return 0;
  if (typeof header !== 'string' || !/^\d{1,15}$/.test(header)) throw new InvalidValueError('Last-Event-ID', 'Last-Event-ID must be the id of an event this gateway sent.');
  return Number(header);
}

/** What to do with a request that carries a key: run it, or relay the events of the request that owns the key. */
export type IdempotencyDecision = { action: 'run' } | { action: 'relay'; requestId: string; finished: boolean };

/**
 * What the claim found (scope: the tenant): run this request, or relay an earlier one's
 * events (replay a finished one, join one in flight); the same key with another body is a 422.
 */
export function decideClaim(claim: ClaimResult): IdempotencyDecision {
  switch (claim.status) {
    case 'claimed':
      return { action: 'run' };
    case 'mismatch':
      throw new IdempotencyKeyReusedError();
    case 'completed':
      return { action: 'relay', requestId: claim.requestId, finished: true };
    case 'in_flight':
      return { action: 'relay', requestId: claim.requestId, finished: false };
  }
}
