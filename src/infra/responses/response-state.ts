/**
 * The live state of a kept response in Redis (a background one from its acceptance, a stored one
 * from its end): what a poll, a cancellation and the next turn of a conversation read before the
 * outbox has carried the response to the store, and after, for a response kept only for polling.
 */
import type { RedisKeys } from '../redis/keys.ts';
import type { ScriptedRedis, StateEnding } from '../redis/scripts.ts';
import type { ResponseStatus, StoredItem } from '../store/repository.ts';
import { FINAL_RESPONSE_STATUSES } from '../store/response-fields.ts';

/** A response's status in Redis: the API's, or `deleted` for one deleted while its request ran (so that its end does not bring it back). */
export type LiveStatus = ResponseStatus | 'deleted';

/** What Redis holds of a kept response. */
export interface LiveResponse {
  status: LiveStatus;
  /** The Response object as JSON text; while not final, its own `status` lags behind `status`. */
  body: string;
  /** The request's own input items, kept when the response is stored; null otherwise. */
  input: StoredItem[] | null;
  previousResponseId: string | null;
  background: boolean;
  stream: boolean;
  store: boolean;
  /** The request whose job makes it (its event stream, its cancellation). */
  requestId: string;
  /** Its queue shard, for a cancellation. */
  shard: number;
}

// A deletion ends a response too, for Redis: nothing writes over it.
const FINAL: ReadonlySet<LiveStatus> = new Set<LiveStatus>([...FINAL_RESPONSE_STATUSES, 'deleted']);

/** Whether a status is an end: nothing changes it but a deletion. */
export function isFinal(status: LiveStatus): boolean {
  return FINAL.has(status);
}

/** The state's fields, `status` first (the request's last call writes them in this order). */
export function liveFields(live: LiveResponse): Array<readonly [string, string]> {
  const fields: Array<readonly [string, string]> = [
    ['status', live.status],
    ['body', live.body],
    ['previous', live.previousResponseId ?? ''],
    ['background', live.background ? '1' : '0'],
    ['stream', live.stream ? '1' : '0'],
    ['store', live.store ? '1' : '0'],
    ['request', live.requestId],
    ['shard', String(live.shard)],
  ];
  if (live.input) fields.push(['input', JSON.stringify(live.input)]);
  return fields;
}

/** Where and what the state written as a request ends is. */
export function stateEnding(keys: RedisKeys, tenantId: string, id: string, live: LiveResponse, ttlMs: number): Pick<StateEnding, 'key' | 'ttlMs' | 'fields'> {
  return { key: keys.response(tenantId, id), ttlMs, fields: liveFields(live) };
}

function parseLive(fields: Record<string, string>): LiveResponse | null {
  if (fields.status === undefined || fields.body === undefined) {
    // A response deleted before its state was written is a bare tombstone.
    return fields.status === 'deleted' ? deletedLive() : null;
  }
  return {
    status: fields.status as LiveStatus,
    body: fields.body,
    input: fields.input === undefined ? null : (JSON.parse(fields.input) as StoredItem[]),
    previousResponseId: fields.previous || null,
    background: fields.background === '1',
    stream: fields.stream === '1',
    store: fields.store === '1',
    requestId: fields.request ?? '',
    shard: Number(fields.shard ?? 0),
  };
}

function deletedLive(): LiveResponse {
  return { status: 'deleted', body: '{}', input: null, previousResponseId: null, background: false, stream: false, store: false, requestId: '', shard: 0 };
}

/** Reads and writes the live state of kept responses. */
export class ResponseStates {
  readonly #redis: ScriptedRedis;
  readonly #keys: RedisKeys;

  constructor(redis: ScriptedRedis, keys: RedisKeys) {
    this.#redis = redis;
    this.#keys = keys;
  }

  /** The response's live state; null when Redis holds none (never kept there, expired, or lost). */
  async read(tenantId: string, id: string): Promise<LiveResponse | null> {
    const fields = await this.#redis.hgetall(this.#keys.response(tenantId, id));
    return parseLive(fields);
  }

  /** Whether Redis holds the response's state at all. */
  async exists(tenantId: string, id: string): Promise<boolean> {
    return (await this.#redis.exists(this.#keys.response(tenantId, id))) === 1;
  }

  /** Records an accepted background response, queued, for `ttlMs`. */
  async accept(tenantId: string, id: string, live: LiveResponse, ttlMs: number): Promise<void> {
    const key = this.#keys.response(tenantId, id);
    await this.#redis
      .multi()
      .hset(key, ...liveFields(live).flat())
      .pexpire(key, ttlMs)
      .exec();
  }

  /** Gives an accepted response's state its lifetime once its job is queued, unless it has ended meanwhile. */
  async extend(tenantId: string, id: string, ttlMs: number): Promise<void> {
    await this.#redis.responseKeep(this.#keys.response(tenantId, id), ttlMs);
  }

  /** A worker starts the response; returns the status found (null: none, lost with Redis). */
  async start(tenantId: string, id: string): Promise<LiveStatus | null> {
    return ((await this.#redis.responseStart(this.#keys.response(tenantId, id))) as LiveStatus | null) ?? null;
  }

  /** Cancels a queued or running response with `cancelledBody`; returns the status found (null: none). */
  async cancel(tenantId: string, id: string, cancelledBody: string): Promise<LiveStatus | null> {
    return ((await this.#redis.responseCancel(this.#keys.response(tenantId, id), cancelledBody)) as LiveStatus | null) ?? null;
  }

  /** Leaves only a tombstone, for `ttlMs`: a request still running cannot bring the response back. */
  async markDeleted(tenantId: string, id: string, ttlMs: number): Promise<void> {
    const key = this.#keys.response(tenantId, id);
    await this.#redis.multi().del(key).hset(key, 'status', 'deleted').pexpire(key, ttlMs).exec();
  }
}
