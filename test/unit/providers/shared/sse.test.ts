import { describe, it, expect } from 'vitest';
import { SSE_DONE, SSE_KEEP_ALIVE, formatSseData } from '../../../../src/wire/sse-frames.ts';
import { iterLines, iterSseEvents, iterSseJson, type ServerSentEvent, type SseJsonEvent } from '../../../../src/providers/shared/sse.ts';
import { isUpstreamError } from '../../../../src/providers/shared/upstream-error.ts';

const encoder = new TextEncoder();

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

/** The bytes cut at `cuts` (sorted offsets). */
function cutAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const bounds = [0, ...cuts, bytes.length];
  return bounds.slice(1).map((end, i) => bytes.slice(bounds[i], end));
}

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of source) items.push(item);
  return items;
}

// Mixed line endings, a comment, event/id fields, multi-line data, and 2-, 3- and 4-byte UTF-8 characters.
const FIXTURE =
  ': ping\r\n' +
  'event: message\r\nid: 7\r\ndata: {"text":"héllo €"}\r\n\r\n' +
  'data: line one\rdata: line two 😀\r\r' +
  'data:no-space\n\n' +
  'data: {"n":2}\n\n' +
  'data: [DONE]\n\n';

const EXPECTED: ServerSentEvent[] = [
  { event: 'message', id: '7', data: '{"text":"héllo €"}' },
  { event: null, id: '7', data: 'line one\nline two 😀' },
  { event: null, id: '7', data: 'no-space' },
  { event: null, id: '7', data: '{"n":2}' },
  { event: null, id: '7', data: '[DONE]' },
];

describe('iterSseEvents', () => {
  const bytes = encoder.encode(FIXTURE);

  it('parses the whole body in one chunk', async () => {
    expect(await collect(iterSseEvents(streamOf([bytes])))).toEqual(EXPECTED);
  });

  it('gives the same events when cut at every single byte boundary', async () => {
    for (let cut = 1; cut < bytes.length; cut += 1) {
      expect(await collect(iterSseEvents(streamOf(cutAt(bytes, [cut])))), `cut at ${cut}`).toEqual(EXPECTED);
    }
  });

  it('gives the same events when cut at every pair of boundaries', async () => {
    for (let first = 1; first < bytes.length; first += 3) {
      for (let second = first + 1; second < bytes.length; second += 1) {
        expect(await collect(iterSseEvents(streamOf(cutAt(bytes, [first, second]))))).toEqual(EXPECTED);
      }
    }
  });

  it('gives the same events one byte at a time', async () => {
    const cuts = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
    expect(await collect(iterSseEvents(streamOf(cutAt(bytes, cuts))))).toEqual(EXPECTED);
  });

  it('does not see an extra blank line when \\r and \\n arrive in different chunks', async () => {
    const body = encoder.encode('data: a\r\ndata: b\r\n\r\n');
    const crlf = body.indexOf(0x0d) + 1;
    expect(await collect(iterSseEvents(streamOf(cutAt(body, [crlf]))))).toEqual([{ event: null, id: null, data: 'a\nb' }]);
  });

  it('reassembles a multi-byte character split inside its bytes', async () => {
    const body = encoder.encode('data: 😀\n\n');
    const inside = body.indexOf(0xf0) + 2;
    expect(await collect(iterLines(streamOf(cutAt(body, [inside]))))).toEqual(['data: 😀', '']);
  });

  it('discards an unterminated event at the end of the body and ignores data-less events', async () => {
    const body = encoder.encode('event: ping\n\ndata: kept\n\ndata: cut');
    expect(await collect(iterSseEvents(streamOf([body])))).toEqual([{ event: null, id: null, data: 'kept' }]);
  });
});

describe('iterSseJson', () => {
  it('yields JSON then done once, ignoring what follows [DONE]', async () => {
    const body = encoder.encode('data: {"a":1}\n\ndata: [DONE]\n\ndata: {"late":true}\n\n');
    const events = await collect(iterSseJson(streamOf([body])));
    const expected: SseJsonEvent[] = [{ type: 'json', event: null, id: null, data: { a: 1 } }, { type: 'done' }];
    expect(events).toEqual(expected);
  });

  it('ends without a done event when the body has no [DONE]', async () => {
    const events = await collect(iterSseJson(streamOf([encoder.encode('data: {"a":1}\n\n')])));
    expect(events.map((event) => event.type)).toEqual(['json']);
  });

  it('throws an invalid_response UpstreamError on data that is not JSON', async () => {
    const error: unknown = await collect(iterSseJson(streamOf([encoder.encode('data: {nope\n\n')]))).catch((e: unknown) => e);
    expect(isUpstreamError(error) && error.kind).toBe('invalid_response');
  });
});

describe('outgoing frames', () => {
  it('formats data with and without an id', () => {
    expect(formatSseData('{"a":1}')).toBe('data: {"a":1}\n\n');
    expect(formatSseData('{"a":1}', '3')).toBe('id: 3\ndata: {"a":1}\n\n');
  });

  it('splits pretty-printed JSON over several data lines that parse back to it', async () => {
    const json = JSON.stringify({ a: [1, 2] }, null, 2);
    const events = await collect(iterSseEvents(streamOf([encoder.encode(formatSseData(json, 'x'))])));
    expect(events).toEqual([{ event: null, id: 'x', data: json }]);
  });

  it('has the [DONE] terminator and a comment keep-alive', async () => {
    expect(SSE_DONE).toBe('data: [DONE]\n\n');
    expect(SSE_KEEP_ALIVE.startsWith(':')).toBe(true);
    expect(await collect(iterSseEvents(streamOf([encoder.encode(SSE_KEEP_ALIVE + SSE_DONE)])))).toEqual([{ event: null, id: null, data: '[DONE]' }]);
  });
});
