import { InvalidApiKeyError, InvalidTokenError } from '../../errors/gateway-error.ts';
import { API_KEY_SECRET_PREFIX } from '../../domain/access/api-key-secret.ts';
import { bearerToken, type ApiKeyAuthenticator } from './api-key-authenticator.ts';
import type { Principal } from '../../domain/access/roles.ts';
import type { TenantStatusCache } from './tenant-status.ts';
import { looksLikeJwt } from './jwt/untrusted-token.ts';

/** Verifies a JWT into a principal (src/web/auth/jwt). */
export interface TokenVerifier {
  verify(token: string): Promise<Principal>;
}

/**
 * The one entry point of authentication: an opaque API key (`gwk_…`) or, when an identity
 * provider is configured, a JWT; both resolve to the same principal `{tenant, role, key}`,
 * and both are refused while their tenant is disabled.
 */
export class Authenticator {
  readonly #keys: ApiKeyAuthenticator;
  readonly #jwt: TokenVerifier | null;
  readonly #tenants: TenantStatusCache;

  constructor(keys: ApiKeyAuthenticator, jwt: TokenVerifier | null, tenants: TenantStatusCache) {
    this.#keys = keys;
    this.#jwt = jwt;
    this.#tenants = tenants;
  }

  /** The principal of an `Authorization` header; 401 (or 503 when the key set or the store is unreachable) otherwise. */
  async authenticate(header: string | undefined): Promise<Principal> {
    const token = bearerToken(header);
    if (token.startsWith(API_KEY_SECRET_PREFIX)) {
      const principal = await this.#keys.authenticate(header);
      if (await this.#tenants.isDisabled(principal.tenantId)) {
        throw new InvalidApiKeyError(`The API key's tenant '${principal.tenantId}' is disabled.`, {
          tenantId: principal.tenantId,
          keyId: principal.keyId,
          reason: 'tenant_disabled',
        });
      }
      return principal;
    }
    if (this.#jwt && looksLikeJwt(token)) {
      const principal = await this.#jwt.verify(token);
      if (await this.#tenants.isDisabled(principal.tenantId))
        throw new InvalidTokenError('tenant_disabled', `The token's tenant '${principal.tenantId}' is disabled.`);
      return principal;
    }
    throw new InvalidApiKeyError();
  }

  /** Forgets what this process cached of a tenant: its status and its keys (a key revoked, the tenant disabled or enabled). */
  invalidateTenant(tenantId: string): void {
    this.#tenants.invalidate(tenantId);
    this.#keys.invalidateTenant(tenantId);
  }
}
