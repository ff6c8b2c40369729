/**
 * A real loopback identity provider for tests, with keys made by `jose`: serves
 * `/.well-known/jwks.json` (RS256, ES256 and EdDSA keys), counts fetches, can rotate its keys,
 * stop listening (connection refused), hang, answer 500 or an HTML page, and signs tokens with
 * any claims and header, forged ones included (alg none, HS256 keyed with the public key).
 * In-process: `const idp = await startJwksServer()`; point JWT_ISSUERS at `idp.issuer`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/** The asymmetric algorithms the server holds keys for. */
export type SigningAlg = 'RS256' | 'ES256' | 'EdDSA';

/** How the JWKS endpoint answers: `ok` serves the keys; the others simulate an outage. */
export type JwksMode = 'ok' | 'hang' | 'error-500' | 'html' | 'not-json' | 'no-keys';

/** How to sign one token. */
export interface SignOptions {
  alg?: SigningAlg;
  /** The header's kid; defaults to the current key's. */
  kid?: string;
  /** Extra (or overriding) protected header members. */
  header?: Record<string, unknown>;
  /** `foreign`: a key the server never published (same kid): a bad signature. */
  signWith?: 'current' | 'foreign';
}

interface KeyPair {
  kid: string;
  alg: SigningAlg;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
}

const ALGS: readonly SigningAlg[] = ['RS256', 'ES256', 'EdDSA'];

/** A running loopback identity provider. */
export interface JwksServer {
  /** `http://127.0.0.1:<port>`: the `iss` of its tokens; the JWKS is at `<issuer>/.well-known/jwks.json`. */
  readonly issuer: string;
  readonly jwksUrl: string;
  /** Requests received on the JWKS path since start (any mode). */
  fetchCount(): number;
  /** The current kid for `alg`. */
  kid(alg?: SigningAlg): string;
  setMode(mode: JwksMode): void;
  /** New key pairs for every algorithm; the old ones stay published only with `keepPrevious`. */
  rotate(options?: { keepPrevious?: boolean }): Promise<void>;
  /** Valid default claims (iss, sub, tenant, role, iat, exp in 5 min); an override of `undefined` removes a claim. */
  claims(overrides?: Record<string, unknown>): JWTPayload;
  sign(claims: JWTPayload, options?: SignOptions): Promise<string>;
  /** An unsigned token (`alg: none`, empty signature). */
  signNone(claims: JWTPayload, header?: Record<string, unknown>): string;
  /** The classic confusion attack: HS256 keyed with the PEM of the published public key of `alg`. */
  signHs256WithPublicKey(claims: JWTPayload, alg?: SigningAlg): Promise<string>;
  /** Stops listening: fetches get connection refused. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the identity provider on 127.0.0.1 (port 0 unless given). */
export async function startJwksServer(port = 0): Promise<JwksServer> {
  const server = new LoopbackIdp();
  await server.init(port);
  return server;
}

async function newKeyPair(alg: SigningAlg): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `${alg.toLowerCase()}-${randomUUID()}`;
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, jwk };
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

class LoopbackIdp implements JwksServer {
  issuer = '';
  jwksUrl = '';
  #port = 0;
  #fetches = 0;
  #mode: JwksMode = 'ok';
  #current = new Map<SigningAlg, KeyPair>();
  #published: KeyPair[] = [];
  readonly #foreign = new Map<SigningAlg, KeyPair>();
  readonly #hanging = new Set<ServerResponse>();
  readonly #server = createServer((req, res) => this.#handle(req.url ?? '/', res));

  async init(port: number): Promise<void> {
    await this.rotate();
    await this.#listen(port);
    this.#port = (this.#server.address() as AddressInfo).port;
    this.issuer = `http://127.0.0.1:${this.#port}`;
    this.jwksUrl = `${this.issuer}/.well-known/jwks.json`;
  }

  fetchCount(): number {
    return this.#fetches;
  }

  kid(alg: SigningAlg = 'RS256'): string {
    return (this.#current.get(alg) as KeyPair).kid;
  }

  setMode(mode: JwksMode): void {
    this.#mode = mode;
  }

  async rotate(options: { keepPrevious?: boolean } = {}): Promise<void> {
    const pairs = await Promise.all(ALGS.map(newKeyPair));
    this.#current = new Map(pairs.map((pair) => [pair.alg, pair]));
    this.#published = options.keepPrevious ? [...pairs, ...this.#published] : pairs;
  }

  claims(overrides: Record<string, unknown> = {}): JWTPayload {
    const now = Math.floor(Date.now() / 1000);
    const merged: Record<string, unknown> = { iss: this.issuer, sub: 'user-1', tenant: 'acme', role: 'developer', iat: now, exp: now + 300, ...overrides };
    for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
    return merged;
  }

  async sign(claims: JWTPayload, options: SignOptions = {}): Promise<string> {
    const alg = options.alg ?? 'RS256';
    const pair = options.signWith === 'foreign' ? await this.#foreignPair(alg) : (this.#current.get(alg) as KeyPair);
    const header: Record<string, unknown> = { alg, kid: options.kid ?? this.kid(alg), typ: 'JWT', ...options.header };
    // jose refuses to sign an unknown `crit` extension unless told it is understood.
    const crit = Array.isArray(header.crit) ? Object.fromEntries(header.crit.map((name: unknown) => [String(name), true])) : undefined;
    // jose fills no claim by itself: the claims are exactly what the test passed (no exp means no exp).
    return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(pair.privateKey, crit ? { crit } : undefined);
  }

  signNone(claims: JWTPayload, header: Record<string, unknown> = {}): string {
    return `${base64url({ alg: 'none', typ: 'JWT', ...header })}.${base64url(claims)}.`;
  }

  async signHs256WithPublicKey(claims: JWTPayload, alg: SigningAlg = 'RS256'): Promise<string> {
    const pair = this.#current.get(alg) as KeyPair;
    const secret = new TextEncoder().encode(await exportSPKI(pair.publicKey));
    return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: pair.kid, typ: 'JWT' }).sign(secret);
  }

  async stop(): Promise<void> {
    this.#releaseHanging();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async start(): Promise<void> {
    await this.#listen(this.#port);
  }

  async close(): Promise<void> {
    if (this.#server.listening) await this.stop();
  }

  #listen(port: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, '127.0.0.1', () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
  }

  async #foreignPair(alg: SigningAlg): Promise<KeyPair> {
    const existing = this.#foreign.get(alg);
    if (existing) return existing;
    const pair = await newKeyPair(alg);
    this.#foreign.set(alg, pair);
    return pair;
  }

  #handle(url: string, res: ServerResponse): void {
    if (url.split('?')[0] !== '/.well-known/jwks.json') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    this.#fetches++;
    this.#answer(res);
  }

  #answer(res: ServerResponse): void {
    switch (this.#mode) {
      case 'ok':
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: this.#published.map((pair) => pair.jwk) }));
        return;
      case 'hang':
        this.#hanging.add(res);
        res.on('close', () => this.#hanging.delete(res));
        return;
      case 'error-500':
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"internal"}');
        return;
      case 'html':
        res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html><body><h1>Maintenance</h1></body></html>');
        return;
      case 'not-json':
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": [');
        return;
      case 'no-keys':
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}');
        return;
    }
  }

  #releaseHanging(): void {
    for (const res of this.#hanging) res.destroy();
    this.#hanging.clear();
  }
}
