import { createHash } from 'node:crypto';
import type { AuditEvent, AuditEventInput, AuditVerification } from '../../infra/store/repository.ts';

/** The `prevHash` of a tenant's first event. */
export const GENESIS_HASH = '0'.repeat(64);

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/**
 * SHA-256 over every field of the event, its number and the previous event's hash, in a
 * fixed order with sorted keys, so that the same event always hashes the same in either store.
 */
export function auditEventHash(event: AuditEventInput, seq: number, prevHash: string): string {
  const fields = [
    event.tenantId,
    seq,
    event.id,
    event.actor,
    event.action,
    event.target,
    event.outcome,
    event.requestId,
    canonical(event.details),
    event.createdAt.toISOString(),
    prevHash,
  ];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

/**
 * Walks a tenant's events in seq order and names the first whose number, link or hash is
 * wrong. Adapters pass an async iterable that pages through the store, so a long chain is
 * never held in memory at once.
 */
export async function verifyChain(events: AsyncIterable<AuditEvent> | Iterable<AuditEvent>): Promise<AuditVerification> {
  let prevHash = GENESIS_HASH;
  let expectedSeq = 1;
  let count = 0;
  for await (const event of events) {
    count++;
    const broken = (reason: string): AuditVerification => ({ ok: false, events: count, brokenAt: { id: event.id, seq: event.seq }, reason });
    if (event.seq !== expectedSeq) return broken(`expected event number ${expectedSeq}, found ${event.seq} (an event was removed or inserted)`);
    if (event.prevHash !== prevHash) return broken("its link to the previous event does not match that event's hash");
    if (auditEventHash(event, event.seq, event.prevHash) !== event.hash) return broken('its content does not match its hash (the event was edited)');
    prevHash = event.hash;
    expectedSeq++;
  }
  return { ok: true, events: count };
}
