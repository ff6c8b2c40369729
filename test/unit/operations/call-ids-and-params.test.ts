/** What translated dialects carry for their clients: provider signatures in call ids, and parameters in the client's own names. */
import { describe, expect, it } from 'vitest';
import { callWithSignature, signedCallId, signedIdOf, splitCallId } from '../../../src/operations/signed-call-ids.ts';
import { inClientTerms, renamingParams } from '../../../src/operations/client-params.ts';
import { carriedThinking, carryThinking } from '../../../src/operations/responses/carried-thinking.ts';
import { type GatewayError, InvalidValueError, UnsupportedParameterError } from '../../../src/errors/gateway-error.ts';

const SIGNATURE = 'CikBcsjafFK168Ibt+VtoxVV0Tsn8O+eU45rzJahzwuKGmMbdMdfpmNpgBwplAXLI2nyA/pIFcnZwFm+7WFmLyMd8R4DXwsjqaeA=';

describe('signed call ids', () => {
  it("carry a Gemini call's signature in an id Anthropic accepts, and give both back", () => {
    const id = signedIdOf({ id: 'fc_1', extra_content: { google: { thought_signature: SIGNATURE } } });
    expect(id).toMatch(/^fc_1__thought__[A-Za-z0-9_-]+$/);
    expect(splitCallId(id)).toEqual({ id: 'fc_1', signature: SIGNATURE });
    expect(callWithSignature(id, { type: 'function', function: { name: 'f', arguments: '{}' } })).toEqual({
      id: 'fc_1',
      type: 'function',
      function: { name: 'f', arguments: '{}' },
      extra_content: { google: { thought_signature: SIGNATURE } },
    });
  });

  it('leave an unsigned id as it is', () => {
    expect(signedCallId('call_1', undefined)).toBe('call_1');
    expect(signedIdOf({ id: 'toolu_1' })).toBe('toolu_1');
    expect(splitCallId('toolu_1')).toEqual({ id: 'toolu_1', signature: undefined });
    expect(callWithSignature('toolu_1', { type: 'function', function: { name: 'f', arguments: '{}' } })).toEqual({
      id: 'toolu_1',
      type: 'function',
      function: { name: 'f', arguments: '{}' },
    });
  });
});

describe('thinking carried in encrypted_content', () => {
  const blocks = [
    { type: 'thinking' as const, thinking: 'Look first.', signature: 'sig-abc' },
    { type: 'redacted_thinking' as const, data: 'EmwKAhgBEgy3va' },
  ];

  it('comes back whole', () => {
    expect(carriedThinking(carryThinking(blocks))).toEqual(blocks);
  });

  it("is not read from another provider's encrypted_content, or from a mangled one", () => {
    expect(carriedThinking('gAAAAABoOpenAIsealed')).toBeNull();
    expect(carriedThinking(carryThinking(blocks).slice(0, -6))).toBeNull();
    expect(carriedThinking(null)).toBeNull();
  });
});

describe('parameters in the client’s terms', () => {
  const names = { response_format: 'text.format', messages: 'input' };

  it('renames the param and the message, keeping status, code and Retry-After', () => {
    const renamed = inClientTerms(new UnsupportedParameterError('response_format', 'claude', "type 'json_object'"), names) as GatewayError;
    expect([renamed.status, renamed.code, renamed.param]).toEqual([422, 'unsupported_parameter', 'text.format']);
    expect(renamed.message).toBe("The model 'claude' does not support the parameter 'text.format' (type 'json_object').");
  });

  it('leaves other errors, and parameters named alike, as they are', () => {
    const same = new InvalidValueError('temperature', "Invalid value for 'temperature'.");
    expect(inClientTerms(same, names)).toBe(same);
    const plain = new Error('boom');
    expect(inClientTerms(plain, names)).toBe(plain);
  });

  it('renames what a piece of work throws, whether it returns a value or a promise', async () => {
    const fail = () => {
      throw new InvalidValueError('messages', "'messages' is too long.");
    };
    expect(() => renamingParams(fail, names)).toThrow("'input' is too long.");
    await expect(renamingParams(async () => fail(), names)).rejects.toMatchObject({ param: 'input' });
    expect(renamingParams(() => 42, names)).toBe(42);
  });
});
