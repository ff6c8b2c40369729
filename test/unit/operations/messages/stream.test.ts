/** MessageStreamTranslator: chat chunks → Anthropic's stream events, checked event by event and through the official SDK. */
import { describe, expect, it } from 'vitest';
import type Anthropic from '@anthropic-ai/sdk';
import { Value } from '@sinclair/typebox/value';
import type { ModelOf } from '../../../../src/providers/model.ts';
import type { anthropicDescriptor } from '../../../../src/providers/anthropic/descriptor.ts';
import { translateStream } from '../../../../src/providers/anthropic/stream.ts';
import { isUpstreamError } from '../../../../src/providers/shared/upstream-error.ts';
import { MessageStreamTranslator, chatToMessage } from '../../../../src/operations/messages/from-chat.ts';
import { MessageStreamEventSchema } from '../../../../src/wire/anthropic-messages.ts';
import type { ChatCompletion, ChatCompletionChunk, ChunkDelta, Usage } from '../../../../src/wire/openai-chat.ts';
import { ANTHROPIC_FIXTURE_MODEL, readAnthropicFixture } from '../../../helpers/fake-anthropic.ts';
import { collect, targetFor } from '../../../helpers/provider-calls.ts';
import { accumulated, blocksOf, sseOf } from './helpers.ts';

type Event = Anthropic.Messages.RawMessageStreamEvent;

const USAGE: Usage = { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 0 } };

function chunk(delta: ChunkDelta, finishReason: string | null = null): ChatCompletionChunk {
  return {
    id: 'chatcmpl-9',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'gpt-test',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

function usageChunk(usage: Usage): ChatCompletionChunk {
  return { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-test', choices: [], usage };
}

/** Every event of a stream, typed as the official SDK's events, each checked against the schema and for `type` as its first key. */
function translate(chunks: ChatCompletionChunk[], usage: Usage | null = USAGE): Event[] {
  const translator = new MessageStreamTranslator({ id: 'chatcmpl-9', model: 'svc-model', inputTokens: 111 });
  const events: Event[] = [];
  for (const piece of chunks) events.push(...translator.push(piece));
  events.push(...translator.finish(usage));
  for (const event of events) {
    expect(Value.Check(MessageStreamEventSchema, event)).toBe(true);
    expect(JSON.stringify(event)).toMatch(/^\{"type":"/);
  }
  return events;
}

/** The events between message_start and message_delta, as [type, index, what] rows. */
function blockEvents(events: Event[]): unknown[] {
  return events.flatMap((event) => {
    switch (event.type) {
      case 'content_block_start':
        return [['start', event.index, event.content_block.type]];
      case 'content_block_delta':
        return [['delta', event.index, event.delta]];
      case 'content_block_stop':
        return [['stop', event.index]];
      default:
        return [];
    }
  });
}

const text = (piece: string) => ({ type: 'text_delta', text: piece });
const thinking = (piece: string) => ({ type: 'thinking_delta', thinking: piece });
const signature = (value: string) => ({ type: 'signature_delta', signature: value });
const json = (piece: string) => ({ type: 'input_json_delta', partial_json: piece });

describe('MessageStreamTranslator: the frame', () => {
  it('sends message_start first, then the blocks, then message_delta with the usage, then message_stop', () => {
    const events = translate([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({}, 'stop'),
      usageChunk(USAGE),
    ]);
    expect(events).toEqual([
      {
        type: 'message_start',
        message: {
          id: 'msg_chatcmpl-9',
          type: 'message',
          role: 'assistant',
          model: 'svc-model',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          stop_details: null,
          container: null,
          diagnostics: null,
          usage: {
            input_tokens: 111,
            output_tokens: 0,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            cache_creation: null,
            output_tokens_details: null,
            server_tool_use: null,
            service_tier: null,
            inference_geo: null,
            speed: null,
          },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '', citations: null } },
      { type: 'content_block_delta', index: 0, delta: text('Hel') },
      { type: 'content_block_delta', index: 0, delta: text('lo') },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null, stop_details: null, container: null },
        usage: {
          input_tokens: 20,
          output_tokens: 30,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 100,
          output_tokens_details: null,
          server_tool_use: null,
        },
      },
      { type: 'message_stop' },
    ]);
  });

  it('frames a stream without content: message_start, message_delta, message_stop', () => {
    expect(translate([]).map((event) => event.type)).toEqual(['message_start', 'message_delta', 'message_stop']);
    expect(translate([chunk({ role: 'assistant' }), chunk({}, 'stop')]).map((event) => event.type)).toEqual(['message_start', 'message_delta', 'message_stop']);
  });

  it('sends nothing more after finish', () => {
    const translator = new MessageStreamTranslator({ id: 'msg_1', model: 'm', inputTokens: 1 });
    expect(translator.finish(USAGE).map((event) => event.type)).toEqual(['message_start', 'message_delta', 'message_stop']);
    expect(translator.push(chunk({ content: 'late' }))).toEqual([]);
    expect(translator.finish(USAGE)).toEqual([]);
  });

  it.each([
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
    [null, 'end_turn'],
  ])('sends finish reason %s as stop_reason %s', (finishReason, stopReason) => {
    const events = translate([chunk({ content: 'x' }), chunk({}, finishReason)]);
    expect(events.find((event) => event.type === 'message_delta')).toMatchObject({ delta: { stop_reason: stopReason } });
  });

  it("leaves message_start's estimate standing when the upstream reported no usage", async () => {
    const events = translate([chunk({ content: 'x' }, 'stop')], null);
    expect(events.find((event) => event.type === 'message_delta')).toMatchObject({
      usage: { input_tokens: null, output_tokens: 0, cache_read_input_tokens: null },
    });
    expect((await accumulated(sseOf(events))).usage).toMatchObject({ input_tokens: 111, output_tokens: 0 });
  });

  it('reports the thinking tokens of the usage', () => {
    const events = translate([chunk({ content: 'x' }, 'stop')], {
      prompt_tokens: 5,
      completion_tokens: 9,
      total_tokens: 14,
      completion_tokens_details: { reasoning_tokens: 4 },
    });
    expect(events.find((event) => event.type === 'message_delta')).toMatchObject({
      usage: { input_tokens: 5, output_tokens: 9, output_tokens_details: { thinking_tokens: 4 } },
    });
  });
});

describe('MessageStreamTranslator: blocks', () => {
  it('streams reasoning as a thinking block, signed by thinking_blocks, before the text', () => {
    const events = translate([
      chunk({ role: 'assistant', reasoning_content: 'Two ' }),
      chunk({ reasoning_content: 'plus two.' }),
      chunk({ thinking_blocks: [{ type: 'thinking', thinking: 'Two plus two.', signature: 'sig-1' }] }),
      chunk({ content: 'Four.' }, 'stop'),
    ]);
    expect(blockEvents(events)).toEqual([
      ['start', 0, 'thinking'],
      ['delta', 0, thinking('Two ')],
      ['delta', 0, thinking('plus two.')],
      ['delta', 0, signature('sig-1')],
      ['stop', 0],
      ['start', 1, 'text'],
      ['delta', 1, text('Four.')],
      ['stop', 1],
    ]);
  });

  it('reads thinking_blocks as all the blocks so far: a redacted block and a second signed block get their own blocks', () => {
    const first = { type: 'thinking' as const, thinking: 'A.', signature: 'sig-a' };
    const redacted = { type: 'redacted_thinking' as const, data: 'opaque' };
    const events = translate([
      chunk({ reasoning_content: 'A.' }),
      chunk({ thinking_blocks: [first] }),
      chunk({ thinking_blocks: [first, redacted] }),
      chunk({ reasoning_content: 'B.' }),
      chunk({ thinking_blocks: [first, redacted, { type: 'thinking', thinking: 'B.', signature: 'sig-b' }] }),
      chunk({ content: 'Done.' }, 'stop'),
    ]);
    expect(blockEvents(events)).toEqual([
      ['start', 0, 'thinking'],
      ['delta', 0, thinking('A.')],
      ['delta', 0, signature('sig-a')],
      ['stop', 0],
      ['start', 1, 'redacted_thinking'],
      ['stop', 1],
      ['start', 2, 'thinking'],
      ['delta', 2, thinking('B.')],
      ['delta', 2, signature('sig-b')],
      ['stop', 2],
      ['start', 3, 'text'],
      ['delta', 3, text('Done.')],
      ['stop', 3],
    ]);
    expect(events[5]).toEqual({ type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'opaque' } });
  });

  it('sends the text of a thinking block that came only in thinking_blocks', () => {
    const events = translate([chunk({ thinking_blocks: [{ type: 'thinking', thinking: 'Quietly.', signature: 'sig' }] }), chunk({ content: 'Hi.' }, 'stop')]);
    expect(blockEvents(events).slice(0, 4)).toEqual([
      ['start', 0, 'thinking'],
      ['delta', 0, thinking('Quietly.')],
      ['delta', 0, signature('sig')],
      ['stop', 0],
    ]);
  });

  it('opens a tool_use block per call, streaming its arguments as input_json_delta', () => {
    const events = translate([
      chunk({ content: 'Checking.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'now', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(blockEvents(events)).toEqual([
      ['start', 0, 'text'],
      ['delta', 0, text('Checking.')],
      ['stop', 0],
      ['start', 1, 'tool_use'],
      ['delta', 1, json('{"city":')],
      ['delta', 1, json('"Paris"}')],
      ['stop', 1],
      ['start', 2, 'tool_use'],
      ['delta', 2, json('{}')],
      ['stop', 2],
    ]);
    expect(events[4]).toEqual({
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'call_a', name: 'get_weather', input: {}, caller: { type: 'direct' } },
    });
    expect(events.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'tool_use' } });
  });

  it("sends tool_use as the stop reason of tool calls a server finished with 'stop'", () => {
    const events = translate([chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'now', arguments: '{}' } }] }, 'stop')]);
    expect(events.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'tool_use' } });
  });

  it('gives a call without id one of its own', () => {
    const events = translate([chunk({ tool_calls: [{ index: 0, function: { name: 'now', arguments: '{}' } }] }, 'tool_calls')]);
    const start = events.find((event) => event.type === 'content_block_start');
    expect(start).toMatchObject({ content_block: { type: 'tool_use', name: 'now' } });
    expect(start?.type === 'content_block_start' && start.content_block.type === 'tool_use' ? start.content_block.id : '').toMatch(/^toolu_/);
  });

  it('refuses a call that continues after its block closed', () => {
    const translator = new MessageStreamTranslator({ id: 'msg_1', model: 'm', inputTokens: 1 });
    translator.push(chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'a', arguments: '{' } }] }));
    translator.push(chunk({ tool_calls: [{ index: 1, id: 'call_b', function: { name: 'b', arguments: '{}' } }] }));
    let thrown: unknown;
    try {
      translator.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '}' } }] }));
    } catch (error) {
      thrown = error;
    }
    expect(isUpstreamError(thrown) && thrown.kind).toBe('invalid_response');
  });

  it("streams a refusal's words as text", () => {
    const events = translate([chunk({ refusal: "I can't" }), chunk({ refusal: ' help.' }, 'content_filter')]);
    expect(blockEvents(events)).toEqual([
      ['start', 0, 'text'],
      ['delta', 0, text("I can't")],
      ['delta', 0, text(' help.')],
      ['stop', 0],
    ]);
  });
});

describe('MessageStreamTranslator through the official SDK', () => {
  it("accumulates to the Message chatToMessage makes of the same answer, with message_delta's input_tokens", async () => {
    const chunks = [
      chunk({ role: 'assistant', reasoning_content: 'Think.' }),
      chunk({ thinking_blocks: [{ type: 'thinking', thinking: 'Think.', signature: 'sig' }] }),
      chunk({ content: 'Calling ' }),
      chunk({ content: 'now.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"ci' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] }),
      chunk({}, 'tool_calls'),
      usageChunk(USAGE),
    ];
    const completion: ChatCompletion = {
      id: 'chatcmpl-9',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-test',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Calling now.',
            reasoning_content: 'Think.',
            thinking_blocks: [{ type: 'thinking', thinking: 'Think.', signature: 'sig' }],
            tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: USAGE,
    };
    const final = await accumulated(sseOf(translate(chunks)));
    const { parsed_output: _parsed, ...message } = final as Anthropic.Messages.Message & { parsed_output?: unknown };
    expect(message).toEqual(chatToMessage(completion, 'svc-model'));
  });

  describe('after the Anthropic adapter', () => {
    const target = targetFor<ModelOf<typeof anthropicDescriptor>>(ANTHROPIC_FIXTURE_MODEL, 'sk-ant-test', 'claude-test');

    /** A recorded Anthropic stream, through the adapter to chat chunks and back through the translator. */
    async function roundTrip(sse: string): Promise<string> {
      async function* body() {
        yield sse;
      }
      const chunks = await collect(translateStream(body(), target));
      const usage = chunks.at(-1)?.usage;
      if (usage == null) throw new Error('the adapter sent no usage');
      return sseOf(translate(chunks.slice(0, -1), usage));
    }

    // A refusal comes back with the adapter's refusal text added; stop sequences have no chat counterpart.
    it.each(['text', 'thinking', 'redacted-thinking', 'thinking-tool-use', 'tool-use-parallel', 'tool-use-empty-input', 'cache-usage', 'max-tokens'])(
      '%s: the SDK accumulates the content, stop reason and usage of the recorded stream',
      async (name) => {
        const sse = readAnthropicFixture(`streams/${name}.sse`);
        const [original, translated] = await Promise.all([accumulated(sse), roundTrip(sse).then(accumulated)]);
        expect(blocksOf(translated.content)).toEqual(blocksOf(original.content));
        expect(translated.stop_reason).toBe(original.stop_reason);
        expect(translated.usage).toMatchObject({
          input_tokens: original.usage.input_tokens,
          output_tokens: original.usage.output_tokens,
          cache_creation_input_tokens: original.usage.cache_creation_input_tokens ?? 0,
          cache_read_input_tokens: original.usage.cache_read_input_tokens ?? 0,
        });
      },
    );
  });
});
