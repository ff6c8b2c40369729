import type { RedisClient } from '../redis/connections.ts';
import type { Logger } from 'pino';
import { parseEventLine, parseReplyMessage, isTerminal, type ReplyEvent } from './reply-events.ts';
import type { RedisKeys } from '../redis/keys.ts';

/** Receives one request's events, in sequence order, each exactly once. */
export type EventSink = (event: ReplyEvent) => void;

/** A request's registration on the reply channel. */
export interface ReplySubscription {
  /** Reads the request's stream now and delivers anything missed (used at deadlines). */
  probe(): Promise<void>;
  /** Stops delivery; idempotent. */
  close(): void;
}

interface Pending {
  tenantId: string;
  requestId: string;
  sink: EventSink;
  onResubscribed: (() => void) | null;
  next: number;
  early: Map<number, ReplyEvent>;
  lastEventAt: number;
  repairing: Promise<void> | null;
  closed: boolean;
}

/**
 * The web process's one subscription (made at boot) on which workers publish events
 * for every request this process waits for. It is a sharded channel (SSUBSCRIBE): on a
 * Redis Cluster a message goes to the one node that owns the channel, not to every node.
 * Pub/sub is at-most-once, so every event carries a sequence number and is also in the
 * request's Redis Stream: a gap, a reconnect or a long silence makes us read the stream
 * instead of trusting the channel.
 */
export class ReplyChannel {
  readonly channel: string;
  readonly #subscriber: RedisClient;
  readonly #commands: RedisClient;
  readonly #keys: RedisKeys;
  readonly #log: Logger;
  readonly #silenceMs: number;
  readonly #pending = new Map<string, Pending>();
  #timer: NodeJS.Timeout | null = null;

  constructor(options: { subscriber: RedisClient; commands: RedisClient; keys: RedisKeys; instanceId: string; silenceMs: number; log: Logger }) {
    this.#subscriber = options.subscriber;
    this.#commands = options.commands;
    this.#keys = options.keys;
    this.#log = options.log;
    this.#silenceMs = options.silenceMs;
    this.channel = options.keys.replyChannel(options.instanceId);
  }

  /** Subscribes once for the life of the process. */
  async start(): Promise<void> {
    this.#subscriber.on('smessage', (channel: string, message: string) => {
      if (channel === this.channel) this.#onMessage(message);
    });
    // After a reconnect, messages published while we were away are only in the streams, and a
    // Redis that restarted may have lost the jobs of the requests still waiting: each is told.
    this.#subscriber.on('ready', () => {
      this.#repairAll(0);
      for (const pending of this.#pending.values()) pending.onResubscribed?.();
    });
    await this.#subscriber.ssubscribe(this.channel);
    this.#timer = setInterval(() => this.#repairAll(this.#silenceMs), Math.max(50, this.#silenceMs / 2));
    this.#timer.unref();
  }

  /** Number of requests waiting on this process. */
  get size(): number {
    return this.#pending.size;
  }

  /**
   * Registers a request before its job is enqueued, so that no event can arrive unseen;
   * `onResubscribed` runs whenever the subscription comes back after a lost connection.
   */
  open(tenantId: string, requestId: string, sink: EventSink, onResubscribed: (() => void) | null = null): ReplySubscription {
    const pending: Pending = { tenantId, requestId, sink, onResubscribed, next: 1, early: new Map(), lastEventAt: Date.now(), repairing: null, closed: false };
    this.#pending.set(requestId, pending);
    return {
      probe: () => this.#repair(pending),
      close: () => this.#close(pending),
    };
  }

  /** Unsubscribes; waiting requests get nothing more. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#subscriber.sunsubscribe(this.channel).catch(() => undefined);
  }

  #onMessage(message: string): void {
    const { requestId, events } = parseReplyMessage(message);
    const pending = this.#pending.get(requestId);
    if (!pending) return;
    for (const event of events) this.#accept(pending, event);
    if (pending.early.size > 0) void this.#repair(pending);
  }

  #accept(pending: Pending, event: ReplyEvent): void {
    if (pending.closed || event.seq < pending.next) return;
    if (event.seq > pending.next) {
      pending.early.set(event.seq, event);
      return;
    }
    this.#deliver(pending, event);
    for (let early = pending.early.get(pending.next); early; early = pending.early.get(pending.next)) {
      pending.early.delete(early.seq);
      this.#deliver(pending, early);
    }
  }

  #deliver(pending: Pending, event: ReplyEvent): void {
    if (pending.closed) return;
    pending.next = event.seq + 1;
    pending.lastEventAt = Date.now();
    if (isTerminal(event.type)) this.#close(pending);
    pending.sink(event);
  }

  #close(pending: Pending): void {
    pending.closed = true;
    pending.early.clear();
    if (this.#pending.get(pending.requestId) === pending) this.#pending.delete(pending.requestId);
  }

  #repairAll(silentForMs: number): void {
    const cutoff = Date.now() - silentForMs;
    for (const pending of this.#pending.values()) {
      if (pending.lastEventAt <= cutoff) void this.#repair(pending);
    }
  }

  #repair(pending: Pending): Promise<void> {
    if (pending.closed) return Promise.resolve();
    pending.repairing ??= this.#readStream(pending).finally(() => {
      pending.repairing = null;
    });
    return pending.repairing;
  }

  async #readStream(pending: Pending): Promise<void> {
    try {
      const entries = await this.#commands.xrange(this.#keys.events(pending.tenantId, pending.requestId), `0-${pending.next}`, '+');
      for (const [id, fields] of entries) {
        const event = parseEventLine(Number(id.slice(2)), fields[1] ?? '');
        if (event) this.#accept(pending, event);
      }
      if (entries.length === 0) pending.lastEventAt = Date.now();
    } catch (error) {
      this.#log.warn({ err: error, requestId: pending.requestId }, 'reading the event stream failed; will retry');
    }
  }
}
