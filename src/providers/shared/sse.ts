/**
 * Server-sent events from an upstream: bytes → lines → events → JSON, layered like
 * openai-node's src/core/streaming.ts. The frames the gateway writes are src/wire/sse-frames.ts.
 */
import { UpstreamError } from './upstream-error.ts';

/** One dispatched event (WHATWG HTML §9.2.6). */
export interface ServerSentEvent {
  event: string | null;
  id: string | null;
  data: string;
}

/** A JSON event, or the `[DONE]` terminator that OpenAI-style streams end with. */
export type SseJsonEvent = { type: 'json'; event: string | null; id: string | null; data: unknown } | { type: 'done' };

const NEWLINE = /\r\n|\r|\n/;

/** Splits decoded text into lines on \n, \r\n or \r, even when a \r\n pair straddles two pushes. */
export class LineSplitter {
  #pending = '';
  #afterCarriageReturn = false;

  /** Adds text; returns the lines it completed. */
  push(text: string): string[] {
    if (text === '') return [];
    const rest = this.#afterCarriageReturn && text.startsWith('\n') ? text.slice(1) : text;
    this.#afterCarriageReturn = text.endsWith('\r');
    const parts = (this.#pending + rest).split(NEWLINE);
    this.#pending = parts.pop() ?? '';
    return parts;
  }

  /** The unterminated last line, if any. */
  flush(): string[] {
    const pending = this.#pending;
    this.#pending = '';
    return pending === '' ? [] : [pending];
  }
}

/** Assembles lines into events: data lines joined with \n, `event:` and `id:` kept, comments ignored. */
export class SseEventDecoder {
  #event: string | null = null;
  #id: string | null = null;
  #data: string[] = [];

  /** Feeds one line; returns an event when the line is the blank line that dispatches it. */
  decode(line: string): ServerSentEvent | null {
    if (line === '') return this.#dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const raw = colon === -1 ? '' : line.slice(colon + 1);
    const value = raw.startsWith(' ') ? raw.slice(1) : raw;
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
    else if (field === 'id' && !value.includes('\0')) this.#id = value;
    return null;
  }

  #dispatch(): ServerSentEvent | null {
    const hasData = this.#data.length > 0;
    const sse: ServerSentEvent = { event: this.#event, id: this.#id, data: this.#data.join('\n') };
    this.#event = null;
    this.#data = [];
    // The spec keeps the last event id across events but drops events without data.
    return hasData ? sse : null;
  }
}

/** Decodes a byte stream into lines; UTF-8 characters split across chunks are reassembled. */
export async function* iterLines(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  const splitter = new LineSplitter();
  for await (const chunk of source) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    yield* splitter.push(text);
  }
  yield* splitter.push(decoder.decode());
  yield* splitter.flush();
}

/** Decodes a byte stream into events; an unterminated event at the end is discarded, as the spec says. */
export async function* iterSseEvents(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<ServerSentEvent> {
  const decoder = new SseEventDecoder();
  for await (const line of iterLines(source)) {
    const sse = decoder.decode(line);
    if (sse !== null) yield sse;
  }
}

/**
 * Decodes a byte stream into JSON events. `[DONE]` is yielded once as `{type:'done'}`; the rest of
 * the body is still read (and ignored) so the connection can return to the pool.
 * Throws UpstreamError `invalid_response` on data that is not JSON.
 */
export async function* iterSseJson(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseJsonEvent> {
  let done = false;
  for await (const sse of iterSseEvents(source)) {
    if (done) continue;
    if (sse.data.startsWith('[DONE]')) {
      done = true;
      yield { type: 'done' };
      continue;
    }
    yield { type: 'json', event: sse.event, id: sse.id, data: parseJson(sse.data) };
  }
}

function parseJson(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch (err) {
    const excerpt = data.length > 120 ? `${data.slice(0, 120)}…` : data;
    throw new UpstreamError('invalid_response', `Upstream sent an SSE event that is not JSON: ${excerpt}`, { cause: err });
  }
}
