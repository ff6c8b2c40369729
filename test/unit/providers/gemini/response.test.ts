import { describe, it, expect } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import type { ModelOf } from '../../../../src/providers/model.ts';
import type { geminiDescriptor } from '../../../../src/providers/gemini/descriptor.ts';
import { FINISH_REASONS } from '../../../../src/providers/gemini/output.ts';
import { parseGeminiCompletion } from '../../../../src/providers/gemini/response.ts';
import { isUpstreamError, type UpstreamError } from '../../../../src/providers/shared/upstream-error.ts';
import type { ChatCompletion } from '../../../../src/wire/openai-chat.ts';
import { GEMINI_FIXTURES_DIR, GEMINI_FIXTURE_MODEL } from '../../../helpers/fake-gemini.ts';
import { targetFor } from '../../../helpers/provider-calls.ts';

const DIR = `${GEMINI_FIXTURES_DIR}responses/`;
const fixtures = readdirSync(DIR)
  .filter((file) => file.endsWith('.json'))
  .map((file) => [file.replace(/\.json$/, ''), JSON.parse(readFileSync(DIR + file, 'utf8')) as { upstream: unknown; completion: unknown }] as const);

const target = targetFor<ModelOf<typeof geminiDescriptor>>(GEMINI_FIXTURE_MODEL, 'test-key');

function parse(upstream: unknown): ChatCompletion {
  return parseGeminiCompletion(upstream, target);
}

function withoutCreated(completion: ChatCompletion): Omit<ChatCompletion, 'created'> {
  const { created: _created, ...rest } = completion;
  return rest;
}

function failureOf(run: () => unknown): UpstreamError {
  try {
    run();
  } catch (error) {
    if (isUpstreamError(error)) return error;
    throw error;
  }
  throw new Error('expected an UpstreamError');
}

const answer = (candidate: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ candidates: [candidate], ...extra });

describe('gemini response fixtures', () => {
  it('covers the cases the adapter documents', () => {
    expect(fixtures.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        'text',
        'function-calls',
        'thoughts',
        'max-tokens',
        'safety',
        'recitation',
        'malformed-function-call',
        'prompt-blocked',
        'cached-usage',
      ]),
    );
  });

  it.each(fixtures)('%s: translates to the recorded completion', (_name, fixture) => {
    const before = Math.floor(Date.now() / 1000);
    const completion = parse(fixture.upstream);
    expect(withoutCreated(completion)).toEqual(fixture.completion);
    expect(completion.created).toBeGreaterThanOrEqual(before);
  });
});

describe('gemini response translation', () => {
  it.each([...Object.entries(FINISH_REASONS), ['SOMETHING_NEW', 'stop']])('maps finishReason %s to %s', (reason, expected) => {
    const choice = parse(answer({ content: { role: 'model', parts: [{ text: 'x' }] }, finishReason: reason })).choices[0];
    expect(choice?.finish_reason).toBe(expected);
    if (expected === 'content_filter') expect(choice?.message.refusal).toBe(`The provider stopped the answer (Gemini finishReason ${reason}).`);
    else expect(choice?.message.refusal).toBeUndefined();
  });

  it.each([
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['BLOCKLIST', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['SPII', 'content_filter'],
    ['IMAGE_SAFETY', 'content_filter'],
    ['MAX_TOKENS', 'length'],
    ['MALFORMED_FUNCTION_CALL', 'stop'],
    ['UNEXPECTED_TOOL_CALL', 'stop'],
    ['LANGUAGE', 'stop'],
    ['OTHER', 'stop'],
    ['FINISH_REASON_UNSPECIFIED', 'stop'],
  ])('documents %s as %s', (reason, expected) => {
    expect(FINISH_REASONS[reason]).toBe(expected);
  });

  it("makes STOP 'tool_calls' only when the candidate called a function, not MAX_TOKENS", () => {
    const call = { functionCall: { name: 'f', args: {} } };
    expect(parse(answer({ content: { parts: [call] }, finishReason: 'STOP' })).choices[0]?.finish_reason).toBe('tool_calls');
    expect(parse(answer({ content: { parts: [call] }, finishReason: 'MAX_TOKENS' })).choices[0]?.finish_reason).toBe('length');
  });

  it('gives a call without id a fresh call_ id, and arguments {} without args', () => {
    const completion = parse(
      answer({ content: { parts: [{ functionCall: { name: 'a' } }, { functionCall: { name: 'b', args: { x: 1 } } }] }, finishReason: 'STOP' }),
    );
    const calls = completion.choices[0]?.message.tool_calls ?? [];
    expect(calls.map((call) => call.id)).toEqual([expect.stringMatching(/^call_[0-9a-f]{24}$/), expect.stringMatching(/^call_[0-9a-f]{24}$/)]);
    expect(calls[0]?.id).not.toBe(calls[1]?.id);
    expect(calls.map((call) => call.function.arguments)).toEqual(['{}', '{"x":1}']);
    expect(calls[0]?.extra_content).toBeUndefined();
  });

  it('joins text parts and thought parts separately, ignoring parts it does not translate', () => {
    const parts = [
      { text: 'Thinking ', thought: true },
      { text: 'A' },
      { executableCode: { language: 'PYTHON', code: 'print(1)' } },
      { text: 'more', thought: true },
      { text: 'B' },
    ];
    const message = parse(answer({ content: { parts }, finishReason: 'STOP' })).choices[0]?.message;
    expect(message).toEqual({ role: 'assistant', content: 'AB', reasoning_content: 'Thinking more' });
  });

  it('makes one choice per candidate, indexed by the candidate index or position', () => {
    const completion = parse({
      candidates: [
        { content: { parts: [{ text: 'one' }] }, finishReason: 'STOP', index: 1 },
        { content: { parts: [{ text: 'two' }] }, finishReason: 'MAX_TOKENS' },
      ],
    });
    expect(completion.choices.map((choice) => [choice.index, choice.message.content, choice.finish_reason])).toEqual([
      [1, 'one', 'stop'],
      [1, 'two', 'length'],
    ]);
  });

  it('fills id and model when Gemini omits them, and reports no usage without usageMetadata', () => {
    const completion = parse(answer({ content: { parts: [{ text: 'x' }] }, finishReason: 'STOP' }));
    expect(completion.id).toMatch(/^chatcmpl-[0-9a-f-]{36}$/);
    expect(completion.model).toBe('gemini-test-flash');
    expect(completion.usage).toBeUndefined();
  });

  it('counts thought tokens as completion and reasoning tokens, and cached tokens as prompt details', () => {
    const usage = parse(
      answer(
        { content: { parts: [{ text: 'x' }] }, finishReason: 'STOP' },
        { usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 20, thoughtsTokenCount: 30, cachedContentTokenCount: 60, totalTokenCount: 150 } },
      ),
    ).usage;
    expect(usage).toEqual({
      prompt_tokens: 100,
      completion_tokens: 50,
      total_tokens: 150,
      prompt_tokens_details: { cached_tokens: 60 },
      completion_tokens_details: { reasoning_tokens: 30 },
    });
    expect(parse(answer({ finishReason: 'SAFETY' }, { usageMetadata: {} })).usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('throws the classified error for an error object in a 2xx body', () => {
    const error = failureOf(() =>
      parse({
        error: {
          code: 429,
          message: 'Quota exceeded',
          status: 'RESOURCE_EXHAUSTED',
          details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' }],
        },
      }),
    );
    expect(error).toMatchObject({
      kind: 'rate_limited',
      retryable: true,
      status: 429,
      code: 'RESOURCE_EXHAUSTED',
      upstreamMessage: 'Quota exceeded',
      retryAfterMs: 7000,
    });
  });

  it.each([
    ['not an object', [1, 2]],
    ['no candidates and no block reason', { usageMetadata: { promptTokenCount: 1 } }],
    ['candidates that is not an array', { candidates: { content: {} } }],
    ['a candidate that is not an object', { candidates: ['x'] }],
    ['parts that is not an array', answer({ content: { parts: 'x' } })],
    ['a part that is not an object', answer({ content: { parts: [null] } })],
    ['a function call without a name', answer({ content: { parts: [{ functionCall: { args: {} } }] } })],
  ])('refuses %s as invalid_response', (_why, upstream) => {
    expect(failureOf(() => parse(upstream))).toMatchObject({ kind: 'invalid_response', retryable: false });
  });
});
