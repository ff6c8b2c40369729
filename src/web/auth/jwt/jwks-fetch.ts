/**
 * Fetches one JWKS document with undici and turns its signing keys into PEM public keys.
 * Every way an identity provider can fail (refused, timed out, non-200, HTML, no keys)
 * becomes one JwksFetchError with a message safe to show a client.
 */
import { createPublicKey } from 'node:crypto';
import { Agent, request } from 'undici';

/** One usable verification key of a key set. */
export interface VerificationKey {
  kid: string;
  kty: 'RSA' | 'EC' | 'OKP';
  /** Curve of EC and OKP keys (`P-256`, `Ed25519`…), null for RSA. */
  crv: string | null;
  /** The JWK's own `alg`, when it pins one. */
  alg: string | null;
  /** SPKI PEM, the form fast-jwt verifies with. */
  pem: string;
}

/** A key set that could not be fetched or used; the message says why, in client-safe words. */
export class JwksFetchError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'JwksFetchError';
  }
}

// A JWKS is a few kilobytes; a bound keeps a misbehaving endpoint from filling memory.
const MAX_BODY_BYTES = 1024 * 1024;
const MIN_RSA_BITS = 2048;

/** An undici dispatcher whose connect, headers and body timeouts are all `timeoutMs`. */
export function createJwksAgent(timeoutMs: number): Agent {
  // Pitfall (DESIGN, get-jwks): a `timeout` fetch option is ignored; only dispatcher timeouts bound a hung IdP.
  return new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connections: 4 });
}

/** The usable signing keys at `url`, by kid; throws JwksFetchError for every kind of outage. */
export async function fetchKeySet(url: string, agent: Agent, timeoutMs: number): Promise<Map<string, VerificationKey>> {
  const body = await download(url, agent, timeoutMs);
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch (error) {
    throw new JwksFetchError('the key set endpoint answered with a body that is not JSON', error);
  }
  const rawKeys = isRecord(document) ? document.keys : undefined;
  if (!Array.isArray(rawKeys) || rawKeys.length === 0) throw new JwksFetchError('the key set endpoint answered without keys');
  const keys = new Map<string, VerificationKey>();
  for (const raw of rawKeys) {
    const key = toVerificationKey(raw);
    if (key && !keys.has(key.kid)) keys.set(key.kid, key);
  }
  if (keys.size === 0) throw new JwksFetchError('the key set holds no usable signing key');
  return keys;
}

async function download(url: string, agent: Agent, timeoutMs: number): Promise<string> {
  let response;
  try {
    // undici's own timers tick at about one second and bound each phase separately; the signal bounds the whole fetch.
    response = await request(url, {
      method: 'GET',
      dispatcher: agent,
      headers: { accept: 'application/jwk-set+json, application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new JwksFetchError(describeFailure(error, timeoutMs), error);
  }
  if (response.statusCode !== 200) {
    await response.body.dump().catch(() => undefined);
    throw new JwksFetchError(`the key set endpoint answered HTTP ${response.statusCode}`);
  }
  try {
    return await readBounded(response.body);
  } catch (error) {
    if (error instanceof JwksFetchError) throw error;
    throw new JwksFetchError(describeFailure(error, timeoutMs), error);
  }
}

async function readBounded(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      body.destroy();
      throw new JwksFetchError(`the key set is larger than ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Client-safe words for an undici or socket failure. */
function describeFailure(error: unknown, timeoutMs: number): string {
  const code = isRecord(error) ? error.code : undefined;
  const name = error instanceof Error ? error.name : '';
  if (code === 'ECONNREFUSED') return 'the key set endpoint refused the connection';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return `the key set endpoint did not accept a connection within ${timeoutMs} ms`;
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return `the key set endpoint did not answer within ${timeoutMs} ms`;
  if (code === 'UND_ERR_BODY_TIMEOUT') return `the key set endpoint stalled for ${timeoutMs} ms while sending the key set`;
  if (name === 'TimeoutError' || name === 'AbortError') return `the key set endpoint did not answer within ${timeoutMs} ms`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return "the key set endpoint's host name does not resolve";
  return 'the key set endpoint could not be reached';
}

function toVerificationKey(raw: unknown): VerificationKey | null {
  if (!isRecord(raw) || typeof raw.kid !== 'string' || raw.kid === '') return null;
  if (raw.use !== undefined && raw.use !== 'sig') return null;
  if (raw.kty !== 'RSA' && raw.kty !== 'EC' && raw.kty !== 'OKP') return null;
  // A published private key (`d`) means anyone can sign: refuse it rather than derive its public half.
  if ('d' in raw) return null;
  try {
    const key = createPublicKey({ key: raw, format: 'jwk' });
    const bits = key.asymmetricKeyDetails?.modulusLength;
    if (raw.kty === 'RSA' && (bits === undefined || bits < MIN_RSA_BITS)) return null;
    const pem = key.export({ type: 'spki', format: 'pem' }).toString();
    const crv = typeof raw.crv === 'string' ? raw.crv : null;
    return { kid: raw.kid, kty: raw.kty, crv, alg: typeof raw.alg === 'string' ? raw.alg : null, pem };
  } catch {
    return null;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
