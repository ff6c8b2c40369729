/**
 * Kept responses, wherever they are: Redis holds a background one from its acceptance and a
 * stored one from its end until the outbox has carried it to the store (and a background one
 * with `store: false` for its polling window); the store holds them for the tenant's retention.
 * Redis is read first, so a response is readable as soon as its client has seen it.
 */
import type { ResponseRepository, ResponseStatus, StoredItem, StoredItemPage, StoredResponse } from '../store/repository.ts';
import { isFinal, type LiveResponse, type ResponseStates } from './response-state.ts';
import { CoalescedWrites } from './coalesced-writes.ts';

/** A kept response as a reader sees it. */
export interface KeptResponse {
  id: string;
  status: ResponseStatus;
  /** The Response object, its status the current one. */
  body: Record<string, unknown>;
  /** The request's own input items; null when they were not kept (`store: false`). */
  input: StoredItem[] | null;
  previousResponseId: string | null;
  background: boolean;
  stream: boolean;
  /** Redis's state of it, when Redis has one (a running response has). */
  live: LiveResponse | null;
}

/** The Response object's output items (every one has an id). */
export function outputItems(body: Record<string, unknown>): StoredItem[] {
  return Array.isArray(body.output) ? (body.output as StoredItem[]) : [];
}

function fromLive(id: string, live: LiveResponse): KeptResponse | null {
  if (live.status === 'deleted') return null;
  const body = JSON.parse(live.body) as Record<string, unknown>;
  body.status = live.status;
  return {
    id,
    status: live.status,
    body,
    input: live.input,
    previousResponseId: live.previousResponseId,
    background: live.background,
    stream: live.stream,
    live,
  };
}

function fromStored(stored: StoredResponse): KeptResponse {
  return {
    id: stored.id,
    status: stored.status,
    body: stored.response,
    input: stored.response.store === false ? null : stored.input,
    previousResponseId: stored.previousResponseId,
    background: stored.background,
    // A stream is resumed from Redis, which no longer holds its events once only the store has it.
    stream: false,
    live: null,
  };
}

/** A page of items held in memory, as the store pages them: by position, after the item `after`. */
export function pageItems(items: readonly StoredItem[], page: { after: string | null; limit: number; order: 'asc' | 'desc' }): StoredItemPage {
  const ordered = page.order === 'asc' ? [...items] : [...items].reverse();
  const start = page.after === null ? 0 : ordered.findIndex((item) => item.id === page.after) + 1;
  const rest = start === 0 && page.after !== null ? [] : ordered.slice(start);
  return { items: rest.slice(0, page.limit), hasMore: rest.length > page.limit };
}

/**
 * The response an output item belongs to: its id is `<kind>_<request id>_<index>`
 * (src/operations/responses/from-chat.ts), and the response's is `resp_<request id>`.
 */
export function responseIdOfItem(itemId: string): string | null {
  const match = /^(?:msg|fc|rs)_(req_[0-9A-Za-z]+)_\d+$/.exec(itemId);
  return match ? `resp_${match[1]}` : null;
}

/** Reads kept responses from Redis, then the store. */
export class KeptResponses {
  readonly #states: ResponseStates;
  readonly #store: ResponseRepository;
  // Accepted responses arriving together go to the store in one statement.
  readonly #accepted: CoalescedWrites<StoredResponse>;

  constructor(states: ResponseStates, store: ResponseRepository) {
    this.#states = states;
    this.#store = store;
    this.#accepted = new CoalescedWrites((records) => store.put(records));
  }

  get states(): ResponseStates {
    return this.#states;
  }

  /**
   * Records an accepted background response: Redis first, so that the reaper, reading the store,
   * never finds one Redis has not heard of. Its state lives `windowMs` until its job is queued
   * (`queued`): a web process that dies in between leaves a response the reaper then fails.
   */
  async accept(record: StoredResponse, live: LiveResponse, windowMs: number): Promise<void> {
    await this.#states.accept(record.tenantId, record.id, live, windowMs);
    await this.#accepted.write(record);
  }

  /** The accepted response's job is queued: its state lives as long as it may wait, run and be polled. */
  async queued(tenantId: string, id: string, ttlMs: number): Promise<void> {
    await this.#states.extend(tenantId, id, ttlMs);
  }

  /** The tenant's response; null when it has none of that id, or it was deleted. */
  async find(tenantId: string, id: string): Promise<KeptResponse | null> {
    const live = await this.#states.read(tenantId, id);
    if (live) return fromLive(id, live);
    const stored = await this.#store.get(tenantId, id);
    return stored ? fromStored(stored) : null;
  }

  /** A page of the response's own input items; null when there is no such response. */
  async listInput(tenantId: string, id: string, page: { after: string | null; limit: number; order: 'asc' | 'desc' }): Promise<StoredItemPage | null> {
    const live = await this.#states.read(tenantId, id);
    if (live?.status === 'deleted') return null;
    // A stored response's input is in Redis once it ended, and in the store from its acceptance.
    if (live && (live.input !== null || !live.store)) return pageItems(live.input ?? [], page);
    return this.#store.listInput(tenantId, id, page);
  }

  /** The tenant's items of these ids (input or output of its kept responses). */
  async findItems(tenantId: string, ids: readonly string[]): Promise<Map<string, StoredItem>> {
    const found = new Map<string, StoredItem>();
    const owners = new Set(ids.flatMap((id) => responseIdOfItem(id) ?? []));
    for (const owner of owners) {
      const kept = await this.find(tenantId, owner);
      if (!kept) continue;
      for (const item of [...(kept.input ?? []), ...outputItems(kept.body)]) if (ids.includes(item.id)) found.set(item.id, item);
    }
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) for (const [id, item] of await this.#store.findItems(tenantId, missing)) found.set(id, item);
    return found;
  }

  /** Deletes the response for good; false when there was none. A running one's end will not bring it back. */
  async delete(tenantId: string, id: string, tombstoneTtlMs: number): Promise<boolean> {
    const live = await this.#states.read(tenantId, id);
    const wasLive = live !== null && live.status !== 'deleted';
    if (wasLive) await this.#states.markDeleted(tenantId, id, tombstoneTtlMs);
    // Redis may know it before the store does (the outbox carries it): its id is kept from the store all the same.
    const wasStored = await this.#store.delete(tenantId, id, wasLive);
    return wasLive || wasStored;
  }

  /** Records a final state in the store directly (a response ended by the web tier or the reaper, not by a worker). */
  async putFinal(record: StoredResponse): Promise<void> {
    if (!isFinal(record.status)) throw new Error(`not a final status: ${record.status}`);
    await this.#store.put([record]);
  }
}
