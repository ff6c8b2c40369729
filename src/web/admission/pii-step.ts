import type { FastifyRequest } from 'fastify';
import type { PiiPolicy } from '../../infra/store/repository.ts';
import { auditEvent, type AuditSink } from '../../domain/audit/audit-event.ts';

/** Records what the policy did (blocked, masked or flagged), for the tenant's audit log. */
export function auditPii(audit: AuditSink, request: FastifyRequest, mode: PiiPolicy['mode'], categories: string[]): void {
  if (categories.length === 0) return;
  const outcome = mode === 'block' ? 'blocked' : mode === 'mask' ? 'success' : 'flagged';
  const event = auditEvent({
    tenantId: request.principal.tenantId,
    actor: request.principal.keyId,
    action: `pii.${mode === 'block' ? 'blocked' : mode === 'mask' ? 'masked' : 'flagged'}`,
    outcome,
    requestId: request.id,
    details: { categories },
  });
  audit(event).catch((error: unknown) => request.log.error({ err: error }, 'recording a PII event in the audit log failed'));
}
