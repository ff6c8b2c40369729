import { InvalidApiKeyError } from '../errors/gateway-error.ts';
import { API_KEY_SECRET_PREFIX } from './api-key-secret.ts';
import { bearerToken, type ApiKeyAuthenticator } from './api-key-authenticator.ts';
import type { Principal } from './roles.ts';
import { looksLikeJwt } from './jwt/untrusted-token.ts';

/** Verifies a JWT into a principal (src/auth/jwt). */
export interface TokenVerifier {
  verify(token: string): Promise<Principal>;
}

/**
 * The one entry point of authentication: an opaque API key (`gwk_…`) or, when an identity
 * provider is configured, a JWT; both resolve to the same principal `{tenant, role, key}`.
 */
export class Authenticator {
  readonly #keys: ApiKeyAuthenticator;
  readonly #jwt: TokenVerifier | null;

  constructor(keys: ApiKeyAuthenticator, jwt: TokenVerifier | null) {
    this.#keys = keys;
    this.#jwt = jwt;
  }

  /** The principal of an `Authorization` header; 401 (or 503 when the key set is unreachable) otherwise. */
  async authenticate(header: string | undefined): Promise<Principal> {
    const token = bearerToken(header);
    if (token.startsWith(API_KEY_SECRET_PREFIX)) return this.#keys.authenticate(header);
    if (this.#jwt && looksLikeJwt(token)) return this.#jwt.verify(token);
    throw new InvalidApiKeyError();
  }
}
