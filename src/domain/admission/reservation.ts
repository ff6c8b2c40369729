import { costMicros } from '../catalog/pricing.ts';
import type { ReserveRefusal, ReserveRequest } from '../budget/budget-ledger.ts';
import { InsufficientCreditsError, RateLimitExceededError } from '../../errors/gateway-error.ts';
import type { TenantSettings } from '../tenants/tenant-settings.ts';
import type { CatalogModel } from '../catalog/schema.ts';
import type { Principal } from '../access/roles.ts';

/**
 * The cost to reserve: prompt tokens × input price + (the output the client allows, or the
 * model's largest) × output price, for the dearest candidate, since any of them may answer.
 */
export function estimateCostMicros(
  candidates: readonly CatalogModel[],
  promptTokens: number,
  maxOutputTokens: number | null,
  lane: 'live' | 'batch' = 'live',
): number {
  return Math.max(
    ...candidates.map((model) => costMicros(model, { prompt_tokens: promptTokens, completion_tokens: maxOutputTokens ?? model.max_output_tokens }, lane)),
  );
}

const WINDOW_NAMES = { hour: 'hourly', day: 'daily', month: 'monthly' } as const;

function money(micros: number): string {
  return (micros / 1_000_000).toFixed(2);
}

/** How long a request refused by its key's concurrency limit is asked to wait: a slot frees when any of the key's requests ends. */
export const KEY_BUSY_RETRY_AFTER_SECONDS = 1;

/** The concurrency limit of the principal's API key, as a reservation takes it; null when the key has none (or the principal is a JWT). */
export function keyConcurrencyOf(principal: Pick<Principal, 'keyId' | 'limits'>): ReserveRequest['keyConcurrency'] {
  const maxConcurrent = principal.limits?.maxConcurrent ?? null;
  return maxConcurrent === null ? null : { keyId: principal.keyId, maxConcurrent };
}

/** The reservation of one request: the policies that apply (the tenant's, and its feature's), credit, the queue cap, the key's concurrency limit. */
export function reservationOf(
  settings: TenantSettings,
  request: {
    tenantId: string;
    requestId: string;
    feature: string | null;
    estimateMicros: number;
    maxQueued: number;
    ttlMs?: number | undefined;
    keyConcurrency?: ReserveRequest['keyConcurrency'];
  },
): ReserveRequest {
  const policies = settings.policies.filter((policy) => policy.feature === null || policy.feature === request.feature);
  const reservation: ReserveRequest = {
    tenantId: request.tenantId,
    requestId: request.requestId,
    estimateMicros: request.estimateMicros,
    policies,
    credit: settings.creditEnforced,
    maxQueued: request.maxQueued,
  };
  if (request.ttlMs !== undefined) reservation.ttlMs = request.ttlMs;
  if (request.keyConcurrency) reservation.keyConcurrency = request.keyConcurrency;
  return reservation;
}

/**
 * The error of a refused reservation: 402 naming the window and its reset when a budget or the
 * credit is short, 429 when the tenant already has too many requests queued or the key as many
 * in flight as it may.
 */
export function reservationError(refusal: ReserveRefusal, estimateMicros: number): InsufficientCreditsError | RateLimitExceededError {
  if (refusal.reason === 'budget') {
    const scope = refusal.policy.feature === null ? '' : ` for feature '${refusal.policy.feature}'`;
    return new InsufficientCreditsError(
      `The ${WINDOW_NAMES[refusal.policy.window]} budget${scope} of ${money(refusal.policy.limitMicros)} is exhausted; it resets at ${refusal.resetsAt.toISOString()}.`,
    );
  }
  if (refusal.reason === 'credit') {
    return new InsufficientCreditsError(
      `The credit balance (${money(refusal.balanceMicros)}) cannot cover this request (estimated ${money(estimateMicros)}); add credits to continue.`,
    );
  }
  if (refusal.reason === 'key_busy') {
    return new RateLimitExceededError(
      `${refusal.maxConcurrent} concurrent requests for API key ${refusal.keyId} (${refusal.inFlight} queued or running)`,
      KEY_BUSY_RETRY_AFTER_SECONDS,
    );
  }
  return new RateLimitExceededError(`this tenant already has ${refusal.queued} requests queued or running`, 1);
}
