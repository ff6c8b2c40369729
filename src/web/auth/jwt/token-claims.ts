/** Signature and claim checks of a JWT (fast-jwt), and the principal its claims name. */
import { createVerifier, TokenError, type Algorithm } from 'fast-jwt';
import { InvalidTokenError, type InvalidTokenReason } from '../../../errors/gateway-error.ts';
import { ROLES, type Role } from '../../../infra/store/repository.ts';
import { JWT_KEY_ID_PREFIX, type Principal } from '../../../domain/access/roles.ts';
import type { VerificationKey } from './jwks-fetch.ts';
import { TENANT_ID_PATTERN } from '../../../domain/tenants/tenant-id.ts';

/** What a token must satisfy besides its signature. */
export interface ClaimRules {
  issuer: string;
  audience: string | null;
  clockSkewMs: number;
  tenantClaim: string;
  roleClaim: string;
}

const EC_CURVES: Record<string, string> = { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' };
const EDDSA_CURVES = new Set(['Ed25519', 'Ed448']);

/** Whether `key` may verify a token signed with `alg` (key type, curve and the JWK's own `alg`). */
export function keyFitsAlgorithm(key: VerificationKey, alg: string): boolean {
  if (alg === 'EdDSA')
    return key.kty === 'OKP' && key.crv !== null && EDDSA_CURVES.has(key.crv) && (key.alg === null || key.alg === 'EdDSA' || key.alg === key.crv);
  if (key.alg !== null && key.alg !== alg) return false;
  if (/^(RS|PS)(256|384|512)$/.test(alg)) return key.kty === 'RSA';
  return key.kty === 'EC' && EC_CURVES[alg] !== undefined && key.crv === EC_CURVES[alg];
}

/** The verified payload of `token`, checked at time `nowMs`; throws InvalidTokenError for every failure. */
export function verifySignedClaims(token: string, key: VerificationKey, alg: Algorithm, rules: ClaimRules, nowMs: number): Record<string, unknown> {
  // Pitfall (DESIGN, fast-jwt): without requiredClaims a token with no exp passes, without allowedIss/allowedAud any
  // iss/aud passes, and the clock tolerance defaults to 0. The verifier is per call so that the clock is injectable.
  const required = rules.audience === null ? ['exp', 'iss'] : ['exp', 'iss', 'aud'];
  const verify = createVerifier({
    key: key.pem,
    algorithms: [alg],
    allowedIss: rules.issuer,
    ...(rules.audience === null ? {} : { allowedAud: rules.audience }),
    requiredClaims: required,
    clockTolerance: rules.clockSkewMs,
    clockTimestamp: nowMs,
  });
  let payload: unknown;
  try {
    payload = verify(token);
  } catch (error) {
    throw toInvalidToken(error, token, required);
  }
  const claims = payload as Record<string, unknown>;
  checkIssuedAt(claims, rules.clockSkewMs, nowMs);
  return claims;
}

/** The principal named by verified claims: a tenant id and a known role are required. */
export function principalFromClaims(claims: Record<string, unknown>, rules: ClaimRules): Principal {
  const tenant = claims[rules.tenantClaim];
  const role = claims[rules.roleClaim];
  if (tenant === undefined) throw new InvalidTokenError('missing_claim', `The token has no '${rules.tenantClaim}' claim naming the tenant.`);
  if (typeof tenant !== 'string' || !TENANT_ID_PATTERN.test(tenant))
    throw new InvalidTokenError('invalid_claim', `The token's '${rules.tenantClaim}' claim is not a valid tenant id.`);
  if (role === undefined) throw new InvalidTokenError('missing_claim', `The token has no '${rules.roleClaim}' claim naming the role.`);
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
    throw new InvalidTokenError('invalid_claim', `The token's '${rules.roleClaim}' claim is not one of the roles ${ROLES.join(', ')}.`);
  }
  const subject = typeof claims.sub === 'string' ? claims.sub : typeof claims.jti === 'string' ? claims.jti : 'unknown';
  return { tenantId: tenant, role: role as Role, keyId: `${JWT_KEY_ID_PREFIX}${subject}` };
}

function checkIssuedAt(claims: Record<string, unknown>, clockSkewMs: number, nowMs: number): void {
  const iat = claims.iat;
  if (iat === undefined) return;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw new InvalidTokenError('invalid_claim', "The token's iat claim is not a number.");
  if (iat * 1000 > nowMs + clockSkewMs) throw new InvalidTokenError('not_yet_valid', 'The token was issued in the future (iat).');
}

const CLAIM_REASONS: Record<string, InvalidTokenReason> = { aud: 'audience_mismatch', iss: 'issuer_not_allowed' };
const CLAIM_WORDS: Record<string, string> = {
  aud: "The token's audience (aud) is not this gateway.",
  iss: "The token's issuer (iss) is not accepted.",
};

/** One 401 per fast-jwt failure; anything unexpected from crypto counts as a bad signature, never a 500. */
function toInvalidToken(error: unknown, token: string, required: string[]): InvalidTokenError {
  if (!(error instanceof TokenError)) return new InvalidTokenError('bad_signature', "The token's signature could not be verified.", error);
  const codes = TokenError.codes;
  switch (error.code) {
    case codes.expired:
      return new InvalidTokenError('expired', 'The token has expired (exp).', error);
    case codes.inactive:
      return new InvalidTokenError('not_yet_valid', 'The token is not valid yet (nbf).', error);
    case codes.invalidSignature:
    case codes.verifyError:
    case codes.missingSignature:
      return new InvalidTokenError('bad_signature', "The token's signature is invalid.", error);
    case codes.invalidAlgorithm:
    case codes.invalidKey:
      return new InvalidTokenError('algorithm_not_allowed', "The token's algorithm does not match its key.", error);
    case codes.missingRequiredClaim:
      return missingClaim(token, required, error);
    case codes.invalidClaimValue:
    case codes.invalidClaimType:
      return invalidClaim(error);
    default:
      return new InvalidTokenError('malformed', 'The token is malformed.', error);
  }
}

function missingClaim(token: string, required: string[], error: TokenError): InvalidTokenError {
  // fast-jwt decoded this payload already, so it parses; the claim name is ours, not the token's.
  const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  const claim = required.find((name) => !(name in payload)) ?? 'exp';
  return new InvalidTokenError('missing_claim', `The token has no ${claim} claim, which is required.`, error);
}

function invalidClaim(error: TokenError): InvalidTokenError {
  // fast-jwt names the claim only in its message ("The aud claim value is not allowed.").
  const claim = /^The (\w+) claim/.exec(error.message)?.[1] ?? '';
  const reason = CLAIM_REASONS[claim];
  if (reason) return new InvalidTokenError(reason, CLAIM_WORDS[claim] as string, error);
  const named = ['exp', 'nbf', 'iat'].includes(claim) ? `${claim} claim has` : 'claims have';
  return new InvalidTokenError('invalid_claim', `The token's ${named} an invalid type or value.`, error);
}
