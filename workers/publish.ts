import { publishEvents, type EventLine, type ScriptedRedis } from '../src/redis/scripts.ts';
import type { RedisKeys } from '../src/redis/keys.ts';
import { encodeEventLine, errorToPayload, isTerminal, type CompletionEventType } from '../src/queue/completion-events.ts';
import type { GatewayError } from '../src/errors/gateway-error.ts';

/**
 * Emits one request's sequence-numbered events. Events emitted in the same turn of the
 * event loop go out in one script call (one XADD per event, one PUBLISH), which keeps
 * the Redis cost of a fast stream close to one round trip per network read upstream.
 */
export class EventPublisher {
  readonly #redis: ScriptedRedis;
  readonly #streamKey: string;
  readonly #channel: string;
  readonly #requestId: string;
  readonly #ttlMs: number;
  #seq: number;
  #batch: EventLine[] = [];
  #scheduled = false;
  #tail: Promise<void> = Promise.resolve();

  constructor(options: { redis: ScriptedRedis; keys: RedisKeys; requestId: string; channel: string; ttlMs: number; lastSeq: number }) {
    this.#redis = options.redis;
    this.#streamKey = options.keys.events(options.requestId);
    this.#channel = options.channel;
    this.#requestId = options.requestId;
    this.#ttlMs = options.ttlMs;
    this.#seq = options.lastSeq;
  }

  /** Sequence number of the last event emitted. */
  get lastSeq(): number {
    return this.#seq;
  }

  /** Queues an event; it is sent with the others of this turn. */
  emit(type: CompletionEventType, payload: string): void {
    this.#batch.push({ seq: ++this.#seq, line: encodeEventLine(type, payload) });
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.#send());
  }

  /** Queues the request's final error event. */
  emitError(error: GatewayError): void {
    this.emit('error', errorToPayload(error));
  }

  /** Resolves when every event emitted so far is in Redis; rejects if a send failed. */
  async flush(): Promise<void> {
    if (this.#scheduled) this.#send();
    await this.#tail;
  }

  #send(): void {
    if (!this.#scheduled) return;
    this.#scheduled = false;
    const batch = this.#batch;
    this.#batch = [];
    const sent = this.#tail.then(() =>
      publishEvents(this.#redis, this.#streamKey, this.#channel, this.#ttlMs, this.#requestId, batch),
    );
    // flush() reports the failure; until someone awaits it, it must not count as unhandled.
    sent.catch(() => undefined);
    this.#tail = sent;
  }
}

/** What a request's stream already holds: where a re-run resumes, and whether it may. */
export async function readLastSeq(redis: ScriptedRedis, keys: RedisKeys, requestId: string): Promise<{ lastSeq: number; sentChunks: boolean; finished: boolean }> {
  const entries = await redis.xrange(keys.events(requestId), '-', '+');
  const last = entries.at(-1);
  const lastType = (last?.[1][1] ?? '').split(' ', 1)[0] as CompletionEventType | '';
  return {
    lastSeq: last ? Number(last[0].slice(2)) : 0,
    sentChunks: entries.some(([, fields]) => (fields[1] ?? '').startsWith('chunk ')),
    finished: lastType !== '' && isTerminal(lastType),
  };
}
