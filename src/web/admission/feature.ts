import { InvalidValueError } from '../../errors/gateway-error.ts';

const FEATURE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/** The feature a request belongs to, from `X-Feature` (a short token), or null when absent. */
export function readFeature(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  if (typeof header !== 'string' || !FEATURE.test(header)) {
    throw new InvalidValueError('X-Feature', 'The X-Feature header must be one token of 1–64 letters, digits, or _ . : - (starting with a letter or digit).');
  }
  return header;
}
