import { ulid } from 'ulid';
import type { AuditEventInput } from '../../infra/store/repository.ts';

/** Where audit events go: the outbox in web and worker processes, the store directly in the CLI. */
export type AuditSink = (event: AuditEventInput) => Promise<void>;

/** An audit event with a fresh id (`aud_<ulid>`) and the current time. */
export function auditEvent(
  fields: Omit<AuditEventInput, 'id' | 'createdAt' | 'details' | 'requestId' | 'target'> & Partial<Pick<AuditEventInput, 'details' | 'requestId' | 'target'>>,
): AuditEventInput {
  return {
    id: `aud_${ulid()}`,
    createdAt: new Date(),
    details: {},
    requestId: null,
    target: null,
    ...fields,
  };
}
