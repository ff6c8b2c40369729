import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { ClientClosedRequestError, InternalError } from '../../errors/gateway-error.ts';
import { payloadToError, type ReplyEvent } from '../../infra/events/reply-events.ts';
import { SSE_KEEP_ALIVE } from '../../wire/sse-frames.ts';
import type { SseFraming } from '../../operations/sse-framing.ts';
import type { Dispatch } from '../../infra/events/event-queue.ts';
import type { EventQueue } from '../../infra/events/event-queue.ts';
import { DEPLOYMENT_HEADER } from './deployment-header.ts';

/** Limits of one SSE response. */
export interface SseOptions {
  keepAliveMs: number;
  /** A client that lets this much pile up unread is too slow; its stream is ended. */
  maxBufferedBytes: number;
}

function openStream(request: FastifyRequest, reply: FastifyReply, deployment: string | null): ServerResponse {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
    'x-request-id': request.id,
    ...(deployment === null ? {} : { [DEPLOYMENT_HEADER]: deployment }),
  });
  return raw;
}

/**
 * Writes, then waits while the client reads what is buffered. False when the client is gone, or
 * too slow: what it leaves unread (the socket's buffer and the events queued behind it meanwhile)
 * passes the limit. A client reading a byte a second is thus dropped, not kept with a growing buffer.
 */
async function write(raw: ServerResponse, text: string, events: EventQueue, options: SseOptions): Promise<boolean> {
  if (raw.destroyed) return false;
  if (raw.write(text)) return true;
  const tooMuch = () => raw.writableLength + events.bufferedBytes > options.maxBufferedBytes;
  if (tooMuch()) return false;
  const drained = await new Promise<boolean>((resolve) => {
    const done = (ok: boolean) => {
      raw.off('drain', onDrain);
      raw.off('close', onClose);
      events.onBuffered = null;
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    raw.on('drain', onDrain);
    raw.on('close', onClose);
    events.onBuffered = () => {
      if (tooMuch()) done(false);
    };
  });
  return drained && !raw.destroyed;
}

// Every event carries its sequence number as the SSE id, so a client that lost the connection
// can resume with Last-Event-ID (and the same Idempotency-Key); gateway-made events (seq 0) have none.
function sseText(request: FastifyRequest, reply: FastifyReply, framing: SseFraming, event: ReplyEvent, previous: string | null): string {
  const context = { requestId: request.id, id: event.seq > 0 ? String(event.seq) : undefined, previous };
  if (event.type === 'chunk') return framing.event(event.payload, context);
  if (event.type === 'done') return framing.done(context);
  const error = payloadToError(event.payload);
  // The status is 200 by now; the metrics still count the stream by its error's code.
  reply.errorCode = error.code;
  return framing.error(error, context);
}

/**
 * Relays a streamed request as SSE, framed as its operation says. The headers wait for the first
 * event, so a request that fails before its first token still gets its real status and error body;
 * after that, a failure is one error event (`data: {"error":…}` for chat) and the end of the stream.
 * `opening`, when given, is the first event.
 */
export async function relaySse(
  request: FastifyRequest,
  reply: FastifyReply,
  dispatch: Dispatch,
  framing: SseFraming,
  options: SseOptions,
  opening?: string,
): Promise<void> {
  // A stream that opens with an event of the web tier's own (a background response's response.queued) opens at once.
  const first = opening === undefined ? await dispatch.events.next() : { seq: 0, type: 'chunk' as const, payload: opening };
  if (!first && reply.raw.destroyed) throw new ClientClosedRequestError();
  if (!first && dispatch.resumed) {
    // Resumed after its last event (its [DONE] or its error): nothing is left to send, and the stream is over.
    openStream(request, reply, dispatch.events.deployment).end();
    return;
  }
  if (!first) throw new InternalError('The request ended without an answer.');
  if (first.type === 'error') throw payloadToError(first.payload);
  const raw = openStream(request, reply, dispatch.events.deployment);
  const keepAlive = setInterval(() => raw.write(SSE_KEEP_ALIVE), options.keepAliveMs);
  let dropped = false;
  // The chunk sent last (its last event is what a dialect numbering its events counts from).
  let previous: string | null = null;
  try {
    for (let event: ReplyEvent | null = first; event; event = await dispatch.events.next()) {
      // Events that arrived together (one pub/sub message) go out in one write.
      let text = sseText(request, reply, framing, event, previous);
      if (event.type === 'chunk') previous = event.payload;
      for (const buffered of dispatch.events.takeBuffered()) {
        text += sseText(request, reply, framing, buffered, previous);
        if (buffered.type === 'chunk') previous = buffered.payload;
      }
      if (!(await write(raw, text, dispatch.events, options))) {
        dropped = true;
        dispatch.cancel();
        break;
      }
    }
  } finally {
    clearInterval(keepAlive);
    // end() would wait for a client that does not read to take what is buffered: drop it instead.
    if (dropped) raw.destroy();
    else raw.end();
  }
}
