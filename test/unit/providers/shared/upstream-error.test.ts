import { describe, it, expect } from 'vitest';
import { errors } from 'undici';
import { UpstreamError, isUpstreamError, parseRetryAfterMs } from '../../../../src/providers/shared/upstream-error.ts';
import { readOpenAiError } from '../../../../src/providers/openai-compatible/errors.ts';

describe('UpstreamError.fromResponse', () => {
  it.each([
    [429, 'rate_limited', true],
    [500, 'server_error', true],
    [503, 'server_error', true],
    [408, 'timeout', true],
    [400, 'invalid_request', false],
    [404, 'invalid_request', false],
    [413, 'invalid_request', false],
    [422, 'invalid_request', false],
    [401, 'unauthorized', false],
    [403, 'unauthorized', false],
    [402, 'client_error', false],
    [409, 'client_error', false],
    [529, 'server_error', true],
  ] as const)('classifies HTTP %i as %s (retryable %s)', (status, kind, retryable) => {
    const error = UpstreamError.fromResponse(status, {}, '');
    expect(error.kind).toBe(kind);
    expect(error.retryable).toBe(retryable);
    expect(error.status).toBe(status);
  });

  it("takes the provider's message, code and param through its error reader", () => {
    const body = JSON.stringify({ error: { message: 'Rate limit reached for gpt-x', type: 'requests', code: 'rate_limit_exceeded', param: null } });
    const error = UpstreamError.fromResponse(429, { 'retry-after': '3' }, body, readOpenAiError);
    expect(error.code).toBe('rate_limit_exceeded');
    expect(error.param).toBeNull();
    expect(error.upstreamMessage).toBe('Rate limit reached for gpt-x');
    expect(error.retryAfterMs).toBe(3000);
    expect(error.message).toContain('Rate limit reached for gpt-x');
  });

  it('takes a param the provider blames', () => {
    const body = JSON.stringify({
      error: { message: 'Unrecognized request argument supplied: foo', type: 'invalid_request_error', code: 'unknown_parameter', param: 'foo' },
    });
    expect(UpstreamError.fromResponse(400, {}, body, readOpenAiError)).toMatchObject({
      kind: 'invalid_request',
      code: 'unknown_parameter',
      param: 'foo',
      upstreamMessage: 'Unrecognized request argument supplied: foo',
    });
  });

  it('takes a wait from the body when the reader finds one and no header says otherwise', () => {
    const reader = () => ({ message: 'quota', retryAfterMs: 7000 });
    expect(UpstreamError.fromResponse(429, {}, '{}', reader).retryAfterMs).toBe(7000);
    expect(UpstreamError.fromResponse(429, { 'retry-after': '2' }, '{}', reader).retryAfterMs).toBe(2000);
  });

  it('accepts {error:"…"} and excerpts anything else', () => {
    expect(UpstreamError.fromResponse(500, {}, '{"error":"model not loaded"}', readOpenAiError).upstreamMessage).toBe('model not loaded');
    const html = `<html>\n<body>${'x'.repeat(500)}</body></html>`;
    const excerpt = UpstreamError.fromResponse(502, {}, html).upstreamMessage ?? '';
    expect(excerpt.startsWith('<html> <body>')).toBe(true);
    expect(excerpt.length).toBeLessThanOrEqual(201);
    expect(UpstreamError.fromResponse(502, {}, '  ').upstreamMessage).toBeNull();
  });

  it('reads fetch Headers as well as undici header records', () => {
    expect(UpstreamError.fromResponse(429, new Headers({ 'retry-after-ms': '250' }), '').retryAfterMs).toBe(250);
    expect(UpstreamError.fromResponse(429, { 'retry-after': ['4', '9'] }, '').retryAfterMs).toBe(4000);
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it('parses delay-seconds, including fractions', () => {
    expect(parseRetryAfterMs({ 'retry-after': '2' }, now)).toBe(2000);
    expect(parseRetryAfterMs({ 'retry-after': '0.5' }, now)).toBe(500);
  });

  it('parses an HTTP-date relative to now, never negative', () => {
    expect(parseRetryAfterMs({ 'retry-after': 'Wed, 01 Jan 2025 00:00:10 GMT' }, now)).toBe(10_000);
    expect(parseRetryAfterMs({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }, now)).toBe(0);
  });

  it('prefers retry-after-ms', () => {
    expect(parseRetryAfterMs({ 'retry-after-ms': '1500', 'retry-after': '9' }, now)).toBe(1500);
  });

  it('returns null when absent or unparseable', () => {
    expect(parseRetryAfterMs({}, now)).toBeNull();
    expect(parseRetryAfterMs({ 'retry-after': 'soon' }, now)).toBeNull();
    expect(parseRetryAfterMs({ 'retry-after': '-3' }, now)).toBeNull();
  });
});

describe('UpstreamError.fromNetwork', () => {
  it('maps undici timeouts to timeout', () => {
    expect(UpstreamError.fromNetwork(new errors.HeadersTimeoutError()).kind).toBe('timeout');
    expect(UpstreamError.fromNetwork(new errors.BodyTimeoutError(), undefined, 'body').kind).toBe('timeout');
    expect(UpstreamError.fromNetwork(new errors.ConnectTimeoutError()).kind).toBe('timeout');
  });

  it('maps refused connections to connect, and socket loss while reading to broken_stream', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(UpstreamError.fromNetwork(refused).kind).toBe('connect');
    expect(UpstreamError.fromNetwork(new TypeError('fetch failed', { cause: refused })).kind).toBe('connect');
    const closed = new errors.SocketError('other side closed');
    expect(UpstreamError.fromNetwork(closed, undefined, 'body').kind).toBe('broken_stream');
  });

  it('maps an abort of our own signal to aborted, whatever the error', () => {
    const controller = new AbortController();
    controller.abort();
    const error = UpstreamError.fromNetwork(new errors.SocketError('closed'), controller.signal);
    expect(error.kind).toBe('aborted');
    expect(error.retryable).toBe(false);
    expect(UpstreamError.fromNetwork(new errors.RequestAbortedError()).kind).toBe('aborted');
  });

  it('returns an UpstreamError unchanged', () => {
    const original = new UpstreamError('broken_stream', 'cut');
    expect(UpstreamError.fromNetwork(original)).toBe(original);
  });
});

describe('isUpstreamError', () => {
  it('recognises instances and look-alikes from another module copy by name', () => {
    expect(isUpstreamError(new UpstreamError('connect', 'x'))).toBe(true);
    const lookAlike = Object.assign(new Error('x'), { name: 'UpstreamError', kind: 'timeout', retryable: true });
    expect(isUpstreamError(lookAlike)).toBe(true);
    expect(isUpstreamError(new Error('x'))).toBe(false);
    expect(isUpstreamError({ name: 'UpstreamError' })).toBe(false);
  });
});
