import { GatewayError, type ErrorType } from '../../errors/gateway-error.ts';

/**
 * Events a worker sends the web tier for one request. A non-streamed request gets one
 * `result` or `error`; a streamed one gets `chunk`s, then `done` or `error`.
 */
export type ReplyEventType = 'chunk' | 'result' | 'done' | 'error';

/** One event with its sequence number (1, 2, … per request). */
export interface ReplyEvent {
  seq: number;
  type: ReplyEventType;
  /**
   * On a request's first chunk or its result: the catalog id of the deployment that answered, for
   * the web's header and for a re-run of an interrupted stream. It rides on the event rather than
   * being one, so that it costs no sequence number (a client's SSE ids stay 1, 2, …) and no write.
   */
  deployment?: string;
  /**
   * JSON text: the chunk or completion exactly as the client receives it, or the wire error. A
   * chunk may hold several of the client's events (see `groupPayloads`).
   */
  payload: string;
}

// A record separator: JSON text escapes every control character inside its strings, so this byte
// can only be one between JSON texts.
const GROUP_SEPARATOR = '\u001e';

/**
 * Several of the client's events as one chunk: a dialect that frames one chat chunk as several
 * events (Anthropic's block start and first delta, the Responses API's item and part openings)
 * costs one stream entry and one sequence number for them, not one each.
 */
export function groupPayloads(payloads: readonly string[]): string {
  return payloads.join(GROUP_SEPARATOR);
}

/** The client's events a chunk holds, in order. */
export function payloadParts(payload: string): string[] {
  return payload.split(GROUP_SEPARATOR);
}

const TYPES = new Set<string>(['chunk', 'result', 'done', 'error']);

/** The line stored in the stream: `<type> <payload>`, or `<type>@<deployment> <payload>` (an id has no `@` and no space). */
export function encodeEventLine(type: ReplyEventType, payload: string, deployment: string | null = null): string {
  return deployment === null ? `${type} ${payload}` : `${type}@${deployment} ${payload}`;
}

/** Parses a stored line back into an event; null when it is not one of ours. */
export function parseEventLine(seq: number, line: string): ReplyEvent | null {
  const space = line.indexOf(' ');
  const head = space < 0 ? line : line.slice(0, space);
  const at = head.indexOf('@');
  const type = at < 0 ? head : head.slice(0, at);
  if (!TYPES.has(type) || !Number.isSafeInteger(seq)) return null;
  const event: ReplyEvent = { seq, type: type as ReplyEventType, payload: space < 0 ? '' : line.slice(space + 1) };
  if (at >= 0) event.deployment = head.slice(at + 1);
  return event;
}

/** A reply-channel message: the request id, then one `<seq> <line>` per event (payloads are JSON: no newline). */
export function encodeReplyMessage(requestId: string, events: ReadonlyArray<{ seq: number; line: string }>): string {
  return [requestId, ...events.map((event) => `${event.seq} ${event.line}`)].join('\n');
}

/** Parses a reply-channel message: the request id, then one `<seq> <type> <payload>` line per event. */
export function parseReplyMessage(message: string): { requestId: string; events: ReplyEvent[] } {
  const lines = message.split('\n');
  const events: ReplyEvent[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    const space = line.indexOf(' ');
    const event = parseEventLine(Number(line.slice(0, space)), line.slice(space + 1));
    if (event) events.push(event);
  }
  return { requestId: lines[0] ?? '', events };
}

/** Whether the event ends the request. */
export function isTerminal(type: ReplyEventType): boolean {
  return type !== 'chunk';
}

interface WireError {
  status: number;
  type: ErrorType;
  code: string;
  message: string;
  param: string | null;
  retry_after: number | null;
  /** Written only when true: every other error's payload stays as it was, and one stored without it reads as false. */
  overloaded?: true;
}

/** Serialises a GatewayError for an `error` event. */
export function errorToPayload(error: GatewayError): string {
  const wire: WireError = {
    status: error.status,
    type: error.type,
    code: error.code,
    message: error.message,
    param: error.param,
    retry_after: error.retryAfterSeconds,
  };
  if (error.overloaded) wire.overloaded = true;
  return JSON.stringify(wire);
}

/** Rebuilds the GatewayError an `error` event carries. */
export function payloadToError(payload: string): GatewayError {
  const wire = JSON.parse(payload) as WireError;
  return new GatewayError(wire.status, wire.type, wire.code, wire.message, {
    param: wire.param,
    retryAfterSeconds: wire.retry_after,
    overloaded: wire.overloaded === true,
  });
}
