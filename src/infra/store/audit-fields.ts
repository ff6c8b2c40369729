/** The snake_case form of an audit event: the PostgreSQL columns, the MongoDB fields and the API's names. */
import type { AuditEvent } from './repository.ts';

/** An audit event with snake_case field names. */
export interface AuditFields {
  id: string;
  tenant_id: string;
  seq: number;
  actor: string;
  action: string;
  target: string | null;
  outcome: AuditEvent['outcome'];
  request_id: string | null;
  details: Record<string, unknown>;
  created_at: Date;
  prev_hash: string;
  hash: string;
}

/** camelCase → snake_case. */
export function toAuditFields(event: AuditEvent): AuditFields {
  return {
    id: event.id,
    tenant_id: event.tenantId,
    seq: event.seq,
    actor: event.actor,
    action: event.action,
    target: event.target,
    outcome: event.outcome,
    request_id: event.requestId,
    details: event.details,
    created_at: event.createdAt,
    prev_hash: event.prevHash,
    hash: event.hash,
  };
}

/** snake_case → camelCase; absent optional fields (MongoDB may omit nulls) become null. */
export function fromAuditFields(fields: AuditFields): AuditEvent {
  return {
    id: fields.id,
    tenantId: fields.tenant_id,
    seq: Number(fields.seq),
    actor: fields.actor,
    action: fields.action,
    target: fields.target ?? null,
    outcome: fields.outcome,
    requestId: fields.request_id ?? null,
    details: fields.details,
    createdAt: fields.created_at,
    prevHash: fields.prev_hash,
    hash: fields.hash,
  };
}
