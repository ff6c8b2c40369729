/** The check both adapters add to verifyChain: the chain must reach the end its head records. */
import type { AuditVerification } from './repository.ts';

/** Where a tenant's chain ended when its head was last moved. */
export interface AuditChainEnd {
  seq: number;
  id: string;
}

/**
 * Turns an intact chain that stops short of `end` into a failure naming the missing last event;
 * the hash links alone cannot reveal events removed from the end. Read `end` before walking the
 * chain, so events appended meanwhile only make the chain longer than it.
 */
export function checkChainEnd(result: AuditVerification, end: AuditChainEnd | null): AuditVerification {
  if (!result.ok || !end || end.seq <= result.events) return result;
  return {
    ok: false,
    events: result.events,
    brokenAt: { id: end.id, seq: end.seq },
    reason: `the chain ends at event ${result.events} but its head records event ${end.seq} (events were removed from the end)`,
  };
}
