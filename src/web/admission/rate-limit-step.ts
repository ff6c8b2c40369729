import type { FastifyReply } from 'fastify';
import type { Principal } from '../../domain/access/roles.ts';
import type { Env } from '../../config.ts';
import { RateLimitExceededError } from '../../errors/gateway-error.ts';
import { rateLimitHeaders, type RateCheck, type RateDecision, type RateLimits } from '../../domain/rate-limit/rate-limiter.ts';
import type { TenantPlan } from '../../infra/store/repository.ts';

// 0 in configuration or a plan means "no limit"; the limiter always checks, so give it one no request reaches.
const UNLIMITED = 1e12;

function limit(value: number | null | undefined, fallback: number): number {
  const chosen = value ?? fallback;
  return chosen === 0 ? UNLIMITED : chosen;
}

/** The tenant's and the key's limits: the plan's, else the configured defaults. */
export function limitsOf(plan: TenantPlan | null, env: Env): { tenant: RateLimits; key: RateLimits } {
  return {
    tenant: { requestsPerMinute: limit(plan?.requestsPerMinute, env.TENANT_RPM), tokensPerMinute: limit(plan?.tokensPerMinute, env.TENANT_TPM) },
    key: { requestsPerMinute: limit(plan?.keyRequestsPerMinute, env.KEY_RPM), tokensPerMinute: limit(plan?.keyTokensPerMinute, env.KEY_TPM) },
  };
}

/** The rate check of one request, or null for a tenant whose plan sets no limit at all (it costs Redis nothing). */
export function rateCheckOf(principal: Principal, tokens: number, limits: { tenant: RateLimits; key: RateLimits }): RateCheck | null {
  const all = [limits.tenant.requestsPerMinute, limits.tenant.tokensPerMinute, limits.key.requestsPerMinute, limits.key.tokensPerMinute];
  if (all.every((value) => value === UNLIMITED)) return null;
  return { tenantId: principal.tenantId, keyId: principal.keyId, tokens, tenant: limits.tenant, key: limits.key };
}

/** Sets the `x-ratelimit-*` headers of the decision; throws 429 with Retry-After when it refused. */
export function applyRateDecision(check: RateCheck, decision: RateDecision, reply: FastifyReply): void {
  reply.headers(rateLimitHeaders(decision.headers));
  if (decision.ok) return;
  const allowance = decision.scope === 'key' ? check.key : check.tenant;
  const perMinute = decision.dimension === 'requests' ? allowance.requestsPerMinute : allowance.tokensPerMinute;
  throw new RateLimitExceededError(`${perMinute} ${decision.dimension} per minute for this ${decision.scope === 'key' ? 'API key' : 'tenant'}`, decision.retryAfterSeconds);
}
