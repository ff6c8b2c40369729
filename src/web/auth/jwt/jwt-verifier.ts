/**
 * Verifies bearer JWTs against the JWKS of allow-listed issuers and resolves them to principals.
 * Order matters: the untrusted header and payload only pick the algorithm, issuer and kid, each
 * checked against configuration before any network call; the signature and claims come last.
 */
import type { Algorithm } from 'fast-jwt';
import { ConfigError, type Env } from '../../../config.ts';
import { InvalidTokenError } from '../../../errors/gateway-error.ts';
import type { Principal } from '../../../domain/access/roles.ts';
import { JwksCache } from './jwks-cache.ts';
import { keyFitsAlgorithm, principalFromClaims, verifySignedClaims, type ClaimRules } from './token-claims.ts';
import { decodeUntrusted } from './untrusted-token.ts';

export { looksLikeJwt } from './untrusted-token.ts';

/** The environment variables JWT verification reads. */
export type JwtEnv = Pick<
  Env,
  | 'JWT_ISSUERS'
  | 'JWT_JWKS_URL'
  | 'JWT_AUDIENCE'
  | 'JWT_ALGORITHMS'
  | 'JWT_TENANT_CLAIM'
  | 'JWT_ROLE_CLAIM'
  | 'JWT_CLOCK_SKEW_S'
  | 'JWKS_CACHE_TTL_MS'
  | 'JWKS_REFETCH_INTERVAL_MS'
  | 'JWKS_TIMEOUT_MS'
>;

/** Verifies JWTs; `close` stops the JWKS dispatcher. */
export interface JwtVerifier {
  /** The principal of a valid token; InvalidTokenError (401) or JwksUnavailableError (503) otherwise. */
  verify(token: string): Promise<Principal>;
  close(): Promise<void>;
}

// Pitfall (DESIGN, fast-jwt): pin asymmetric algorithms; `none` and HS* are never accepted, whatever the configuration says.
const ASYMMETRIC: ReadonlySet<string> = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']);
const MAX_KID_LENGTH = 256;

/** A verifier for the configured issuers, or null when JWT_ISSUERS is unset (API keys only). */
export function createJwtVerifier(env: JwtEnv, options: { now?: () => number } = {}): JwtVerifier | null {
  if (!env.JWT_ISSUERS) return null;
  const now = options.now ?? Date.now;
  const jwksUrls = jwksUrlsOf(env.JWT_ISSUERS, env.JWT_JWKS_URL);
  const algorithms = new Set(
    env.JWT_ALGORITHMS.split(',')
      .map((alg) => alg.trim())
      .filter((alg) => ASYMMETRIC.has(alg)),
  );
  const cache = new JwksCache({
    jwksUrls,
    ttlMs: env.JWKS_CACHE_TTL_MS,
    refetchIntervalMs: env.JWKS_REFETCH_INTERVAL_MS,
    timeoutMs: env.JWKS_TIMEOUT_MS,
    now,
  });
  const rules = (issuer: string): ClaimRules => ({
    issuer,
    audience: env.JWT_AUDIENCE ?? null,
    clockSkewMs: env.JWT_CLOCK_SKEW_S * 1000,
    tenantClaim: env.JWT_TENANT_CLAIM,
    roleClaim: env.JWT_ROLE_CLAIM,
  });
  return {
    async verify(token: string): Promise<Principal> {
      const { header, payload } = decodeUntrusted(token);
      const alg = allowedAlgorithm(header.alg, algorithms);
      const issuer = allowedIssuer(payload.iss, jwksUrls);
      const kid = keyId(header.kid);
      const key = await cache.getKey(issuer, kid);
      if (!key) throw new InvalidTokenError('unknown_key', "The token's key id (kid) is not in the identity provider's key set.");
      if (!keyFitsAlgorithm(key, alg)) throw new InvalidTokenError('algorithm_not_allowed', "The token's algorithm does not match its key.");
      const claims = verifySignedClaims(token, key, alg, rules(issuer), now());
      return principalFromClaims(claims, rules(issuer));
    },
    close: () => cache.close(),
  };
}

/** Issuer → JWKS URL; the issuer strings are kept exactly as configured because `iss` is compared exactly. */
function jwksUrlsOf(issuersSetting: string, jwksUrl: string | undefined): Map<string, string> {
  const issuers = [
    ...new Set(
      issuersSetting
        .split(',')
        .map((issuer) => issuer.trim())
        .filter(Boolean),
    ),
  ];
  if (issuers.length === 0) throw new ConfigError('Invalid environment variable JWT_ISSUERS: name at least one issuer URL.');
  if (jwksUrl !== undefined && issuers.length > 1) {
    throw new ConfigError('Invalid environment variable JWT_JWKS_URL: it applies to a single issuer; JWT_ISSUERS names several.');
  }
  const urls = new Map<string, string>();
  for (const issuer of issuers) {
    if (!/^https?:\/\/[^\s/]+/.test(issuer) || !URL.canParse(issuer)) {
      throw new ConfigError(`Invalid environment variable JWT_ISSUERS: ${JSON.stringify(issuer)} is not an http(s) URL.`);
    }
    urls.set(issuer, jwksUrl ?? `${issuer.replace(/\/+$/, '')}/.well-known/jwks.json`);
  }
  return urls;
}

function allowedAlgorithm(alg: unknown, algorithms: ReadonlySet<string>): Algorithm {
  if (typeof alg !== 'string' || !algorithms.has(alg)) {
    throw new InvalidTokenError('algorithm_not_allowed', `The token's algorithm is not accepted; accepted: ${[...algorithms].join(', ')}.`);
  }
  return alg as Algorithm;
}

function allowedIssuer(iss: unknown, jwksUrls: ReadonlyMap<string, string>): string {
  if (typeof iss !== 'string') throw new InvalidTokenError('missing_claim', 'The token has no iss claim, which is required.');
  if (!jwksUrls.has(iss)) throw new InvalidTokenError('issuer_not_allowed', "The token's issuer (iss) is not accepted.");
  return iss;
}

function keyId(kid: unknown): string {
  if (typeof kid !== 'string' || kid === '' || kid.length > MAX_KID_LENGTH) {
    throw new InvalidTokenError('unknown_key', "The token's header names no usable key id (kid).");
  }
  return kid;
}
