import { describe, expect, it } from 'vitest';
import { requestShape } from '../../../../src/operations/chat/request-shape.ts';
import type { GatewayError } from '../../../../src/errors/gateway-error.ts';
import { gatewayError } from '../../../helpers/gateway-errors.ts';

const messages = [{ role: 'user' as const, content: 'hi' }];

function failure(body: Record<string, unknown>): GatewayError {
  return gatewayError(() => requestShape(body));
}

describe('requestShape', () => {
  it('a plain request needs model and messages', () => {
    expect(requestShape({ model: 'm', messages })).toEqual({ kind: 'messages' });
    expect(failure({ messages })).toMatchObject({ code: 'missing_required_field', param: 'model' });
    expect(failure({ model: 'm' })).toMatchObject({ code: 'missing_required_field', param: 'messages' });
    expect(failure({ model: 'm', messages, variables: {} })).toMatchObject({ code: 'invalid_value', param: 'variables' });
  });

  it('a named-prompt request carries prompt and variables, and may stream', () => {
    expect(requestShape({ prompt: 'p', variables: { a: 'b' }, stream: true, stream_options: { include_usage: true }, user: 'u1' })).toEqual({
      kind: 'prompt',
      name: 'p',
      variables: { a: 'b' },
    });
    expect(requestShape({ prompt: 'p' })).toEqual({ kind: 'prompt', name: 'p', variables: {} });
  });

  it('explains why a prompt cannot come with a model, messages or parameters', () => {
    expect(failure({ prompt: 'p', model: 'm' })).toMatchObject({ status: 400, code: 'invalid_value', param: 'model' });
    expect(failure({ prompt: 'p', messages })).toMatchObject({ param: 'messages' });
    const parameter = failure({ prompt: 'p', temperature: 0.1 });
    expect(parameter).toMatchObject({ param: 'temperature' });
    expect(parameter.message).toMatch(/registered parameters apply/);
  });
});
