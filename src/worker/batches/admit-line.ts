import type { Admission } from '../../domain/admission/admission.ts';
import { limitsOf, rateCheckOf, type TenantLimits } from '../../domain/admission/rate-limits.ts';
import { estimateCostMicros, reservationError, reservationOf } from '../../domain/admission/reservation.ts';
import { applyPiiPolicy, piiAuditEvent } from '../../domain/pii/apply-policy.ts';
import type { AuditSink } from '../../domain/audit/audit-event.ts';
import type { TenantSettingsCache } from '../../domain/tenants/tenant-settings.ts';
import { GatewayError, PiiDetectedError } from '../../errors/gateway-error.ts';
import type { ApiKeyLimits, PiiPolicy, StoredBatch } from '../../infra/store/repository.ts';
import { buildJob } from '../../operations/build-job.ts';
import type { RequestJob } from '../../operations/index.ts';
import type { Operation } from '../../operations/operation.ts';
import type { PlanContext } from '../../operations/web-operation.ts';

/** What a batch line's admission reads, built once by the worker's composition root. */
export interface LineAdmissionPorts {
  plan: Pick<PlanContext, 'catalog' | 'prompts' | 'responses'>;
  settings: TenantSettingsCache;
  /** The own limits of the key that made the batch (null: none, or the key is gone). */
  keyLimits(tenantId: string, keyId: string): Promise<ApiKeyLimits | null>;
  admission: Pick<Admission, 'admit'>;
  audit: AuditSink;
  defaults: { rateLimits: TenantLimits; maxQueued: number; requestTimeoutMs: number };
}

/** A line admitted (its job, to run now), refused as a live request would be (its error is its result), or to be tried again later. */
export type LineAdmission = { action: 'run'; job: RequestJob } | { action: 'refused'; error: GatewayError } | { action: 'wait'; ms: number };

/** One line to admit: its batch, its place and its body. */
export interface PendingLine {
  batch: StoredBatch;
  line: number;
  customId: string;
  requestId: string;
  body: Record<string, unknown>;
}

/** Records what the PII policy did to the line, as for a live request, with its batch named. */
function auditPii(ports: LineAdmissionPorts, pending: PendingLine, mode: PiiPolicy['mode'], categories: string[]): void {
  const { batch } = pending;
  const event = piiAuditEvent(mode, categories, { tenantId: batch.tenantId, actor: batch.keyId, requestId: pending.requestId, details: { batchId: batch.id } });
  // The audit sink is the outbox: a failure here is Redis's, which the line's own end will meet too.
  if (event) void ports.audit(event).catch(() => undefined);
}

/**
 * The admission chain of a live request, for one batch line, as the key that made the batch: the
 * operation resolves the model, the PII policy reads its texts, then rate limits and the budget
 * in one Redis call. A line the rate limits or the tenant's queue cap hold back waits and is tried
 * again (a batch can wait); what refuses a live request for good (PII, budget, an unknown model)
 * is the line's result. Nothing is charged for a refused line. The key's own requests and tokens
 * per minute apply as to its live requests; its concurrency limit does not: the lane paces lines.
 */
export async function admitLine(ports: LineAdmissionPorts, operation: Operation, pending: PendingLine): Promise<LineAdmission> {
  const { batch } = pending;
  const principal = { tenantId: batch.tenantId, keyId: batch.keyId };
  const settings = await ports.settings.get(batch.tenantId);
  let plan;
  let pii;
  try {
    plan = await operation.web.plan(pending.body, { ...ports.plan, tenantId: batch.tenantId, requestId: pending.requestId, settings, headers: {} });
    pii = applyPiiPolicy(settings.pii, plan.body, operation.web.mapTexts);
  } catch (error) {
    if (error instanceof PiiDetectedError) auditPii(ports, pending, 'block', error.categories);
    if (error instanceof GatewayError) return { action: 'refused', error };
    throw error;
  }
  const promptTokens = plan.promptTokens ?? plan.promptEstimate;
  const estimateMicros = estimateCostMicros(plan.candidates, plan.promptBound, plan.maxOutputTokens, 'batch');
  const limits = limitsOf(settings.plan, ports.defaults.rateLimits, (await ports.keyLimits(batch.tenantId, batch.keyId)) ?? undefined);
  const decision = await ports.admission.admit({
    rate: rateCheckOf(principal, promptTokens + (plan.maxOutputTokens ?? 0), limits),
    idempotency: null,
    cache: null,
    reservation: reservationOf(settings, {
      tenantId: batch.tenantId,
      requestId: pending.requestId,
      feature: batch.feature,
      estimateMicros,
      maxQueued: settings.plan?.maxQueued ?? ports.defaults.maxQueued,
      ttlMs: ports.defaults.requestTimeoutMs + 60_000,
    }),
  });
  if (decision.action === 'rate_limited') return { action: 'wait', ms: Math.max(1, decision.rate.retryAfterSeconds) * 1000 };
  if (decision.action === 'refused') {
    if (decision.refusal.reason !== 'budget' && decision.refusal.reason !== 'credit') return { action: 'wait', ms: 1_000 };
    // Batch APIs name this `budget_exceeded`; the message says which budget or the credit, as a live request's 402 does.
    const refusal = reservationError(decision.refusal, estimateMicros);
    return { action: 'refused', error: new GatewayError(refusal.status, refusal.type, 'budget_exceeded', refusal.message) };
  }
  if (decision.action !== 'run') throw new Error(`a batch line, which has no idempotency key and reads no cache, was admitted as '${decision.action}'`);
  auditPii(ports, pending, settings.pii.mode, pii.categories);
  const job = buildJob(pending.requestId, principal, { operation: operation.name, ...operation.web.jobPayload(pii.body, plan) }, plan, {
    feature: batch.feature,
    piiFlags: pii.categories,
    idempotencyKey: null,
    budgetKeys: decision.taken.budgetKeys,
  });
  return { action: 'run', job: { ...job, replyChannel: '', batch: { id: batch.id, line: pending.line, customId: pending.customId } } as RequestJob };
}
