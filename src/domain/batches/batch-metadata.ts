import { InvalidValueError } from '../../errors/gateway-error.ts';

// OpenAI's bounds on an object's metadata.
const MAX_PAIRS = 16;
const MAX_KEY = 64;
const MAX_VALUE = 512;

/** A batch's `metadata` as OpenAI bounds it (16 pairs, 64-character keys, 512-character string values); absent or null: none. */
export function readMetadata(value: unknown): Record<string, string> | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidValueError('metadata', "'metadata' must be an object of string values.");
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_PAIRS) throw new InvalidValueError('metadata', `'metadata' may have at most ${MAX_PAIRS} pairs; it has ${entries.length}.`);
  for (const [key, item] of entries) {
    if (key.length > MAX_KEY)
      throw new InvalidValueError('metadata', `A 'metadata' key may have at most ${MAX_KEY} characters; '${key.slice(0, 20)}…' has ${key.length}.`);
    if (typeof item !== 'string') throw new InvalidValueError('metadata', `'metadata.${key}' must be a string.`);
    if (item.length > MAX_VALUE) throw new InvalidValueError('metadata', `'metadata.${key}' may have at most ${MAX_VALUE} characters; it has ${item.length}.`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}
