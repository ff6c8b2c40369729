import { publishEvents, type EventLine, type ScriptedRedis } from '../src/redis/scripts.ts';
import type { RedisKeys } from '../src/redis/keys.ts';
import { encodeEventLine, errorToPayload, isTerminal, parseEventLine, type CompletionEventType } from '../src/queue/completion-events.ts';
import { contentText } from '../src/catalog/tokens.ts';
import type { ChatCompletionChunk } from '../src/providers/types.ts';
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
  readonly #finalTtlMs: number;
  #seq: number;
  #batch: EventLine[] = [];
  #finished = false;
  #scheduled = false;
  #tail: Promise<void> = Promise.resolve();

  constructor(options: { redis: ScriptedRedis; keys: RedisKeys; requestId: string; channel: string; ttlMs: number; finalTtlMs: number; lastSeq: number }) {
    this.#redis = options.redis;
    this.#streamKey = options.keys.events(options.requestId);
    this.#channel = options.channel;
    this.#requestId = options.requestId;
    this.#ttlMs = options.ttlMs;
    this.#finalTtlMs = options.finalTtlMs;
    this.#seq = options.lastSeq;
  }

  /** Sequence number of the last event emitted. */
  get lastSeq(): number {
    return this.#seq;
  }

  /** Queues an event; it is sent with the others of this turn. */
  emit(type: CompletionEventType, payload: string): void {
    this.#batch.push({ seq: ++this.#seq, line: encodeEventLine(type, payload) });
    if (isTerminal(type)) this.#finished = true;
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
      publishEvents(this.#redis, this.#streamKey, this.#channel, this.#finished ? this.#finalTtlMs : this.#ttlMs, this.#requestId, batch),
    );
    // flush() reports the failure; until someone awaits it, it must not count as unhandled.
    sent.catch(() => undefined);
    this.#tail = sent;
  }
}

/** What a request's event log already holds, for a job that runs again. */
export interface EventLogState {
  /** Where a re-run resumes numbering. */
  lastSeq: number;
  /** A terminal event is there: the first run finished. */
  finished: boolean;
  /** Chunks reached the client: a stream that must not be repeated. */
  sentChunks: boolean;
  /** The content those chunks carried, and the alias that produced them. */
  streamedText: string;
  streamedModel: string | null;
}

/** Reads a request's event log (written by an earlier run of its job). */
export async function readEventLog(redis: ScriptedRedis, keys: RedisKeys, requestId: string): Promise<EventLogState> {
  const entries = await redis.xrange(keys.events(requestId), '-', '+');
  const state: EventLogState = { lastSeq: 0, finished: false, sentChunks: false, streamedText: '', streamedModel: null };
  for (const [id, fields] of entries) {
    const event = parseEventLine(Number(id.slice(2)), fields[1] ?? '');
    if (!event) continue;
    state.lastSeq = event.seq;
    state.finished = isTerminal(event.type);
    if (event.type !== 'chunk') continue;
    state.sentChunks = true;
    const chunk = JSON.parse(event.payload) as ChatCompletionChunk;
    state.streamedText += contentText(chunk.choices[0]?.delta.content);
    state.streamedModel = chunk.model;
  }
  return state;
}
