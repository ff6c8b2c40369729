/**
 * What is kept of an answer that outlives its request (a stored or a background response), and
 * how the same answer is written to Redis (its live state) and to the store: the web tier writes
 * an accepted background response, the worker every kept response's end.
 */
import type { ResponseStatus, StoredItem, StoredResponse } from '../store/repository.ts';
import type { LiveResponse } from './response-state.ts';

/** What is kept of an answer, in any state. */
export interface KeptAnswer {
  id: string;
  status: ResponseStatus;
  /** The Response object. */
  body: Record<string, unknown>;
  /** The request's own input items, each with an id, when it is stored; null otherwise. */
  input: StoredItem[] | null;
  previousResponseId: string | null;
  background: boolean;
  stream: boolean;
  store: boolean;
  /** When it was asked, ms. */
  createdAt: number;
}

/**
 * The answer as the store records it. One not stored (a background response with `store: false`)
 * is there without its input, and only until `pollableUntil`, for a poller and the reaper.
 */
export function storedRecordOf(tenantId: string, kept: KeptAnswer, pollableUntil: Date): StoredResponse {
  return {
    id: kept.id,
    tenantId,
    status: kept.status,
    background: kept.background,
    response: kept.body,
    input: kept.store ? (kept.input ?? []) : [],
    previousResponseId: kept.previousResponseId,
    createdAt: new Date(kept.createdAt),
    expiresAt: kept.store ? null : pollableUntil,
  };
}

/** The answer as Redis keeps it. */
export function liveOf(kept: KeptAnswer, requestId: string, shard: number): LiveResponse {
  return {
    status: kept.status,
    body: JSON.stringify(kept.body),
    input: kept.store ? kept.input : null,
    previousResponseId: kept.previousResponseId,
    background: kept.background,
    stream: kept.stream,
    store: kept.store,
    requestId,
    shard,
  };
}
