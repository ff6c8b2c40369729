/** API key secrets: generation and the one hash the store and the web tier agree on. */
import { hash, randomBytes } from 'node:crypto';
import { ulid } from 'ulid';

/** Prefix of every secret, so a leaked key is recognisable by secret scanners. */
export const API_KEY_SECRET_PREFIX = 'gwk_';

/** A new key: its public id, the secret shown once, and the hash that is stored. */
export interface GeneratedApiKey {
  id: string;
  secret: string;
  secretHash: string;
}

/** SHA-256 (hex) of the whole secret string, prefix included; one-shot, as every request's key is hashed (half the cost of a Hash object). */
export function hashApiKeySecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Makes a key id (`key_<ulid>`) and a 256-bit secret (`gwk_<base64url>`) with its hash. */
export function generateApiKey(): GeneratedApiKey {
  const secret = API_KEY_SECRET_PREFIX + randomBytes(32).toString('base64url');
  return { id: `key_${ulid().toLowerCase()}`, secret, secretHash: hashApiKeySecret(secret) };
}
