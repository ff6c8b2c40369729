import type { Principal } from '../access/roles.ts';
import { RateLimitExceededError } from '../../errors/gateway-error.ts';
import type { RateCheck, RateLimits } from '../rate-limit/rate-limiter.ts';
import type { RateRefusal } from './admission.ts';
import type { ApiKeyLimits, TenantPlan } from '../../infra/store/repository.ts';

/** The limits of a tenant and of each of its keys. */
export interface TenantLimits {
  tenant: RateLimits;
  key: RateLimits;
}

// 0 in configuration or a plan means "no limit"; the limiter always checks, so give it one no request reaches.
const UNLIMITED = 1e12;

function limit(value: number | null | undefined, fallback: number): number {
  const chosen = value ?? fallback;
  return chosen === 0 ? UNLIMITED : chosen;
}

/**
 * The tenant's and the key's limits: the plan's, else the configured defaults (0 in either: no limit);
 * a key's own limit, where it has one, replaces the plan's key limit for that key.
 */
export function limitsOf(plan: TenantPlan | null, defaults: TenantLimits, own?: ApiKeyLimits): TenantLimits {
  return {
    tenant: {
      requestsPerMinute: limit(plan?.requestsPerMinute, defaults.tenant.requestsPerMinute),
      tokensPerMinute: limit(plan?.tokensPerMinute, defaults.tenant.tokensPerMinute),
    },
    key: {
      requestsPerMinute: limit(own?.requestsPerMinute ?? plan?.keyRequestsPerMinute, defaults.key.requestsPerMinute),
      tokensPerMinute: limit(own?.tokensPerMinute ?? plan?.keyTokensPerMinute, defaults.key.tokensPerMinute),
    },
  };
}

/** The rate check of one request, or null for a tenant whose plan sets no limit at all (it costs Redis nothing). */
export function rateCheckOf(principal: Pick<Principal, 'tenantId' | 'keyId'>, tokens: number, limits: TenantLimits): RateCheck | null {
  const all = [limits.tenant.requestsPerMinute, limits.tenant.tokensPerMinute, limits.key.requestsPerMinute, limits.key.tokensPerMinute];
  if (all.every((value) => value === UNLIMITED)) return null;
  return { tenantId: principal.tenantId, keyId: principal.keyId, tokens, tenant: limits.tenant, key: limits.key };
}

/** The 429 of a refusal, naming the limit and, for a key's, the key's id (never its secret), with Retry-After. */
export function rateLimitError(limits: TenantLimits, refusal: RateRefusal, keyId: string): RateLimitExceededError {
  const allowance = refusal.scope === 'key' ? limits.key : limits.tenant;
  const perMinute = refusal.dimension === 'requests' ? allowance.requestsPerMinute : allowance.tokensPerMinute;
  return new RateLimitExceededError(
    `${perMinute} ${refusal.dimension} per minute for ${refusal.scope === 'key' ? `API key ${keyId}` : 'this tenant'}`,
    refusal.retryAfterSeconds,
  );
}
