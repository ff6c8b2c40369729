import { InvalidValueError } from '../../errors/gateway-error.ts';

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Midnight UTC of a `YYYY-MM-DD` day; a malformed or impossible date (2026-02-30) is a 400 naming `param`. */
export function parseDay(param: string, value: string): Date {
  const match = DAY.exec(value);
  const date = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : null;
  if (!date || date.toISOString().slice(0, 10) !== value) {
    throw new InvalidValueError(param, `'${param}' must be a date in the form YYYY-MM-DD; got '${value}'.`);
  }
  return date;
}

/** A `YYYY-MM-DD` day or a full ISO 8601 time; a 400 naming `param` otherwise. */
export function parseTime(param: string, value: string): Date {
  if (DAY.test(value)) return parseDay(param, value);
  const time = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(time.getTime())) {
    throw new InvalidValueError(param, `'${param}' must be a date (YYYY-MM-DD) or an ISO 8601 time; got '${value}'.`);
  }
  return time;
}

/** The day after `date`: `until=YYYY-MM-DD` includes that whole day. */
export function nextDay(date: Date): Date {
  return new Date(date.getTime() + 86_400_000);
}

/** A page size from 1 to `max` (default `fallback`); a 400 naming `limit` otherwise. */
export function parseLimit(value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const limit = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= max)) throw new InvalidValueError('limit', `'limit' must be an integer from 1 to ${max}; got '${value}'.`);
  return limit;
}

/** An opaque cursor for the client. */
export function encodeCursor(parts: readonly string[]): string {
  return Buffer.from(parts.join('\n')).toString('base64url');
}

/** The parts of a cursor made by encodeCursor; a 400 naming `cursor` when it is not one. */
export function decodeCursor(value: string, count: number): string[] {
  const parts = Buffer.from(value, 'base64url').toString('utf8').split('\n');
  if (parts.length !== count || parts.some((part) => part === '')) throw new InvalidValueError('cursor', "'cursor' is not a cursor this endpoint returned.");
  return parts;
}
