import type { FastifyReply } from 'fastify';
import type { Principal } from '../../domain/access/roles.ts';
import type { BudgetLedger, ReserveRequest } from '../../domain/budget/budget-ledger.ts';
import { claimResult, requestFingerprint, type IdempotencyStore } from '../../domain/idempotency/idempotency-store.ts';
import type { RateLimiter } from '../../domain/rate-limit/rate-limiter.ts';
import { applyRateDecision, rateCheckOf, type limitsOf } from './rate-limit-step.ts';
import { decideClaim } from './idempotency-step.ts';
import { acceptReservation } from './budget-step.ts';

/** What admission decided: run this request (its reservation made), or relay an earlier request's events. */
export type Admission =
  | { action: 'run'; budgetKeys: string[]; queued: number }
  | { action: 'relay'; requestId: string; finished: boolean };

/** One request's admission checks: its rate limits, its Idempotency-Key (if any) and its reservation. */
export interface AdmissionInput {
  principal: Principal;
  /** Tokens the rate limits charge: the prompt estimate plus max_tokens. */
  tokens: number;
  limits: ReturnType<typeof limitsOf>;
  idempotencyKey: string | null;
  /** What a retry with the same key must repeat: the route and the body as sent. */
  fingerprint: { path: string; body: unknown };
  reservation: ReserveRequest;
}

/**
 * Rate limits, idempotency claim and budget reservation in one Redis round trip (one script
 * on the tenant's slot), decided in that order: a 429 names the limit, a held key relays the
 * request that holds it, a short budget is a 402 and leaves the key unclaimed.
 */
export async function admitRequest(
  services: { limiter: RateLimiter; idempotency: IdempotencyStore; ledger: BudgetLedger },
  input: AdmissionInput,
  reply: FastifyReply,
): Promise<Admission> {
  const { principal, idempotencyKey } = input;
  const rate = rateCheckOf(principal, input.tokens, input.limits);
  const claim = idempotencyKey ? services.idempotency.part(principal.tenantId, idempotencyKey, requestFingerprint(input.fingerprint), input.reservation.requestId) : undefined;
  const { reply: answer, outcome } = await services.ledger.admit({ rate: rate ? services.limiter.part(rate) : undefined, claim }, input.reservation);
  if (rate && answer.rate) applyRateDecision(rate, services.limiter.decide(rate, answer.rate), reply);
  if (answer.claim) {
    const decision = decideClaim(claimResult(answer.claim));
    if (decision.action === 'relay') return decision;
  }
  if (!outcome) throw new Error('the admission script stopped before the reservation without a refusal');
  const { keys, queued } = acceptReservation(outcome, input.reservation.estimateMicros);
  return { action: 'run', budgetKeys: keys, queued };
}
