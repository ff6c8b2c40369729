import { describe, expect, it } from 'vitest';
import {
  encodeEventLine,
  errorToPayload,
  isTerminal,
  parseEventLine,
  parseReplyMessage,
  payloadToError,
  type ReplyEvent,
} from '../../../src/infra/events/reply-events.ts';
import {
  ContextLengthExceededError,
  GatewayError,
  InternalError,
  ProviderFailedError,
  QueueTimeoutError,
  UnsupportedParameterError,
} from '../../../src/errors/gateway-error.ts';

const chunk = JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'two words, and\nmore ' } }] });

describe('event lines', () => {
  it('encode then parse gives the event back', () => {
    const line = encodeEventLine('chunk', chunk);
    expect(line).toBe(`chunk ${chunk}`);
    expect(parseEventLine(7, line)).toEqual({ seq: 7, type: 'chunk', payload: chunk });
  });

  it.each(['chunk', 'result', 'done', 'error'] as const)('round-trips type %s', (type) => {
    expect(parseEventLine(1, encodeEventLine(type, '{"a":"b c"}'))).toEqual({ seq: 1, type, payload: '{"a":"b c"}' });
  });

  it('keeps an empty payload', () => {
    expect(parseEventLine(3, encodeEventLine('done', ''))).toEqual({ seq: 3, type: 'done', payload: '' });
    expect(parseEventLine(3, 'done')).toEqual({ seq: 3, type: 'done', payload: '' });
  });

  it('rejects unknown types and bad sequence numbers', () => {
    expect(parseEventLine(1, 'progress {}')).toBeNull();
    expect(parseEventLine(1, '')).toBeNull();
    expect(parseEventLine(Number.NaN, 'chunk {}')).toBeNull();
    expect(parseEventLine(1.5, 'chunk {}')).toBeNull();
  });

  it('only chunks are not terminal', () => {
    expect((['chunk', 'result', 'done', 'error'] as const).map(isTerminal)).toEqual([false, true, true, true]);
  });
});

describe('parseReplyMessage', () => {
  // The message the Lua script publishes: the request id, then `<seq> <type> <payload>` per event.
  function message(requestId: string, events: ReplyEvent[]): string {
    return [requestId, ...events.map((e) => `${e.seq} ${encodeEventLine(e.type, e.payload)}`)].join('\n');
  }

  it('gives the request id and every event, in order, with payloads containing spaces', () => {
    const events: ReplyEvent[] = [
      { seq: 4, type: 'chunk', payload: chunk },
      { seq: 5, type: 'chunk', payload: '{"text":"a  b   c"}' },
      { seq: 6, type: 'done', payload: '{"usage":{"prompt_tokens":3, "completion_tokens":4}}' },
    ];
    expect(parseReplyMessage(message('req_01H', events))).toEqual({ requestId: 'req_01H', events });
  });

  it('gives no events for a bare request id', () => {
    expect(parseReplyMessage('req_x')).toEqual({ requestId: 'req_x', events: [] });
  });

  it('skips lines that are not events and keeps the rest', () => {
    const parsed = parseReplyMessage(['req_y', '1 chunk {"a":1}', 'garbage', '2 nope {}', '3 result {"b":2}'].join('\n'));
    expect(parsed.events).toEqual([
      { seq: 1, type: 'chunk', payload: '{"a":1}' },
      { seq: 3, type: 'result', payload: '{"b":2}' },
    ]);
  });
});

describe('error payloads', () => {
  function roundTrip(error: GatewayError): GatewayError {
    return payloadToError(errorToPayload(error));
  }

  it('keep status, type, code, message, param and retry_after', () => {
    const original = new QueueTimeoutError(30_000, 7);
    const copy = roundTrip(original);
    expect(copy).toBeInstanceOf(GatewayError);
    expect([copy.status, copy.type, copy.code, copy.message, copy.param, copy.retryAfterSeconds]).toEqual([
      503,
      'api_error',
      'queue_timeout',
      original.message,
      null,
      7,
    ]);
  });

  it('keep a param and a null retry_after', () => {
    const copy = roundTrip(new UnsupportedParameterError('temperature', 'o3-mini'));
    expect([copy.status, copy.code, copy.param, copy.retryAfterSeconds]).toEqual([422, 'unsupported_parameter', 'temperature', null]);
    expect(copy.message).toBe("The model 'o3-mini' does not support the parameter 'temperature'.");
  });

  it('carry exactly the wire fields', () => {
    expect(JSON.parse(errorToPayload(new ContextLengthExceededError('m', 10, 5, 12)))).toEqual({
      status: 422,
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
      message: "The prompt (10 tokens) plus max_tokens (5) exceeds the context window of 'm' (12 tokens).",
      param: 'messages',
      retry_after: null,
    });
  });

  it('keep an upstream overload, written only for one (older events read as none)', () => {
    expect(roundTrip(new ProviderFailedError('Overloaded.', { overloaded: true }))).toMatchObject({ status: 502, code: 'provider_failed', overloaded: true });
    expect(roundTrip(new ProviderFailedError('Broken.')).overloaded).toBe(false);
    expect(JSON.parse(errorToPayload(new ProviderFailedError('Broken.')))).not.toHaveProperty('overloaded');
  });

  it('do not carry the cause', () => {
    const payload = errorToPayload(new InternalError(undefined, new Error('secret db password in stack')));
    expect(payload).not.toContain('secret');
    expect(roundTrip(new InternalError()).code).toBe('internal_error');
  });

  it('survive an event line and a reply message', () => {
    const payload = errorToPayload(new GatewayError(429, 'rate_limit_error', 'rate_limited', 'Slow down, please.', { retryAfterSeconds: 2 }));
    const [event] = parseReplyMessage(`req_z\n9 ${encodeEventLine('error', payload)}`).events;
    expect(event?.type).toBe('error');
    const error = payloadToError(event?.payload ?? '');
    expect([error.status, error.type, error.code, error.message, error.retryAfterSeconds]).toEqual([
      429,
      'rate_limit_error',
      'rate_limited',
      'Slow down, please.',
      2,
    ]);
  });
});
