import type { FastifyRequest } from 'fastify';
import type { PiiPolicy } from '../../infra/store/repository.ts';
import type { AuditSink } from '../../domain/audit/audit-event.ts';
import { piiAuditEvent } from '../../domain/pii/apply-policy.ts';

/** Records what the policy did (blocked, masked or flagged), for the tenant's audit log. */
export function auditPii(audit: AuditSink, request: FastifyRequest, mode: PiiPolicy['mode'], categories: string[]): void {
  const event = piiAuditEvent(mode, categories, { tenantId: request.principal.tenantId, actor: request.principal.keyId, requestId: request.id });
  if (!event) return;
  audit(event).catch((error: unknown) => request.log.error({ err: error }, 'recording a PII event in the audit log failed'));
}
