import type { FastifyReply } from 'fastify';
import type { Principal } from '../../domain/access/roles.ts';
import type { ReserveRequest } from '../../domain/budget/budget-ledger.ts';
import type { Admission, AdmissionDecision, AdmissionRequest } from '../../domain/admission/admission.ts';
import { rateLimitHeaders } from '../../domain/rate-limit/rate-limiter.ts';
import { IdempotencyKeyAnsweredError, IdempotencyKeyReusedError } from '../../errors/gateway-error.ts';
import { rateCheckOf, rateLimitError, type TenantLimits } from '../../domain/admission/rate-limits.ts';
import { reservationError } from '../../domain/admission/reservation.ts';

/** What admission let through: run this request (its claim and reservation made), relay an earlier request's events, or serve a cached answer. */
export type Admitted = Extract<AdmissionDecision, { action: 'run' | 'relay' | 'cached' }>;

/** One request's admission checks: its rate limits, its Idempotency-Key (if any) and its reservation. */
export interface AdmissionInput {
  principal: Principal;
  /** Tokens the rate limits charge: the prompt estimate plus max_tokens. */
  tokens: number;
  limits: TenantLimits;
  idempotencyKey: string | null;
  /** What a retry with the same key must repeat: the route and the body as sent. */
  fingerprint: { path: string; body: unknown };
  reservation: ReserveRequest;
  /** The cached answer that may serve the request, when the cache is read. */
  cache: AdmissionRequest['cache'];
}

/**
 * Admits the request (src/domain/admission/admission.ts: one Redis round trip, the cache's look-up included) and answers its
 * refusals: the `x-ratelimit-*` headers whenever the limits were checked, 429 naming the limit,
 * 422 for a key reused with another body, 409 for a key answered whose answer Redis lost, 402 for a short budget or
 * credit, 429 for a full queue.
 */
export async function admitRequest(admission: Pick<Admission, 'admit'>, input: AdmissionInput, reply: FastifyReply): Promise<Admitted> {
  const { principal, idempotencyKey } = input;
  const decision = await admission.admit({
    rate: rateCheckOf(principal, input.tokens, input.limits),
    idempotency: idempotencyKey ? { key: idempotencyKey, request: input.fingerprint } : null,
    reservation: input.reservation,
    cache: input.cache,
  });
  if (decision.rate) reply.headers(rateLimitHeaders(decision.rate.headers));
  switch (decision.action) {
    case 'rate_limited':
      throw rateLimitError(input.limits, decision.rate, principal.keyId);
    case 'key_reused':
      throw new IdempotencyKeyReusedError();
    case 'answered':
      throw new IdempotencyKeyAnsweredError(decision.requestId);
    case 'refused':
      throw reservationError(decision.refusal, input.reservation.estimateMicros);
    default:
      return decision;
  }
}
