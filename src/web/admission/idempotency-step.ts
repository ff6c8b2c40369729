import { IdempotencyKeyInvalidError, InvalidValueError } from '../../errors/gateway-error.ts';

/** The spec's limit on an Idempotency-Key. */
const MAX_KEY_LENGTH = 255;

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
  if (typeof header !== 'string' || !/^\d{1,15}$/.test(header))
    throw new InvalidValueError('Last-Event-ID', 'Last-Event-ID must be the id of an event this gateway sent.');
  return Number(header);
}
