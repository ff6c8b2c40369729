/** Decoding of a compact JWT's header and payload before anything in them is trusted. */
import { InvalidTokenError } from '../../../errors/gateway-error.ts';

/** Header and payload of a token whose signature is not verified yet: hints only. */
export interface UntrustedToken {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
}

// Real tokens are a few kilobytes; the bound keeps decoding cheap for hostile input.
const MAX_TOKEN_LENGTH = 16 * 1024;
// The signature part may be empty so that `alg: none` tokens reach the JWT path and get its precise 401.
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Whether a bearer token has the shape of a compact JWT (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return token.length <= MAX_TOKEN_LENGTH && COMPACT_JWS.test(token);
}

/** Header and payload of a compact JWT; throws InvalidTokenError('malformed') for anything else. */
export function decodeUntrusted(token: string): UntrustedToken {
  if (!looksLikeJwt(token)) throw malformed('The token is not a compact JWT (three base64url parts).');
  const [headerPart, payloadPart] = token.split('.') as [string, string, string];
  return { header: decodePart(headerPart, 'header'), payload: decodePart(payloadPart, 'payload') };
}

function decodePart(part: string, what: 'header' | 'payload'): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw malformed(`The token's ${what} is not base64url-encoded JSON.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw malformed(`The token's ${what} is not a JSON object.`);
  return value as Record<string, unknown>;
}

function malformed(message: string): InvalidTokenError {
  return new InvalidTokenError('malformed', message);
}
