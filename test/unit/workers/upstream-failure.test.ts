/** The client's error for what an upstream call finally threw: the meaning of the provider's failure kept. */
import { describe, expect, it } from 'vitest';
import { toClientError } from '../../../src/worker/upstream-failure.ts';
import { UpstreamError } from '../../../src/providers/shared/upstream-error.ts';
import { errorFromEvent, readAnthropicError } from '../../../src/providers/anthropic/errors.ts';
import { errorFromPayload as geminiErrorFromPayload } from '../../../src/providers/gemini/errors.ts';

const context = { attempts: 2, model: 'claude', fallbackRetryAfterMs: 1000 };

describe('toClientError', () => {
  it("an overload stays one: Anthropic's overloaded_error in a stream, or its HTTP 529, is a 502 provider_failed marked overloaded", () => {
    const midStream = toClientError(errorFromEvent({ type: 'overloaded_error', message: 'Overloaded' }), context);
    expect(midStream).toMatchObject({ status: 502, type: 'api_error', code: 'provider_failed', overloaded: true });
    expect(midStream.message).toBe('The provider failed with HTTP 529 after 2 attempts: Overloaded');
    const response = UpstreamError.fromResponse(
      529,
      {},
      JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      readAnthropicError,
    );
    expect(toClientError(response, context)).toMatchObject({ status: 502, code: 'provider_failed', overloaded: true });
  });

  // A 503 says the service is unavailable, overloaded or down: nothing says which.
  it.each([
    ['an api_error event', errorFromEvent({ type: 'api_error', message: 'Internal error' })],
    ['an HTTP 503', UpstreamError.fromResponse(503, {}, 'Service Unavailable')],
    ["Gemini's 503 UNAVAILABLE in a stream", geminiErrorFromPayload({ code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' })],
    ['a stream cut short', new UpstreamError('broken_stream', 'Upstream stream ended without message_stop after its first event')],
  ])('%s is a 502 provider_failed, not marked overloaded', (_what, error) => {
    expect(toClientError(error, context)).toMatchObject({ status: 502, code: 'provider_failed', overloaded: false });
  });
});

describe('a failure of the gateway itself', () => {
  it('is a 503 to retry when Redis or the store was away, and a 500 otherwise', () => {
    const redisGone = toClientError(new Error("Stream isn't writeable and enableOfflineQueue options is false"), context);
    expect(redisGone).toMatchObject({ status: 503, code: 'service_unavailable', retryAfterSeconds: 1 });
    const storeGone = toClientError(new Error('Connection terminated unexpectedly'), context);
    expect(storeGone).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(toClientError(new TypeError("Cannot read properties of undefined (reading 'choices')"), context)).toMatchObject({
      status: 500,
      code: 'internal_error',
    });
  });
});
