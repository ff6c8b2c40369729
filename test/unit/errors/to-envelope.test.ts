import { describe, expect, it } from 'vitest';
import { toAnthropicEnvelope, toEnvelope } from '../../../src/errors/to-envelope.ts';
import { GatewayError, InsufficientCreditsError, ModelNotFoundError, ProviderFailedError } from '../../../src/errors/gateway-error.ts';

describe("Anthropic's error shape", () => {
  it.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [402, 'billing_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [408, 'invalid_request_error'],
    [413, 'request_too_large'],
    [422, 'invalid_request_error'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [502, 'api_error'],
    [503, 'overloaded_error'],
    [504, 'timeout_error'],
  ])('status %i → %s', (status, type) => {
    const error = new GatewayError(status, status < 500 ? 'invalid_request_error' : 'api_error', 'some_code', 'What happened.');
    expect(toAnthropicEnvelope(error, 'req_1')).toEqual({
      type: 'error',
      error: { type, message: 'What happened.', code: 'some_code', param: null },
      request_id: 'req_1',
    });
  });

  it("keeps the gateway's code and param, as the spec's envelope has them", () => {
    const error = new ModelNotFoundError('gpt-7');
    expect(toAnthropicEnvelope(error, 'req_2').error).toEqual({ type: 'not_found_error', message: error.message, code: 'model_not_found', param: 'model' });
    expect(toEnvelope(error, 'req_2').error).toMatchObject({ code: 'model_not_found', param: 'model' });
    expect(toAnthropicEnvelope(new InsufficientCreditsError('Out of budget.'), 'req_3').error.type).toBe('billing_error');
  });

  // Anthropic's SDK and Claude Code retry an overloaded_error as an overload; the spec's envelope has no such type.
  it('an upstream overload is overloaded_error with its own status and code; the spec’s envelope is unchanged', () => {
    const overloaded = new ProviderFailedError('The provider failed with HTTP 529 after 1 attempt: Overloaded', { overloaded: true });
    expect(toAnthropicEnvelope(overloaded, 'req_4').error).toEqual({
      type: 'overloaded_error',
      message: overloaded.message,
      code: 'provider_failed',
      param: null,
    });
    expect(toEnvelope(overloaded, 'req_4')).toEqual({
      error: { type: 'api_error', code: 'provider_failed', message: overloaded.message, param: null, request_id: 'req_4' },
    });
    expect(toAnthropicEnvelope(new ProviderFailedError('The provider failed with HTTP 500.'), 'req_5').error.type).toBe('api_error');
  });
});
