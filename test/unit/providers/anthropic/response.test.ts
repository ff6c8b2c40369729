import { describe, it, expect } from 'vitest';
import { readdirSync } from 'node:fs';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { ModelOf } from '../../../../src/providers/model.ts';
import type { anthropicDescriptor } from '../../../../src/providers/anthropic/descriptor.ts';
import { finishReasonOf, parseMessage } from '../../../../src/providers/anthropic/response.ts';
import { usageOf } from '../../../../src/wire/anthropic-usage.ts';
import { isUpstreamError, type UpstreamError } from '../../../../src/providers/shared/upstream-error.ts';
import { ChatCompletionSchema, type ChatCompletion } from '../../../../src/wire/openai-chat.ts';
import { ANTHROPIC_FIXTURES_DIR, ANTHROPIC_FIXTURE_MODEL, readAnthropicFixture } from '../../../helpers/fake-anthropic.ts';
import { targetFor } from '../../../helpers/provider-calls.ts';

interface ResponseFixture {
  upstream: Record<string, unknown>;
  completion: Omit<ChatCompletion, 'created'>;
}

const REQUIRED_CASES = [
  'text',
  'tool-use',
  'thinking-with-signature',
  'refusal',
  'max-tokens',
  'pause-turn',
  'cache-usage',
  'stop-sequence',
  'context-window-exceeded',
];
const CASES = readdirSync(new URL('responses/', ANTHROPIC_FIXTURES_DIR))
  .filter((file) => file.endsWith('.json'))
  .map((file) => file.slice(0, -'.json'.length))
  .sort();
const target = targetFor<ModelOf<typeof anthropicDescriptor>>(ANTHROPIC_FIXTURE_MODEL, 'sk-ant-test', 'claude-test');
const completionChecker = TypeCompiler.Compile(ChatCompletionSchema);

function fixture(name: string): ResponseFixture {
  return JSON.parse(readAnthropicFixture(`responses/${name}.json`)) as ResponseFixture;
}

function withoutCreated(completion: ChatCompletion): Omit<ChatCompletion, 'created'> {
  const { created: _created, ...rest } = completion;
  return rest;
}

function thrown(parse: () => unknown): UpstreamError {
  try {
    parse();
  } catch (error) {
    if (isUpstreamError(error)) return error;
    throw error;
  }
  throw new Error('expected an UpstreamError');
}

const MESSAGE = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-x',
  content: [{ type: 'text', text: 'Hi' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
};

describe('anthropic response fixtures', () => {
  it('cover every case the brief lists', () => {
    expect(CASES).toEqual(expect.arrayContaining(REQUIRED_CASES));
  });

  it.each(CASES)('%s: translates to the recorded completion', (name) => {
    const { upstream, completion } = fixture(name);
    const before = Math.floor(Date.now() / 1000);
    const translated = parseMessage(upstream, target);
    expect(withoutCreated(translated)).toEqual(completion);
    expect(translated.created).toBeGreaterThanOrEqual(before);
    expect(completionChecker.Errors(translated).First()).toBeUndefined();
  });
});

describe('anthropic finish reasons', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['pause_turn', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    [null, 'stop'],
    ['a_reason_from_the_future', 'stop'],
  ])('maps stop_reason %s to %s', (stopReason, finishReason) => {
    expect(finishReasonOf(stopReason)).toBe(finishReason);
    expect(parseMessage({ ...MESSAGE, stop_reason: stopReason }, target).choices[0]?.finish_reason).toBe(finishReason);
  });

  it('sets the refusal message only for a refusal', () => {
    expect(parseMessage({ ...MESSAGE, stop_reason: 'refusal' }, target).choices[0]?.message.refusal).toBe(
      'The model declined to answer (Anthropic stop_reason "refusal").',
    );
    expect(parseMessage(MESSAGE, target).choices[0]?.message).not.toHaveProperty('refusal');
  });
});

describe('anthropic usage arithmetic', () => {
  it('adds cache reads and writes to the prompt tokens', () => {
    expect(usageOf({ input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 3000, output_tokens: 7 })).toEqual({
      prompt_tokens: 3210,
      completion_tokens: 7,
      total_tokens: 3217,
      prompt_tokens_details: { cached_tokens: 3000, cache_write_tokens: 200 },
    });
  });

  it('counts missing or null fields as 0', () => {
    expect(usageOf({ input_tokens: 5, cache_read_input_tokens: null })).toEqual({
      prompt_tokens: 5,
      completion_tokens: 0,
      total_tokens: 5,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    });
  });

  it('reports no usage when the message has none', () => {
    expect(parseMessage(MESSAGE, target)).not.toHaveProperty('usage');
  });
});

describe('anthropic response shapes', () => {
  it("falls back to the target's upstream model when the message names none", () => {
    const { model: _model, ...unnamed } = MESSAGE;
    expect(parseMessage(unnamed, target).model).toBe('claude-sonnet-test');
  });

  it('ignores block types it does not translate, keeping the order of the rest', () => {
    const content = [
      { type: 'text', text: 'A', citations: [{ type: 'char_location', cited_text: 'x' }] },
      { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
      { type: 'text', text: 'B' },
    ];
    expect(parseMessage({ ...MESSAGE, content }, target).choices[0]?.message).toEqual({ role: 'assistant', content: 'AB' });
  });

  it("keeps a thinking block whose text display 'omitted' left empty, without an empty reasoning_content", () => {
    const content = [
      { type: 'thinking', thinking: '', signature: 'sig-1' },
      { type: 'text', text: 'Done.' },
    ];
    expect(parseMessage({ ...MESSAGE, content }, target).choices[0]?.message).toEqual({
      role: 'assistant',
      content: 'Done.',
      thinking_blocks: [{ type: 'thinking', thinking: '', signature: 'sig-1' }],
    });
  });

  it('throws the in-stream error mapping for an error body sent with a 2xx status', () => {
    const error = thrown(() => parseMessage({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, target));
    expect(error).toMatchObject({ kind: 'server_error', status: 529, code: 'overloaded_error', upstreamMessage: 'Overloaded', retryable: true });
  });

  it.each([
    ['not an object', 'hello'],
    ['without an id', { ...MESSAGE, id: undefined }],
    ['without a content array', { ...MESSAGE, content: 'Hi' }],
    ['with a block that is not an object', { ...MESSAGE, content: ['Hi'] }],
    ['with a tool_use block without a name', { ...MESSAGE, content: [{ type: 'tool_use', id: 'toolu_1', input: {} }] }],
  ])('refuses a body %s as invalid_response', (_what, parsed) => {
    expect(thrown(() => parseMessage(parsed, target))).toMatchObject({ kind: 'invalid_response', retryable: false });
  });
});
