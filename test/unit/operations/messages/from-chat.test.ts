import { describe, expect, it } from 'vitest';
import type Anthropic from '@anthropic-ai/sdk';
import { Value } from '@sinclair/typebox/value';
import type { ModelOf } from '../../../../src/providers/model.ts';
import type { anthropicDescriptor } from '../../../../src/providers/anthropic/descriptor.ts';
import { parseMessage } from '../../../../src/providers/anthropic/response.ts';
import { chatToMessage, stopReasonOf, usageOf } from '../../../../src/operations/messages/from-chat.ts';
import { MessageSchema } from '../../../../src/wire/anthropic-messages.ts';
import type { ChatCompletion, ResponseMessage, Usage } from '../../../../src/wire/openai-chat.ts';
import { ANTHROPIC_FIXTURE_MODEL, readAnthropicFixture } from '../../../helpers/fake-anthropic.ts';
import { targetFor } from '../../../helpers/provider-calls.ts';
import { blocksOf, clientAnswering } from './helpers.ts';

function completion(message: Partial<ResponseMessage>, finishReason: string | null = 'stop', usage?: Usage): ChatCompletion {
  const answer: ChatCompletion = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-test',
    choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finishReason }],
  };
  if (usage !== undefined) answer.usage = usage;
  return answer;
}

/** chatToMessage's answer, typed as the official SDK's Message and checked against the schema. */
function messageOf(answer: ChatCompletion): Anthropic.Messages.Message {
  const message: Anthropic.Messages.Message = chatToMessage(answer, 'svc-model');
  expect(Value.Check(MessageSchema, message)).toBe(true);
  return message;
}

const USAGE: Usage = {
  prompt_tokens: 1000,
  completion_tokens: 50,
  total_tokens: 1050,
  prompt_tokens_details: { cached_tokens: 600, cache_write_tokens: 300 },
  completion_tokens_details: { reasoning_tokens: 20 },
};

describe('chatToMessage', () => {
  it('answers a text completion as a Message of the model the client named', () => {
    expect(messageOf(completion({ content: 'Hello.' }, 'stop', USAGE))).toEqual({
      id: 'msg_chatcmpl-1',
      type: 'message',
      role: 'assistant',
      model: 'svc-model',
      content: [{ type: 'text', text: 'Hello.', citations: null }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: {
        input_tokens: 100,
        output_tokens: 50,
        cache_creation_input_tokens: 300,
        cache_read_input_tokens: 600,
        cache_creation: null,
        output_tokens_details: { thinking_tokens: 20 },
        server_tool_use: null,
        service_tier: null,
        inference_geo: null,
        speed: null,
      },
    });
  });

  it('keeps an id that already has the msg_ prefix', () => {
    expect(messageOf({ ...completion({ content: 'x' }), id: 'msg_abc' }).id).toBe('msg_abc');
  });

  it('orders thinking, text, then tool calls, with parsed arguments', () => {
    const message = messageOf(
      completion(
        {
          content: 'Let me check.',
          thinking_blocks: [
            { type: 'thinking', thinking: 'Need the weather.', signature: 'sig-1' },
            { type: 'redacted_thinking', data: 'opaque' },
          ],
          reasoning_content: 'Need the weather.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'now', arguments: '{}' } },
          ],
        },
        'tool_calls',
      ),
    );
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Need the weather.', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Let me check.', citations: null },
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' }, caller: { type: 'direct' } },
      { type: 'tool_use', id: 'call_2', name: 'now', input: {}, caller: { type: 'direct' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('makes reasoning_content alone one thinking block without signature', () => {
    expect(messageOf(completion({ content: 'Four.', reasoning_content: '2+2=4' })).content).toEqual([
      { type: 'thinking', thinking: '2+2=4', signature: '' },
      { type: 'text', text: 'Four.', citations: null },
    ]);
  });

  it('leaves out empty text and empty reasoning', () => {
    expect(messageOf(completion({ content: '', reasoning_content: '' })).content).toEqual([]);
  });

  it("answers a refusal with the model's words as text", () => {
    const message = messageOf(completion({ content: null, refusal: "I can't help with that." }, 'content_filter'));
    expect(message.content).toEqual([{ type: 'text', text: "I can't help with that.", citations: null }]);
    expect(message.stop_reason).toBe('refusal');
  });

  it.each([
    ['not JSON', '{"city": "Par'],
    ['an array', '[1, 2]'],
    ['a string', '"Paris"'],
    ['empty', ''],
  ])('gives arguments that are %s the input {}', (_what, json) => {
    const message = messageOf(completion({ tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: json } }] }, 'tool_calls'));
    expect(message.content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'f', input: {}, caller: { type: 'direct' } }]);
  });

  it('answers a completion without choices or usage with no content and zero counts', () => {
    const message = messageOf({ ...completion({}), choices: [] });
    expect(message.content).toEqual([]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens_details: null,
    });
  });

  it('is what the official client returns from messages.create()', async () => {
    const message = chatToMessage(
      completion({ content: 'Hi.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, 'tool_calls', USAGE),
      'svc-model',
    );
    const received = await clientAnswering(message).messages.create({ model: 'svc-model', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    expect(received).toEqual(message);
  });
});

describe('stopReasonOf', () => {
  it.each([
    ['stop', false, 'end_turn'],
    [null, false, 'end_turn'],
    ['length', false, 'max_tokens'],
    ['length', true, 'max_tokens'],
    ['tool_calls', true, 'tool_use'],
    ['function_call', true, 'tool_use'],
    ['content_filter', false, 'refusal'],
    ['stop', true, 'tool_use'],
    ['something_new', false, 'end_turn'],
  ] as const)('%s (tool calls: %s) → %s', (finishReason, calledTools, stopReason) => {
    expect(stopReasonOf(finishReason, calledTools)).toBe(stopReason);
  });
});

describe('usageOf', () => {
  it('takes cache reads and writes out of input_tokens', () => {
    expect(usageOf(USAGE)).toMatchObject({ input_tokens: 100, cache_read_input_tokens: 600, cache_creation_input_tokens: 300 });
  });

  it('counts no cache and no thinking when the upstream reports none', () => {
    expect(usageOf({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 })).toMatchObject({
      input_tokens: 12,
      output_tokens: 3,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens_details: null,
    });
  });
});

describe('the Anthropic adapter, then chatToMessage', () => {
  const target = targetFor<ModelOf<typeof anthropicDescriptor>>(ANTHROPIC_FIXTURE_MODEL, 'sk-ant-test', 'claude-test');

  // The stop reasons chat has no counterpart for (pause_turn, stop_sequence, refusal…) do not survive the trip.
  it.each(['text', 'tool-use', 'tool-use-only', 'thinking-with-signature', 'thinking-tool-use', 'cache-usage', 'max-tokens'])(
    '%s: gives back the content, stop reason and usage of the recorded message',
    (name) => {
      const { upstream } = JSON.parse(readAnthropicFixture(`responses/${name}.json`)) as { upstream: Anthropic.Messages.Message };
      const message = chatToMessage(parseMessage(upstream, target), upstream.model);
      expect(blocksOf(message.content)).toEqual(blocksOf(upstream.content));
      expect(message.stop_reason).toBe(upstream.stop_reason);
      expect(message.usage).toMatchObject({
        input_tokens: upstream.usage.input_tokens,
        output_tokens: upstream.usage.output_tokens,
        cache_creation_input_tokens: upstream.usage.cache_creation_input_tokens ?? 0,
        cache_read_input_tokens: upstream.usage.cache_read_input_tokens ?? 0,
      });
    },
  );
});
