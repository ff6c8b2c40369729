import { describe, it, expect } from 'vitest';
import { errorFromPayload, readGeminiError } from '../../../../src/providers/gemini/errors.ts';
import { UpstreamError } from '../../../../src/providers/shared/upstream-error.ts';

const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

describe('readGeminiError', () => {
  it('reads the message, the canonical status as code, the first field violation and the retry delay', () => {
    const body = {
      error: {
        code: 400,
        message: '* GenerateContentRequest.generation_config.max_output_tokens: must be positive',
        status: 'INVALID_ARGUMENT',
        details: [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'X' },
          {
            '@type': BAD_REQUEST,
            fieldViolations: [
              { description: 'no field' },
              { field: 'generation_config.max_output_tokens', description: 'must be positive' },
              { field: 'other' },
            ],
          },
        ],
      },
    };
    expect(readGeminiError(body)).toEqual({
      message: '* GenerateContentRequest.generation_config.max_output_tokens: must be positive',
      code: 'INVALID_ARGUMENT',
      param: 'generation_config.max_output_tokens',
      retryAfterMs: null,
    });
  });

  it.each([
    ['38s', 38_000],
    ['1.5s', 1500],
    ['0.25s', 250],
    ['0s', 0],
    ['12', null],
    ['soon', null],
  ])('reads RetryInfo retryDelay %s as %s ms', (retryDelay, ms) => {
    const body = { error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': RETRY_INFO, retryDelay }] } };
    expect(readGeminiError(body)?.retryAfterMs).toBe(ms);
  });

  it('reads an error wrapped in a one-element array (the JSON-array stream shape)', () => {
    expect(readGeminiError([{ error: { code: 503, message: 'Overloaded', status: 'UNAVAILABLE' } }])).toEqual({
      message: 'Overloaded',
      code: 'UNAVAILABLE',
      param: null,
      retryAfterMs: null,
    });
  });

  it('keeps an excerpt when the error has no message', () => {
    expect(readGeminiError({ error: { code: 500 } })).toEqual({ message: '{"code":500}', code: null, param: null, retryAfterMs: null });
  });

  it.each([[undefined], ['text'], [{ message: 'x' }], [{ error: 'flat string' }], [[{ error: {} }, { error: {} }]]])('is null for %j', (body) => {
    expect(readGeminiError(body)).toBeNull();
  });

  it('feeds UpstreamError.fromResponse: a 429 body gives the wait, a header wins over it', () => {
    const text = JSON.stringify({
      error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': RETRY_INFO, retryDelay: '21s' }] },
    });
    expect(UpstreamError.fromResponse(429, {}, text, readGeminiError)).toMatchObject({
      kind: 'rate_limited',
      retryAfterMs: 21_000,
      code: 'RESOURCE_EXHAUSTED',
      upstreamMessage: 'Resource has been exhausted',
    });
    expect(UpstreamError.fromResponse(429, { 'retry-after': '2' }, text, readGeminiError).retryAfterMs).toBe(2000);
  });
});

describe('errorFromPayload', () => {
  it.each<[{ code?: number; status?: string }, string, number]>([
    [{ code: 429, status: 'RESOURCE_EXHAUSTED' }, 'rate_limited', 429],
    [{ code: 500, status: 'INTERNAL' }, 'server_error', 500],
    [{ code: 503, status: 'UNAVAILABLE' }, 'server_error', 503],
    [{ code: 504, status: 'DEADLINE_EXCEEDED' }, 'server_error', 504],
    [{ code: 400, status: 'INVALID_ARGUMENT' }, 'invalid_request', 400],
    [{ code: 404, status: 'NOT_FOUND' }, 'invalid_request', 404],
    [{ code: 403, status: 'PERMISSION_DENIED' }, 'unauthorized', 403],
    [{ status: 'RESOURCE_EXHAUSTED' }, 'rate_limited', 429],
    [{ status: 'DEADLINE_EXCEEDED' }, 'server_error', 504],
    [{ code: 0, status: 'SOMETHING' }, 'server_error', 500],
    [{}, 'server_error', 500],
  ])('classifies %j as %s (status %i)', (fields, kind, status) => {
    const error = errorFromPayload({ message: 'boom', ...fields });
    expect(error).toMatchObject({ kind, status, upstreamMessage: 'boom', code: fields.status ?? null });
    expect(error.message).toContain('boom');
  });

  it('keeps the retry delay and the blamed field of the payload', () => {
    const error = errorFromPayload({
      code: 429,
      message: 'Quota exceeded',
      status: 'RESOURCE_EXHAUSTED',
      details: [
        { '@type': RETRY_INFO, retryDelay: '3s' },
        { '@type': BAD_REQUEST, fieldViolations: [{ field: 'contents' }] },
      ],
    });
    expect(error).toMatchObject({ retryable: true, retryAfterMs: 3000, param: 'contents' });
  });
});
