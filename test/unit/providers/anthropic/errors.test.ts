import { describe, it, expect } from 'vitest';
import { errorDetailOf, errorFromEvent, readAnthropicError } from '../../../../src/providers/anthropic/errors.ts';
import { UpstreamError } from '../../../../src/providers/shared/upstream-error.ts';

describe('readAnthropicError', () => {
  it("reads Anthropic's error body: the message, and its type as the code", () => {
    expect(readAnthropicError({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } })).toEqual({
      message: 'max_tokens: Field required',
      code: 'invalid_request_error',
    });
  });

  it.each([
    ['an OpenAI-shaped body', { error: { message: 'bad', type: 'invalid_request_error' } }],
    ['a message', { type: 'message', id: 'msg_1' }],
    ['an error type without its object', { type: 'error', error: 'Overloaded' }],
    ['null', null],
    ['a string', 'Bad Gateway'],
    ['nothing', undefined],
  ])('returns null for %s', (_what, body) => {
    expect(readAnthropicError(body)).toBeNull();
  });

  it('keeps an excerpt when the error object has no message', () => {
    expect(errorDetailOf({ type: 'error', error: { type: 'api_error', detail: 'boom' } })).toEqual({
      type: 'api_error',
      message: '{"type":"api_error","detail":"boom"}',
    });
  });
});

describe('status errors classified with the Anthropic reader', () => {
  const body = (type: string, message: string) => JSON.stringify({ type: 'error', error: { type, message } });

  it.each([
    [400, 'invalid_request_error', 'invalid_request', false],
    [401, 'authentication_error', 'unauthorized', false],
    [403, 'permission_error', 'unauthorized', false],
    [404, 'not_found_error', 'invalid_request', false],
    [413, 'request_too_large', 'invalid_request', false],
    [429, 'rate_limit_error', 'rate_limited', true],
    [500, 'api_error', 'server_error', true],
    [529, 'overloaded_error', 'server_error', true],
  ])('HTTP %d %s → %s', (status, type, kind, retryable) => {
    const error = UpstreamError.fromResponse(status, { 'retry-after': '3' }, body(type, `Fake ${type}`), readAnthropicError);
    expect(error).toMatchObject({ kind, retryable, status, code: type, upstreamMessage: `Fake ${type}`, retryAfterMs: 3000 });
    expect(error.message).toBe(`Upstream responded with HTTP ${status}: Fake ${type}`);
  });
});

describe('errorFromEvent', () => {
  it.each([
    ['overloaded_error', 'server_error', 529, true],
    ['rate_limit_error', 'rate_limited', 429, true],
    ['api_error', 'server_error', 500, true],
    ['invalid_request_error', 'invalid_request', 400, false],
    ['permission_error', 'server_error', null, true],
    ['some_new_error', 'server_error', null, true],
  ])('maps an in-stream %s to %s (status %s)', (type, kind, status, retryable) => {
    const error = errorFromEvent({ type, message: 'Something happened' });
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind, status, retryable, code: type, upstreamMessage: 'Something happened' });
    expect(error.message).toBe(`Upstream reported an error in the stream: ${type}: Something happened`);
  });
});
