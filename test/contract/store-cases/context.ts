/** What every group of contract cases receives: the adapter under test and a way around it. */
import { randomBytes } from 'node:crypto';
import type { Repository } from '../../../src/infra/store/repository.ts';

/** Direct writes to the stored audit log, bypassing the repository, as an attacker with database access would. */
export interface AuditTamper {
  /** Overwrites fields of one stored event. */
  editEvent(id: string, change: { actor?: string; details?: Record<string, unknown> }): Promise<void>;
  /** Removes one stored event. */
  deleteEvent(id: string): Promise<void>;
}

/** The adapter of the running suite; `repo()` throws before it is opened. */
export interface StoreContext {
  repo(): Repository;
  tamper(): AuditTamper;
}

/** A short random suffix, so each case works on its own tenants and names. */
export const uid = (): string => randomBytes(5).toString('hex');
