import { finishRequest, LOST_MARKER, type ClaimEnding, type EventLine, type ScriptedRedis, type Settlement, type StateEnding } from '../redis/scripts.ts';
import type { RedisKeys } from '../redis/keys.ts';
import { encodeEventLine, encodeReplyMessage, errorToPayload } from './reply-events.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { retryUnavailable } from '../redis/retry-unavailable.ts';

/** How a request ends in Redis, besides its last event: its usage record (and what goes with it), the settlement, the idempotency claim, a kept response's state. */
export interface RequestEnding {
  outbox: { key: string; records: readonly string[] };
  settlement: Settlement;
  claim: ClaimEnding;
  state: StateEnding | null;
}

/**
 * Emits one request's sequence-numbered events. Events of one turn of the event loop go out
 * together: an XADD each into the request's stream and one SPUBLISH on the web process's reply
 * channel, plain commands in one pipelined write (no script: a stream costs one round trip per
 * network read upstream, and nothing but the commands themselves). The last events go with
 * the settlement and the idempotency claim in one script call (`finish`).
 *
 * Chunk batches are sent once: after one fails, it and every later one wait for `finish`,
 * which must not be lost to a Redis master away for a few seconds, and so is retried.
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
  /** Events handed to #append and not known to be in the stream, oldest first. */
  #unsent: EventLine[] = [];
  #expiring = false;
  #scheduled = false;
  /** The deployment to name on the next event, once. */
  #deployment: string | null = null;
  #routed = false;
  #tail: Promise<void> = Promise.resolve();

  constructor(options: {
    redis: ScriptedRedis;
    keys: RedisKeys;
    tenantId: string;
    requestId: string;
    channel: string;
    ttlMs: number;
    finalTtlMs: number;
    lastSeq: number;
  }) {
    this.#redis = options.redis;
    this.#streamKey = options.keys.events(options.tenantId, options.requestId);
    this.#channel = options.channel;
    this.#requestId = options.requestId;
    this.#ttlMs = options.ttlMs;
    this.#finalTtlMs = options.finalTtlMs;
    this.#seq = options.lastSeq;
  }

  /** How long the request's events live once it ended. */
  get finalTtlMs(): number {
    return this.#finalTtlMs;
  }

  /** Sequence number of the last event emitted. */
  get lastSeq(): number {
    return this.#seq;
  }

  /** Names the deployment that answers on the next event (the first chunk, or the end), once. */
  route(deployment: string): void {
    if (this.#routed) return;
    this.#routed = true;
    this.#deployment = deployment;
  }

  /** Queues a chunk event; it is sent with the others of this turn. */
  emit(payload: string): void {
    this.#batch.push({ seq: ++this.#seq, line: encodeEventLine('chunk', payload, this.#takeDeployment()) });
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.#send());
  }

  /**
   * Ends the request: its usage record into the outbox, then the terminal event with whatever is
   * still queued or unsent, the settlement and the claim in one call, then, once that succeeded,
   * the reply. The record is queued before anything of the end can be seen, and a client never
   * sees an answer whose charge or claim failed. On one Redis the three are one script call; on
   * a cluster, where the outbox and the reply channel live in other slots, three steps in order.
   * Each is retried while Redis is unreachable: the store keeps one record per request id, the
   * script skips events already in the stream, and the web ignores repeated ones.
   */
  async finish(type: 'result' | 'done' | 'error', payload: string, ending: RequestEnding, asLost = false): Promise<{ lost: boolean }> {
    this.#scheduled = false;
    this.#unsent.push(...this.#batch, { seq: ++this.#seq, line: encodeEventLine(type, payload, this.#takeDeployment()) });
    this.#batch = [];
    // A failed batch's events are still in #unsent.
    await this.#tail.catch(() => undefined);
    const events = this.#unsent;
    const { outbox, settlement, claim, state } = ending;
    const end = { streamKey: this.#streamKey, ttlMs: this.#finalTtlMs, events, settlement, claim, state, asLost };
    if (!this.#redis.isCluster) {
      const reply = { channel: this.#channel, message: encodeReplyMessage(this.#requestId, events) };
      const { lost } = await retryUnavailable(() => finishRequest(this.#redis, { ...end, inline: { outbox, reply } }));
      return this.#unlessLost(lost);
    }
    // The records go first, to another slot, so the lost marker is read before them; one the web sets after this read
    // is still seen by the script, too late for the record, which then charges the request (docs/decisions/money.md).
    if (!asLost && (await retryUnavailable(() => this.#redis.get(settlement.marker))) === LOST_MARKER) return this.#unlessLost(true);
    await retryUnavailable(() => this.#redis.lpush(outbox.key, ...outbox.records));
    const { stateWritten, lost } = await retryUnavailable(() => finishRequest(this.#redis, { ...end, inline: null }));
    if (lost) return this.#unlessLost(true);
    const kept = state?.records ?? [];
    if (stateWritten && kept.length > 0) await retryUnavailable(() => this.#redis.lpush(outbox.key, ...kept));
    await retryUnavailable(() => this.#publish(events));
    return { lost: false };
  }

  /** The terminal event of a failed request (see `finish`). */
  finishWithError(error: GatewayError, ending: RequestEnding, asLost = false): Promise<{ lost: boolean }> {
    return this.finish('error', errorToPayload(error), ending, asLost);
  }

  // Nothing of a request answered as lost was written: its terminal event gives way to the end it is given instead.
  #unlessLost(lost: boolean): { lost: boolean } {
    if (lost) {
      this.#unsent.pop();
      this.#seq -= 1;
    }
    return { lost };
  }

  #takeDeployment(): string | null {
    const deployment = this.#deployment;
    this.#deployment = null;
    return deployment;
  }

  #send(): void {
    if (!this.#scheduled) return;
    this.#scheduled = false;
    const batch = this.#batch;
    this.#batch = [];
    this.#unsent.push(...batch);
    // Batches go one after another, so a batch that succeeds is at the front of #unsent.
    const sent = this.#tail.then(async () => {
      await this.#append(batch);
      this.#unsent.splice(0, batch.length);
    });
    // finish() sends the events again; the failure must not count as unhandled meanwhile.
    sent.catch(() => undefined);
    this.#tail = sent;
  }

  async #append(batch: readonly EventLine[]): Promise<void> {
    const writes: Array<Promise<unknown>> = batch.map((event) => this.#redis.xadd(this.#streamKey, `0-${event.seq}`, 'e', event.line));
    // The stream needs a lifetime from its first event; the last call sets the final one.
    if (!this.#expiring) writes.push(this.#redis.pexpire(this.#streamKey, this.#ttlMs));
    this.#expiring = true;
    writes.push(this.#publish(batch));
    await Promise.all(writes);
  }

  #publish(events: readonly EventLine[]): Promise<unknown> {
    // A batch line has no client listening.
    if (this.#channel === '') return Promise.resolve();
    return this.#redis.spublish(this.#channel, encodeReplyMessage(this.#requestId, events));
  }
}
