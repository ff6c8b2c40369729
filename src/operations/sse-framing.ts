/**
 * How an operation's stream is written as SSE. The worker's events are already in the client's
 * dialect (a chat chunk, an Anthropic event, a Responses event); the framing adds what the dialect
 * puts around them: OpenAI chat's bare `data:` lines ending with `[DONE]`, or named `event:` lines
 * (Anthropic, Responses), which end with their own last event.
 */
import type { GatewayError } from '../errors/gateway-error.ts';
import { toEnvelope } from '../errors/to-envelope.ts';
import { SSE_DONE, formatSseData, formatSseEvent } from '../wire/sse-frames.ts';
import { payloadParts } from '../infra/events/reply-events.ts';

/** Where an event sits: its SSE id (absent for the gateway's own events) and the request's id. */
export interface FrameContext {
  requestId: string;
  id: string | undefined;
  /** The client's event sent last before this one, if any (a dialect that numbers its events numbers an error after it). */
  previous: string | null;
}

/** One operation's SSE framing. */
export interface SseFraming {
  /** One event a worker produced. */
  event(payload: string, context: FrameContext): string;
  /** The end of a successful stream. */
  done(context: FrameContext): string;
  /** A failure after the stream began (before it, the client gets the error's status and body). */
  error(error: GatewayError, context: FrameContext): string;
}

/**
 * Each of a chunk's events framed by `frame`; only the last carries the chunk's id, so that a client
 * resuming with it has had them all.
 */
function framedParts(payload: string, id: string | undefined, frame: (part: string, id: string | undefined) => string): string {
  const parts = payloadParts(payload);
  let text = '';
  for (let i = 0; i < parts.length; i++) text += frame(parts[i] as string, i === parts.length - 1 ? id : undefined);
  return text;
}

/** OpenAI chat: `data:` lines, `data: [DONE]` at the end, and an error as a `data:` line with the envelope. */
export const openAiDataFraming: SseFraming = {
  event: (payload, { id }) => framedParts(payload, id, formatSseData),
  done: ({ id }) => (id === undefined ? SSE_DONE : `id: ${id}\n${SSE_DONE}`),
  error: (error, { requestId, id }) => formatSseData(JSON.stringify(toEnvelope(error, requestId)), id),
};

const TYPE_PREFIX = '{"type":"';

/**
 * The event's name: its payload's `type`. Workers write `type` first, so it is read off the start
 * of the text rather than by parsing every event again.
 */
export function eventName(payload: string): string {
  if (payload.startsWith(TYPE_PREFIX)) {
    const end = payload.indexOf('"', TYPE_PREFIX.length);
    if (end > 0) return payload.slice(TYPE_PREFIX.length, end);
  }
  const type = (JSON.parse(payload) as { type?: unknown }).type;
  return typeof type === 'string' ? type : 'message';
}

/**
 * Named events (`event: <type>` then `data:`), as Anthropic and the Responses API send them: the
 * stream ends with the dialect's own last event, so `done` writes nothing; an error is the dialect's
 * `error` event.
 */
export function namedEventFraming(errorEvent: (error: GatewayError, context: FrameContext) => object): SseFraming {
  return {
    event: (payload, { id }) => framedParts(payload, id, (part, partId) => formatSseEvent(eventName(part), part, partId)),
    done: () => '',
    error: (error, context) => formatSseEvent('error', JSON.stringify(errorEvent(error, context)), context.id),
  };
}
