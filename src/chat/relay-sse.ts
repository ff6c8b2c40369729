import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { once } from 'node:events';
import { ClientClosedRequestError, InternalError } from '../errors/gateway-error.ts';
import { toEnvelope } from '../errors/to-envelope.ts';
import { payloadToError, type CompletionEvent } from '../queue/completion-events.ts';
import { SSE_DONE, SSE_KEEP_ALIVE, formatSseData } from '../providers/shared/sse.ts';
import type { Dispatch } from './dispatcher.ts';

/** Limits of one SSE response. */
export interface SseOptions {
  keepAliveMs: number;
  /** A client that lets this much pile up unread is too slow; its stream is ended. */
  maxBufferedBytes: number;
}

function openStream(request: FastifyRequest, reply: FastifyReply): ServerResponse {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
    'x-request-id': request.id,
  });
  return raw;
}

async function write(raw: ServerResponse, text: string, options: SseOptions): Promise<boolean> {
  if (raw.destroyed) return false;
  if (!raw.write(text)) {
    if (raw.writableLength > options.maxBufferedBytes) return false;
    await Promise.race([once(raw, 'drain'), once(raw, 'close')]);
  }
  return !raw.destroyed;
}

// Every event carries its sequence number as the SSE id, so a client that lost the connection
// can resume with Last-Event-ID (and the same Idempotency-Key); gateway-made events (seq 0) have none.
function sseText(request: FastifyRequest, event: CompletionEvent): string {
  const id = event.seq > 0 ? String(event.seq) : undefined;
  if (event.type === 'chunk') return formatSseData(event.payload, id);
  if (event.type === 'done') return id === undefined ? SSE_DONE : `id: ${id}\n${SSE_DONE}`;
  return formatSseData(JSON.stringify(toEnvelope(payloadToError(event.payload), request.id)), id);
}

/**
 * Relays a streamed request as SSE. The headers wait for the first event, so a request
 * that fails before its first token still gets its real status and the JSON envelope;
 * after that, a failure is one `data: {"error":…}` event and the end of the stream.
 */
export async function relaySse(request: FastifyRequest, reply: FastifyReply, dispatch: Dispatch, options: SseOptions): Promise<void> {
  const first = await dispatch.events.next();
  if (!first && reply.raw.destroyed) throw new ClientClosedRequestError();
  if (!first) throw new InternalError('The request ended without an answer.');
  if (first.type === 'error') throw payloadToError(first.payload);
  const raw = openStream(request, reply);
  const keepAlive = setInterval(() => raw.write(SSE_KEEP_ALIVE), options.keepAliveMs);
  try {
    for (let event: CompletionEvent | null = first; event; event = await dispatch.events.next()) {
      // Events that arrived together (one pub/sub message) go out in one write.
      let text = sseText(request, event);
      for (const buffered of dispatch.events.takeBuffered()) text += sseText(request, buffered);
      if (!(await write(raw, text, options))) {
        dispatch.cancel();
        break;
      }
    }
  } finally {
    clearInterval(keepAlive);
    raw.end();
  }
}
