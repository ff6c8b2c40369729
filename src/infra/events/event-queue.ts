import type { ReplyEvent } from './reply-events.ts';

/** Buffers a request's events until the relay reads them; ends after a terminal event or close(). */
export class EventQueue implements AsyncIterable<ReplyEvent> {
  readonly #buffer: ReplyEvent[] = [];
  #waiter: ((event: ReplyEvent | null) => void) | null = null;
  #closed = false;
  #bufferedBytes = 0;
  /** Called after an event is buffered because the reader is busy (a relay watching its memory). */
  onBuffered: (() => void) | null = null;
  /** When the request's last event (its result, end or error) arrived (performance.now()): the web tier's work after it is measured from here. */
  lastEventAt: number | null = null;
  /** The deployment that answered, from the first event that names it (the first chunk or the result). */
  deployment: string | null = null;

  /** Adds an event (ignored once closed). */
  push(event: ReplyEvent): void {
    if (this.#closed) return;
    if (event.deployment !== undefined) this.deployment ??= event.deployment;
    if (event.type !== 'chunk') this.lastEventAt = performance.now();
    if (this.#waiter) {
      const waiter = this.#waiter;
      this.#waiter = null;
      waiter(event);
    } else {
      this.#buffer.push(event);
      this.#bufferedBytes += event.payload.length;
      this.onBuffered?.();
    }
  }

  /** The payload characters of the events waiting for the reader. */
  get bufferedBytes(): number {
    return this.#bufferedBytes;
  }

  /** Ends iteration: a waiting reader gets null. */
  close(): void {
    this.#closed = true;
    this.#waiter?.(null);
    this.#waiter = null;
  }

  /** Every event already buffered, at once (so a relay can write them in one call). */
  takeBuffered(): ReplyEvent[] {
    this.#bufferedBytes = 0;
    return this.#buffer.splice(0);
  }

  /** The next event, or null once closed and drained. */
  next(): Promise<ReplyEvent | null> {
    const buffered = this.#buffer.shift();
    if (buffered) {
      this.#bufferedBytes -= buffered.payload.length;
      return Promise.resolve(buffered);
    }
    if (this.#closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ReplyEvent> {
    for (let event = await this.next(); event; event = await this.next()) yield event;
  }
}

/** One request in flight, as a relay reads it: its events, and a way to give it up. */
export interface Dispatch {
  events: EventQueue;
  /** Events after a Last-Event-ID: the client has every one up to it, so none after it is an ended stream, not a failure. */
  resumed?: boolean;
  /** The client went away: remove the waiting job, or abort the running one (a resumable one only stops relaying). */
  cancel(): void;
}
