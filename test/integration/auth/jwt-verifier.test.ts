/** JWT verification against a real loopback JWKS server (keys made with jose), with a controllable clock. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JWTPayload } from 'jose';
import { createJwtVerifier, looksLikeJwt, type JwtVerifier } from '../../../src/web/auth/jwt/jwt-verifier.ts';
import { ConfigError, loadConfig, type Env } from '../../../src/config.ts';
import { InvalidTokenError, JwksUnavailableError, type InvalidTokenReason } from '../../../src/errors/gateway-error.ts';
import { startJwksServer, type JwksServer, type SigningAlg } from '../../helpers/jwks-server.ts';

const INTERVAL_MS = 10_000;
const TTL_MS = 600_000;
let idp: JwksServer;
let otherIdp: JwksServer;
const open: JwtVerifier[] = [];

beforeAll(async () => {
  [idp, otherIdp] = await Promise.all([startJwksServer(), startJwksServer()]);
});

afterAll(async () => {
  await Promise.all([idp?.close(), otherIdp?.close()]);
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((verifier) => verifier.close()));
  idp.setMode('ok');
  if (!(await reachable(idp.jwksUrl))) await idp.start();
});

async function reachable(url: string): Promise<boolean> {
  return fetch(url).then(
    () => true,
    () => false,
  );
}

function env(overrides: Record<string, string> = {}): Env {
  return loadConfig({
    REDIS_URL: 'redis://127.0.0.1:6379',
    CATALOG: 'catalog.yaml',
    DATABASE_URL: 'postgres://127.0.0.1/unused',
    JWT_ISSUERS: idp.issuer,
    JWKS_CACHE_TTL_MS: String(TTL_MS),
    JWKS_REFETCH_INTERVAL_MS: String(INTERVAL_MS),
    JWKS_TIMEOUT_MS: '300',
    ...overrides,
  }).env;
}

/** A verifier on a clock the test moves by hand. */
function verifierWithClock(overrides: Record<string, string> = {}): { verifier: JwtVerifier; advance(ms: number): void } {
  let now = Date.now();
  const verifier = createJwtVerifier(env(overrides), { now: () => now }) as JwtVerifier;
  open.push(verifier);
  return { verifier, advance: (ms) => void (now += ms) };
}

/** The rejection of `promise`; fails the test unless it is one of the two errors the verifier may throw (never a 500). */
async function rejection(promise: Promise<unknown>): Promise<InvalidTokenError | JwksUnavailableError> {
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof InvalidTokenError) && !(error instanceof JwksUnavailableError)) throw error;
  return error;
}

async function expect401(verifier: JwtVerifier, token: string, reason: InvalidTokenReason): Promise<void> {
  const error = await rejection(verifier.verify(token));
  expect(error).toBeInstanceOf(InvalidTokenError);
  expect({ status: error.status, type: error.type, code: error.code, reason: (error as InvalidTokenError).reason }).toEqual({
    status: 401,
    type: 'authentication_error',
    code: 'invalid_token',
    reason,
  });
  expect(error.message).not.toContain(token.split('.')[1] ?? token);
}

async function expect503(verifier: JwtVerifier, token: string): Promise<JwksUnavailableError> {
  const error = await rejection(verifier.verify(token));
  expect(error).toBeInstanceOf(JwksUnavailableError);
  expect({ status: error.status, type: error.type, code: error.code }).toEqual({ status: 503, type: 'api_error', code: 'jwks_unavailable' });
  expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  return error;
}

const seconds = (offset: number): number => Math.floor(Date.now() / 1000) + offset;

describe('createJwtVerifier: configuration', () => {
  it('is null when JWT_ISSUERS is unset (API keys only)', () => {
    const { JWT_ISSUERS: _unset, ...rest } = env();
    expect(createJwtVerifier(rest)).toBeNull();
  });

  it('refuses JWT_JWKS_URL with several issuers, and an issuer that is not a URL', () => {
    expect(() => createJwtVerifier(env({ JWT_ISSUERS: `${idp.issuer},${otherIdp.issuer}`, JWT_JWKS_URL: idp.jwksUrl }))).toThrow(ConfigError);
    expect(() => createJwtVerifier(env({ JWT_ISSUERS: 'not a url' }))).toThrow(ConfigError);
  });

  it('looksLikeJwt: three base64url parts (the signature may be empty)', () => {
    expect(looksLikeJwt('eyJh.eyJi.c2ln')).toBe(true);
    expect(looksLikeJwt('eyJh.eyJi.')).toBe(true);
    expect(looksLikeJwt('gwk_abc123')).toBe(false);
    expect(looksLikeJwt('a.b')).toBe(false);
    expect(looksLikeJwt('a.b.c.d')).toBe(false);
    expect(looksLikeJwt('a+b.c.d')).toBe(false);
  });
});

describe('JwtVerifier: valid tokens', () => {
  it.each<SigningAlg>(['RS256', 'ES256', 'EdDSA'])('%s resolves to the principal', async (alg) => {
    const { verifier } = verifierWithClock();
    const token = await idp.sign(idp.claims({ tenant: 'acme', role: 'app', sub: 'svc-7' }), { alg });
    await expect(verifier.verify(token)).resolves.toEqual({ tenantId: 'acme', role: 'app', keyId: 'jwt:svc-7' });
  });

  it('keyId falls back to jti, then to unknown', async () => {
    const { verifier } = verifierWithClock();
    await expect(verifier.verify(await idp.sign(idp.claims({ sub: undefined, jti: 'tok-1' })))).resolves.toMatchObject({ keyId: 'jwt:tok-1' });
    await expect(verifier.verify(await idp.sign(idp.claims({ sub: undefined })))).resolves.toMatchObject({ keyId: 'jwt:unknown' });
  });

  it('honours custom claim names and an audience (string or array)', async () => {
    const { verifier } = verifierWithClock({ JWT_TENANT_CLAIM: 'org', JWT_ROLE_CLAIM: 'gw_role', JWT_AUDIENCE: 'llm-gateway' });
    const claims = idp.claims({ tenant: undefined, role: undefined, org: 'globex', gw_role: 'auditor', aud: ['other', 'llm-gateway'] });
    await expect(verifier.verify(await idp.sign(claims))).resolves.toEqual({ tenantId: 'globex', role: 'auditor', keyId: 'jwt:user-1' });
  });

  it('uses JWT_JWKS_URL when the keys are not under the issuer', async () => {
    const issuer = 'https://login.example.com/tenant-x';
    const { verifier } = verifierWithClock({ JWT_ISSUERS: issuer, JWT_JWKS_URL: idp.jwksUrl });
    await expect(verifier.verify(await idp.sign(idp.claims({ iss: issuer })))).resolves.toMatchObject({ tenantId: 'acme' });
  });

  it('accepts exp and nbf within the clock skew', async () => {
    const { verifier } = verifierWithClock({ JWT_CLOCK_SKEW_S: '30' });
    await expect(verifier.verify(await idp.sign(idp.claims({ exp: seconds(-10) })))).resolves.toMatchObject({ tenantId: 'acme' });
    await expect(verifier.verify(await idp.sign(idp.claims({ nbf: seconds(10), iat: seconds(10) })))).resolves.toMatchObject({ tenantId: 'acme' });
  });
});

describe('JwtVerifier: every refusal is a 401 invalid_token with the rule named', () => {
  const cases: Array<[string, (server: JwksServer) => Promise<string> | string, InvalidTokenReason]> = [
    ['alg none', (s) => s.signNone(s.claims(), { kid: s.kid() }), 'algorithm_not_allowed'],
    ['HS256 keyed with the RSA public key', (s) => s.signHs256WithPublicKey(s.claims(), 'RS256'), 'algorithm_not_allowed'],
    ['HS256 keyed with the EC public key', (s) => s.signHs256WithPublicKey(s.claims(), 'ES256'), 'algorithm_not_allowed'],
    ['RS256 header naming the ES256 key', (s) => s.sign(s.claims(), { alg: 'RS256', kid: s.kid('ES256') }), 'algorithm_not_allowed'],
    ['no kid', (s) => s.sign(s.claims(), { header: { kid: undefined } }), 'unknown_key'],
    ['expired beyond the skew', (s) => s.sign(s.claims({ exp: seconds(-60) })), 'expired'],
    ['nbf in the future beyond the skew', (s) => s.sign(s.claims({ nbf: seconds(120) })), 'not_yet_valid'],
    ['iat in the future beyond the skew', (s) => s.sign(s.claims({ iat: seconds(120) })), 'not_yet_valid'],
    ['no exp', (s) => s.sign(s.claims({ exp: undefined })), 'missing_claim'],
    ['exp not a number', (s) => s.sign(s.claims({ exp: 'tomorrow' })), 'invalid_claim'],
    ['no iss', (s) => s.sign(s.claims({ iss: undefined })), 'missing_claim'],
    ['wrong iss', (s) => s.sign(s.claims({ iss: 'https://evil.example' })), 'issuer_not_allowed'],
    ['iss with a trailing slash (exact match)', (s) => s.sign(s.claims({ iss: `${s.issuer}/` })), 'issuer_not_allowed'],
    ['no tenant claim', (s) => s.sign(s.claims({ tenant: undefined })), 'missing_claim'],
    ['no role claim', (s) => s.sign(s.claims({ role: undefined })), 'missing_claim'],
    ['role not in ROLES', (s) => s.sign(s.claims({ role: 'superuser' })), 'invalid_claim'],
    ['tenant not a tenant id', (s) => s.sign(s.claims({ tenant: 'Acme Corp' })), 'invalid_claim'],
    ['tenant not a string', (s) => s.sign(s.claims({ tenant: ['acme'] })), 'invalid_claim'],
    ['signed by a key the IdP never published', (s) => s.sign(s.claims(), { signWith: 'foreign' }), 'bad_signature'],
    ['ES256 signed by a foreign key', (s) => s.sign(s.claims(), { alg: 'ES256', signWith: 'foreign' }), 'bad_signature'],
    ['EdDSA signed by a foreign key', (s) => s.sign(s.claims(), { alg: 'EdDSA', signWith: 'foreign' }), 'bad_signature'],
    ['payload swapped after signing', async (s) => swapPayload(await s.sign(s.claims()), s.claims({ role: 'admin' })), 'bad_signature'],
    ['signature stripped', async (s) => `${(await s.sign(s.claims())).split('.').slice(0, 2).join('.')}.`, 'bad_signature'],
    ['unsupported critical header', (s) => s.sign(s.claims(), { header: { crit: ['x-gw'], 'x-gw': 1 } }), 'malformed'],
    ['not a JWT', () => 'gwk_not_a_jwt', 'malformed'],
    ['two parts', () => 'eyJhbGciOiJSUzI1NiJ9.e30', 'malformed'],
    ['header not JSON', () => 'bm90LWpzb24.e30.c2ln', 'malformed'],
    ['header not an object', () => `${Buffer.from('[1]').toString('base64url')}.e30.c2ln`, 'malformed'],
  ];

  it.each(cases)('%s', async (_name, build, reason) => {
    const { verifier } = verifierWithClock();
    await expect401(verifier, await build(idp), reason);
  });

  it('wrong or missing aud when JWT_AUDIENCE is set', async () => {
    const { verifier } = verifierWithClock({ JWT_AUDIENCE: 'llm-gateway' });
    await expect401(verifier, await idp.sign(idp.claims({ aud: 'someone-else' })), 'audience_mismatch');
    await expect401(verifier, await idp.sign(idp.claims()), 'missing_claim');
  });

  it('alg none and HS256 are refused before any fetch', async () => {
    const { verifier } = verifierWithClock();
    const before = idp.fetchCount();
    await expect401(verifier, idp.signNone(idp.claims(), { kid: idp.kid() }), 'algorithm_not_allowed');
    await expect401(verifier, await idp.signHs256WithPublicKey(idp.claims()), 'algorithm_not_allowed');
    expect(idp.fetchCount()).toBe(before);
  });

  it('an issuer that is not allow-listed is never fetched from', async () => {
    const { verifier } = verifierWithClock();
    const token = await otherIdp.sign(otherIdp.claims());
    await expect401(verifier, token, 'issuer_not_allowed');
    expect(otherIdp.fetchCount()).toBe(0);
  });
});

describe('JwtVerifier: unknown kids', () => {
  it('refetches once for an unknown kid, then answers 401 without fetching again', async () => {
    const { verifier, advance } = verifierWithClock();
    await verifier.verify(await idp.sign(idp.claims()));
    const warm = idp.fetchCount();
    advance(INTERVAL_MS);
    await expect401(verifier, await idp.sign(idp.claims(), { kid: 'no-such-kid' }), 'unknown_key');
    expect(idp.fetchCount()).toBe(warm + 1);
    await expect401(verifier, await idp.sign(idp.claims(), { kid: 'no-such-kid' }), 'unknown_key');
    expect(idp.fetchCount()).toBe(warm + 1);
  });

  it('random kids in a loop fetch at most once per refetch interval', async () => {
    const { verifier, advance } = verifierWithClock();
    await verifier.verify(await idp.sign(idp.claims()));
    const warm = idp.fetchCount();
    const step = INTERVAL_MS / 10;
    for (let i = 0; i < 50; i++) {
      await expect401(verifier, await idp.sign(idp.claims(), { kid: `random-${i}-${Math.random()}` }), 'unknown_key');
      advance(step);
    }
    // 50 steps of a tenth of the interval span 5 intervals.
    expect(idp.fetchCount() - warm).toBeLessThanOrEqual(5);
    expect(idp.fetchCount() - warm).toBeGreaterThanOrEqual(4);
  });

  it('a second kid of an already fetched set costs no fetch', async () => {
    const { verifier } = verifierWithClock();
    await verifier.verify(await idp.sign(idp.claims(), { alg: 'RS256' }));
    const warm = idp.fetchCount();
    await verifier.verify(await idp.sign(idp.claims(), { alg: 'ES256' }));
    await verifier.verify(await idp.sign(idp.claims(), { alg: 'EdDSA' }));
    expect(idp.fetchCount()).toBe(warm);
  });

  it('concurrent verifications on a cold cache share one fetch', async () => {
    const { verifier } = verifierWithClock();
    const tokens = await Promise.all(
      Array.from({ length: 20 }, (_, i) => idp.sign(idp.claims({ sub: `u${i}` }), { alg: (['RS256', 'ES256', 'EdDSA'] as const)[i % 3] })),
    );
    const before = idp.fetchCount();
    const principals = await Promise.all(tokens.map((token) => verifier.verify(token)));
    expect(principals.map((p) => p.keyId)).toEqual(tokens.map((_, i) => `jwt:u${i}`));
    expect(idp.fetchCount()).toBe(before + 1);
  });

  it('concurrent unknown kids share one refetch', async () => {
    const { verifier, advance } = verifierWithClock();
    await verifier.verify(await idp.sign(idp.claims()));
    const warm = idp.fetchCount();
    advance(INTERVAL_MS);
    const tokens = await Promise.all(Array.from({ length: 10 }, (_, i) => idp.sign(idp.claims(), { kid: `rnd-${i}` })));
    const errors = await Promise.all(tokens.map((token) => rejection(verifier.verify(token))));
    expect(errors.every((error) => error instanceof InvalidTokenError && error.reason === 'unknown_key')).toBe(true);
    expect(idp.fetchCount()).toBe(warm + 1);
  });
});

describe('JwtVerifier: key rotation', () => {
  afterEach(async () => idp.rotate());

  it('picks up rotated keys on the next refetch, without a restart', async () => {
    const { verifier, advance } = verifierWithClock();
    const oldToken = await idp.sign(idp.claims());
    await verifier.verify(oldToken);
    await idp.rotate();
    const newToken = await idp.sign(idp.claims());
    advance(INTERVAL_MS);
    await expect(verifier.verify(newToken)).resolves.toMatchObject({ tenantId: 'acme' });
    // The refetched set replaced the old one: the retired key no longer verifies.
    await expect401(verifier, oldToken, 'unknown_key');
  });

  it('keeps verifying old tokens while the IdP still publishes the previous key', async () => {
    const { verifier, advance } = verifierWithClock();
    const oldToken = await idp.sign(idp.claims(), { alg: 'ES256' });
    await verifier.verify(oldToken);
    await idp.rotate({ keepPrevious: true });
    advance(INTERVAL_MS);
    await verifier.verify(await idp.sign(idp.claims(), { alg: 'ES256' }));
    await expect(verifier.verify(oldToken)).resolves.toMatchObject({ tenantId: 'acme' });
  });
});

describe('JwtVerifier: JWKS outages', () => {
  it('JWKS down with an empty cache → 503 jwks_unavailable with Retry-After', async () => {
    const { verifier } = verifierWithClock();
    await idp.stop();
    const error = await expect503(verifier, await idp.sign(idp.claims()));
    expect(error.message).toContain('refused the connection');
    expect(error.retryAfterSeconds).toBe(INTERVAL_MS / 1000);
  });

  it.each([
    ['500', 'error-500', 'HTTP 500'],
    ['an HTML page', 'html', 'not JSON'],
    ['truncated JSON', 'not-json', 'not JSON'],
    ['JSON without keys', 'no-keys', 'without keys'],
  ] as const)('JWKS answering %s with an empty cache → 503', async (_name, mode, words) => {
    const { verifier } = verifierWithClock();
    idp.setMode(mode);
    const error = await expect503(verifier, await idp.sign(idp.claims()));
    expect(error.message).toContain(words);
  });

  it('a hung JWKS endpoint → 503 within the timeout', async () => {
    const { verifier } = verifierWithClock({ JWKS_TIMEOUT_MS: '200' });
    idp.setMode('hang');
    const started = Date.now();
    const error = await expect503(verifier, await idp.sign(idp.claims()));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error.message).toContain('did not answer within 200 ms');
  });

  it('a failed fetch is not retried within the refetch interval (no hammering a failing IdP)', async () => {
    const { verifier, advance } = verifierWithClock();
    idp.setMode('error-500');
    const token = await idp.sign(idp.claims());
    const before = idp.fetchCount();
    await expect503(verifier, token);
    advance(4_000);
    const second = await expect503(verifier, token);
    expect(second.retryAfterSeconds).toBe(6);
    expect(idp.fetchCount()).toBe(before + 1);
    idp.setMode('ok');
    advance(6_000);
    await expect(verifier.verify(token)).resolves.toMatchObject({ tenantId: 'acme' });
    expect(idp.fetchCount()).toBe(before + 2);
  });

  it('JWKS down with a cached key within its TTL → still verifies', async () => {
    const { verifier, advance } = verifierWithClock();
    const token = await idp.sign(idp.claims({ exp: seconds(3_600) }));
    await verifier.verify(token);
    await idp.stop();
    advance(TTL_MS - 1_000);
    await expect(verifier.verify(token)).resolves.toMatchObject({ tenantId: 'acme' });
  });

  it('past the TTL with JWKS down → 503, never the stale key', async () => {
    const { verifier, advance } = verifierWithClock({ JWT_CLOCK_SKEW_S: '0' });
    const token = await idp.sign(idp.claims({ exp: seconds(3_600) }));
    await verifier.verify(token);
    await idp.stop();
    advance(TTL_MS);
    await expect503(verifier, token);
    advance(INTERVAL_MS);
    await expect503(verifier, token);
    await idp.start();
    advance(INTERVAL_MS);
    await expect(verifier.verify(token)).resolves.toMatchObject({ tenantId: 'acme' });
  });

  it('past the TTL with JWKS answering HTML → 503, never the stale key', async () => {
    const { verifier, advance } = verifierWithClock();
    const token = await idp.sign(idp.claims({ exp: seconds(3_600) }));
    await verifier.verify(token);
    idp.setMode('html');
    advance(TTL_MS + 1);
    await expect503(verifier, token);
  });

  it('a set past its TTL is refetched at once even within the refetch interval', async () => {
    const { verifier, advance } = verifierWithClock({ JWKS_CACHE_TTL_MS: '5000', JWKS_REFETCH_INTERVAL_MS: '60000' });
    const token = await idp.sign(idp.claims());
    await verifier.verify(token);
    const warm = idp.fetchCount();
    advance(5_000);
    await verifier.verify(token);
    expect(idp.fetchCount()).toBe(warm + 1);
  });

  it('an unknown kid while the refetch fails → 503 (the set cannot be confirmed), known kids keep working', async () => {
    const { verifier, advance } = verifierWithClock();
    const known = await idp.sign(idp.claims());
    await verifier.verify(known);
    idp.setMode('error-500');
    advance(INTERVAL_MS);
    await expect503(verifier, await idp.sign(idp.claims(), { kid: 'rotated-but-unreachable' }));
    await expect(verifier.verify(known)).resolves.toMatchObject({ tenantId: 'acme' });
  });
});

function swapPayload(token: string, claims: JWTPayload): string {
  const [header, , signature] = token.split('.');
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
}
