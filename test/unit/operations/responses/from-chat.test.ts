import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type OpenAI from 'openai';
import { accumulateResponse } from 'openai/lib/responses/ResponseAccumulator';
import { Value } from '@sinclair/typebox/value';
import { ResponseStreamTranslator, chatToResponse, queuedEvent, responseSnapshot } from '../../../../src/operations/responses/from-chat.ts';
import { ResponseSchema, ResponseStreamEventSchema, type ResponseStreamEvent } from '../../../../src/wire/openai-responses.ts';
import type { ChatCompletionChunk } from '../../../../src/wire/openai-chat.ts';
import {
  COMPLETED_AT,
  CREATED_AT,
  FULL_STREAM,
  USAGE,
  assemble,
  chunk,
  contextFor,
  usageChunk,
  type SdkCompletedEvent,
  type SdkResponse,
  type SdkStreamEvent,
} from './fixtures.ts';

// completed_at is read off the clock.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(COMPLETED_AT * 1000);
});
afterEach(() => {
  vi.useRealTimers();
});

/** Every event of one whole stream, checked against our schema and typed as the SDK's. */
function translateStream(chunks: ChatCompletionChunk[], context = contextFor()): SdkStreamEvent[] {
  const translator = new ResponseStreamTranslator(context);
  const events: ResponseStreamEvent[] = [...translator.start(), ...chunks.flatMap((c) => translator.push(c)), ...translator.finish(USAGE)];
  for (const event of events) expect(Value.Check(ResponseStreamEventSchema, event), JSON.stringify(event)).toBe(true);
  return events;
}

const last = <T>(list: T[]): T => list[list.length - 1] as T;

/** A namespace of one tool, and the upstream's call of it by its chat name. */
const AGENTS = {
  type: 'namespace',
  name: 'multi_agent_v1',
  description: 'Sub-agents.',
  tools: [{ type: 'function', name: 'close_agent', parameters: { type: 'object' }, strict: false }],
};
const namespacedCall = { index: 0, id: 'c1', type: 'function' as const, function: { name: 'multi_agent_v1__close_agent', arguments: '{"target":"a1"}' } };

describe('chatToResponse', () => {
  it('makes a Response of a text answer, with the settings echoed', () => {
    const response: SdkResponse = chatToResponse(assemble([chunk({ content: 'Hello!' }, 'stop')]), contextFor());
    expect(response).toEqual({
      id: 'resp_01JREQ',
      object: 'response',
      created_at: CREATED_AT,
      status: 'completed',
      background: false,
      completed_at: COMPLETED_AT,
      conversation: null,
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      max_tool_calls: null,
      model: 'svc-standard',
      moderation: null,
      output: [
        {
          type: 'message',
          id: 'msg_01JREQ_0',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Hello!', annotations: [], logprobs: [] }],
        },
      ],
      output_text: 'Hello!',
      parallel_tool_calls: true,
      presence_penalty: 0,
      frequency_penalty: 0,
      previous_response_id: null,
      prompt: null,
      prompt_cache_key: null,
      prompt_cache_retention: null,
      reasoning: { effort: null, summary: null },
      safety_identifier: null,
      service_tier: 'default',
      store: false,
      temperature: 1,
      text: { format: { type: 'text' }, verbosity: 'medium' },
      tool_choice: 'auto',
      tools: [],
      top_logprobs: 0,
      top_p: 1,
      truncation: 'disabled',
      metadata: {},
      usage: {
        input_tokens: 120,
        input_tokens_details: { cached_tokens: 100, cache_write_tokens: 8 },
        output_tokens: 40,
        output_tokens_details: { reasoning_tokens: 12 },
        total_tokens: 160,
      },
    });
    expect(Value.Check(ResponseSchema, response)).toBe(true);
  });

  it('orders the output: reasoning, message, then one function_call per tool call', () => {
    const response: SdkResponse = chatToResponse(assemble(FULL_STREAM), contextFor());
    expect(response.output).toEqual([
      { type: 'reasoning', id: 'rs_01JREQ_0', status: 'completed', summary: [], content: [{ type: 'reasoning_text', text: 'The user wants the weather.' }] },
      {
        type: 'message',
        id: 'msg_01JREQ_1',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Let me check.', annotations: [], logprobs: [] }],
      },
      { type: 'function_call', id: 'fc_01JREQ_2', status: 'completed', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', id: 'fc_01JREQ_3', status: 'completed', call_id: 'call_b', name: 'get_time', arguments: '{}' },
    ]);
    expect(response.output_text).toBe('Let me check.');
  });

  it('makes no message item for an answer of tool calls only', () => {
    const response = chatToResponse(
      assemble([chunk({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '{}' } }] }, 'tool_calls')]),
      contextFor(),
    );
    expect(response.output.map((item) => item.type)).toEqual(['function_call']);
    expect(response.output_text).toBe('');
  });

  it('makes a refusal part of a refusal', () => {
    const response = chatToResponse(assemble([chunk({ refusal: 'I cannot help with that.' }, 'stop')]), contextFor());
    expect(response.output).toEqual([
      { type: 'message', id: 'msg_01JREQ_0', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] },
    ]);
    expect(response.output_text).toBe('');
  });

  it.each([
    ['length', 'max_output_tokens'],
    ['content_filter', 'content_filter'],
  ] as const)('is incomplete on finish_reason %s, its last item too', (finishReason, reason) => {
    const response = chatToResponse(assemble([chunk({ reasoning_content: 'Hmm' }), chunk({ content: 'Once upon' }, finishReason)]), contextFor());
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason }, completed_at: null });
    expect(response.output.map((item) => item.status)).toEqual(['completed', 'incomplete']);
  });

  it('has null usage when the completion has none', () => {
    const completion = { ...assemble([chunk({ content: 'Hi' }, 'stop')]), usage: null };
    expect(chatToResponse(completion, contextFor()).usage).toBeNull();
  });

  it('echoes the settings of the request', () => {
    const schema = { type: 'object', properties: {}, additionalProperties: false };
    const response: SdkResponse = chatToResponse(
      assemble([chunk({ content: '{}' }, 'stop')]),
      contextFor({
        instructions: 'Be brief.',
        max_output_tokens: 500,
        temperature: 0.3,
        top_p: 0.8,
        parallel_tool_calls: false,
        reasoning: { effort: 'high', summary: 'auto' },
        text: { format: { type: 'json_schema', name: 'empty', schema, strict: true, description: 'Nothing' }, verbosity: 'low' },
        tools: [
          { type: 'function', name: 'f', description: 'F', parameters: schema, strict: true },
          { type: 'function', name: 'g' },
        ],
        tool_choice: { type: 'function', name: 'f' },
        truncation: 'auto',
        metadata: { team: 'search' },
        user: 'u-1',
        safety_identifier: 'hashed',
        prompt_cache_key: 'pck',
        max_tool_calls: 3,
        store: true,
        background: true,
        previous_response_id: 'resp_01JPREV',
      }),
    );
    expect(response).toMatchObject({
      instructions: 'Be brief.',
      max_output_tokens: 500,
      temperature: 0.3,
      top_p: 0.8,
      parallel_tool_calls: false,
      reasoning: { effort: 'high', summary: 'auto' },
      text: { format: { type: 'json_schema', name: 'empty', schema, strict: true, description: 'Nothing' }, verbosity: 'low' },
      tools: [
        { type: 'function', name: 'f', description: 'F', parameters: schema, strict: true },
        { type: 'function', name: 'g', description: null, parameters: null, strict: null },
      ],
      tool_choice: { type: 'function', name: 'f' },
      truncation: 'auto',
      metadata: { team: 'search' },
      user: 'u-1',
      safety_identifier: 'hashed',
      prompt_cache_key: 'pck',
      max_tool_calls: 3,
    });
  });

  it('states how the gateway ran it: in the background, stored, continuing a response', () => {
    const context = contextFor({ store: false, background: false }, { background: true, store: true, previousResponseId: 'resp_01JPREV' });
    expect(chatToResponse(assemble([chunk({ content: 'Hi' }, 'stop')]), context)).toMatchObject({
      background: true,
      store: true,
      previous_response_id: 'resp_01JPREV',
    });
  });

  it("answers a call of a namespace's tool with the namespace and the tool's own name, and leaves an unknown name as it is", () => {
    const context = contextFor({ tools: [AGENTS] });
    const response: SdkResponse = chatToResponse(
      assemble([chunk({ tool_calls: [namespacedCall, { index: 1, id: 'c2', function: { name: 'other__tool', arguments: '{}' } }] }, 'tool_calls')]),
      context,
    );
    expect(response.output).toEqual([
      {
        type: 'function_call',
        id: 'fc_01JREQ_0',
        status: 'completed',
        call_id: 'c1',
        name: 'close_agent',
        namespace: 'multi_agent_v1',
        arguments: '{"target":"a1"}',
      },
      { type: 'function_call', id: 'fc_01JREQ_1', status: 'completed', call_id: 'c2', name: 'other__tool', arguments: '{}' },
    ]);
    expect(Value.Check(ResponseSchema, response)).toBe(true);
  });

  it('echoes a namespace tool with its functions, and leaves out the hosted tools it dropped', () => {
    const response: SdkResponse = chatToResponse(assemble([chunk({ content: 'Hi' }, 'stop')]), contextFor({ tools: [{ type: 'web_search' }, AGENTS] }));
    expect(response.tools).toEqual([
      {
        type: 'namespace',
        name: 'multi_agent_v1',
        description: 'Sub-agents.',
        tools: [{ type: 'function', name: 'close_agent', description: null, parameters: { type: 'object' }, strict: false }],
      },
    ]);
  });

  it('echoes json_object', () => {
    expect(chatToResponse(assemble([chunk({ content: '{}' }, 'stop')]), contextFor({ text: { format: { type: 'json_object' } } })).text.format).toEqual({
      type: 'json_object',
    });
  });

  it('reads absent usage details as zero', () => {
    const completion = assemble([chunk({ content: 'Hi' }, 'stop')], { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 });
    expect(chatToResponse(completion, contextFor()).usage).toEqual({
      input_tokens: 5,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 12,
    });
  });
});

describe('ResponseStreamTranslator', () => {
  it('starts with response.created and response.in_progress, with the empty response', () => {
    const events: SdkStreamEvent[] = new ResponseStreamTranslator(contextFor()).start();
    expect(events.map((event) => [event.type, event.sequence_number])).toEqual([
      ['response.created', 0],
      ['response.in_progress', 1],
    ]);
    expect(events[0]).toMatchObject({
      response: { id: 'resp_01JREQ', status: 'in_progress', output: [], output_text: '', incomplete_details: null, completed_at: null, usage: null },
    });
  });

  it('streams a text answer as OpenAI does', () => {
    const events = translateStream([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({}, 'stop'),
      usageChunk(),
    ]);
    const at = { item_id: 'msg_01JREQ_0', output_index: 0, content_index: 0 };
    const message = { type: 'message', id: 'msg_01JREQ_0', role: 'assistant' };
    expect(events.slice(2, -1)).toEqual([
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { ...message, status: 'in_progress', content: [] } },
      { type: 'response.content_part.added', sequence_number: 3, ...at, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } },
      { type: 'response.output_text.delta', sequence_number: 4, ...at, delta: 'Hel', logprobs: [] },
      { type: 'response.output_text.delta', sequence_number: 5, ...at, delta: 'lo', logprobs: [] },
      { type: 'response.output_text.done', sequence_number: 6, ...at, text: 'Hello', logprobs: [] },
      { type: 'response.content_part.done', sequence_number: 7, ...at, part: { type: 'output_text', text: 'Hello', annotations: [], logprobs: [] } },
      {
        type: 'response.output_item.done',
        sequence_number: 8,
        output_index: 0,
        item: { ...message, status: 'completed', content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }] },
      },
    ]);
    expect(last(events)).toMatchObject({ type: 'response.completed', sequence_number: 9, response: { status: 'completed', output_text: 'Hello' } });
  });

  it('streams reasoning, text and tool calls as items one after another', () => {
    const events = translateStream(FULL_STREAM);
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.filter((event) => event.type === 'response.output_item.added').map((event) => event.item)).toEqual([
      { type: 'reasoning', id: 'rs_01JREQ_0', status: 'in_progress', summary: [], content: [] },
      { type: 'message', id: 'msg_01JREQ_1', status: 'in_progress', role: 'assistant', content: [] },
      { type: 'function_call', id: 'fc_01JREQ_2', status: 'in_progress', call_id: 'call_a', name: 'get_weather', arguments: '' },
      { type: 'function_call', id: 'fc_01JREQ_3', status: 'in_progress', call_id: 'call_b', name: 'get_time', arguments: '' },
    ]);
    expect(events.filter((event) => event.type === 'response.function_call_arguments.done')).toEqual([
      {
        type: 'response.function_call_arguments.done',
        sequence_number: 19,
        item_id: 'fc_01JREQ_2',
        output_index: 2,
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
      },
      { type: 'response.function_call_arguments.done', sequence_number: 23, item_id: 'fc_01JREQ_3', output_index: 3, name: 'get_time', arguments: '{}' },
    ]);
  });

  it('numbers events from 0 without a gap and puts type first in each', () => {
    const events = translateStream(FULL_STREAM);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i));
    for (const event of events) expect(Object.keys(event)[0]).toBe('type');
  });

  it.each([
    ['text only', [chunk({ content: 'Hello' }), chunk({}, 'stop')]],
    ['reasoning, text and tool calls', FULL_STREAM],
    ['a refusal', [chunk({ refusal: 'No' }), chunk({ refusal: '.' }, 'stop')]],
    ['tool calls only', [chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '{"a":1}' } }] }, 'tool_calls')]],
    ['an answer cut by the token limit', [chunk({ reasoning_content: 'Hmm' }), chunk({ content: 'Once upon' }, 'length')]],
    ['nothing at all', [chunk({ role: 'assistant', content: '' }, 'stop')]],
  ])('ends with the Response chatToResponse makes of the same answer: %s', (_what, chunks) => {
    const context = contextFor({ instructions: 'Be brief.', temperature: 0.5 });
    const final = last(translateStream(chunks, context));
    expect(final.type === 'response.completed' || final.type === 'response.incomplete').toBe(true);
    expect((final as SdkCompletedEvent).response).toEqual(chatToResponse(assemble(chunks), context));
  });

  it('emits events the SDK accumulates into the final output', () => {
    const events = translateStream(FULL_STREAM);
    let snapshot: OpenAI.Responses.Response | undefined;
    for (const event of events.slice(0, -1)) snapshot = accumulateResponse(event as OpenAI.Responses.ResponseStreamEvent, snapshot);
    const final = last(events) as SdkCompletedEvent;
    expect(snapshot?.output).toEqual(final.response.output);
    expect(snapshot?.output_text).toBe('Let me check.');
  });

  it('ends with response.incomplete when the answer was cut by the token limit, its open item incomplete', () => {
    const events = translateStream([chunk({ content: 'Hello' }), chunk({ content: ' wor' }, 'length')]);
    const itemDone = events.find((event) => event.type === 'response.output_item.done');
    expect(itemDone).toMatchObject({ item: { status: 'incomplete' } });
    expect(last(events)).toMatchObject({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
    });
  });

  it('streams a refusal after text as a second part of the message', () => {
    const events = translateStream([chunk({ content: 'Well' }), chunk({ refusal: 'No.' }), chunk({}, 'stop')]);
    expect(events.slice(2, -1).map((event) => [event.type, 'content_index' in event ? event.content_index : null])).toEqual([
      ['response.output_item.added', null],
      ['response.content_part.added', 0],
      ['response.output_text.delta', 0],
      ['response.output_text.done', 0],
      ['response.content_part.done', 0],
      ['response.content_part.added', 1],
      ['response.refusal.delta', 1],
      ['response.refusal.done', 1],
      ['response.content_part.done', 1],
      ['response.output_item.done', null],
    ]);
  });

  it('has no events for a chunk without content: the role chunk, an empty delta, the usage chunk', () => {
    const translator = new ResponseStreamTranslator(contextFor());
    translator.start();
    expect(translator.push(chunk({ role: 'assistant', content: '' }))).toEqual([]);
    expect(translator.push(chunk({ content: null, reasoning_content: null }))).toEqual([]);
    expect(translator.push(usageChunk())).toEqual([]);
  });

  it('opens a new message item for text that comes after a tool call', () => {
    const events = translateStream([
      chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '{}' } }] }),
      chunk({ content: 'Done.' }, 'stop'),
    ]);
    const final = last(events) as SdkCompletedEvent;
    expect(final.response.output.map((item) => [item.type, item.id])).toEqual([
      ['function_call', 'fc_01JREQ_0'],
      ['message', 'msg_01JREQ_1'],
    ]);
  });

  it('gives a tool call without an id one, and takes a name that comes late', () => {
    const events = translateStream([
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '}' } }] }, 'tool_calls'),
    ]);
    const final = last(events) as SdkCompletedEvent;
    expect(final.response.output).toEqual([
      { type: 'function_call', id: 'fc_01JREQ_0', status: 'completed', call_id: 'call_01JREQ_0', name: 'f', arguments: '{}' },
    ]);
  });

  it("streams a call of a namespace's tool with the namespace and the tool's own name in every event that names it", () => {
    const events = translateStream([chunk({ tool_calls: [namespacedCall] }, 'tool_calls')], contextFor({ tools: [AGENTS] }));
    const named = { name: 'close_agent', namespace: 'multi_agent_v1' };
    expect(events.find((event) => event.type === 'response.output_item.added')).toMatchObject({ item: { type: 'function_call', ...named } });
    expect(events.find((event) => event.type === 'response.function_call_arguments.done')).toMatchObject({ name: 'close_agent', arguments: '{"target":"a1"}' });
    expect(events.find((event) => event.type === 'response.output_item.done')).toMatchObject({
      item: { type: 'function_call', ...named, status: 'completed' },
    });
    expect((last(events) as SdkCompletedEvent).response.output).toEqual([
      { type: 'function_call', id: 'fc_01JREQ_0', status: 'completed', call_id: 'c1', ...named, arguments: '{"target":"a1"}' },
    ]);
  });

  it("names a namespace's tool whose name comes late", () => {
    const events = translateStream(
      [
        chunk({ tool_calls: [{ index: 0, id: 'c1', function: { arguments: '{' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { name: 'multi_agent_v1__close_agent', arguments: '}' } }] }, 'tool_calls'),
      ],
      contextFor({ tools: [AGENTS] }),
    );
    expect((last(events) as SdkCompletedEvent).response.output).toMatchObject([{ name: 'close_agent', namespace: 'multi_agent_v1', arguments: '{}' }]);
  });

  it('keeps the pieces of a tool call that come back after the next one began, in the final response', () => {
    const events = translateStream([
      chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{"x":' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'g', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }, 'tool_calls'),
    ]);
    const types = events.map((event) => event.type);
    expect(types.filter((type) => type === 'response.function_call_arguments.delta')).toHaveLength(2);
    expect((last(events) as SdkCompletedEvent).response.output.map((item) => item.type === 'function_call' && item.arguments)).toEqual(['{"x":1}', '{}']);
  });

  it('does not change events already returned as the stream goes on', () => {
    const translator = new ResponseStreamTranslator(contextFor());
    translator.start();
    const first = translator.push(chunk({ content: 'Hel' }));
    const snapshot = structuredClone(first);
    translator.push(chunk({ content: 'lo' }));
    translator.finish(USAGE);
    expect(first).toEqual(snapshot);
  });
});

describe('the states of a background or stored response', () => {
  const background = contextFor({ background: true, store: true }, { background: true, store: true, previousResponseId: 'resp_01JPREV' });

  it('begins a background stream with response.queued, numbered 0, and its translation at 1', () => {
    const queued: SdkStreamEvent = queuedEvent(background);
    expect(queued).toEqual({ type: 'response.queued', sequence_number: 0, response: responseSnapshot(background, 'queued') });
    expect(Object.keys(queued).slice(0, 2)).toEqual(['type', 'sequence_number']);
    expect(Value.Check(ResponseStreamEventSchema, queued)).toBe(true);
    const events = translateStream([chunk({ content: 'Hi' }, 'stop')], { ...background, firstSequenceNumber: 1 });
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i + 1));
  });

  it.each(['queued', 'in_progress', 'cancelled'] as const)('makes the %s response: no output, no usage, no error, not completed', (status) => {
    const response: SdkResponse = responseSnapshot(background, status);
    expect(response).toMatchObject({
      status,
      output: [],
      output_text: '',
      usage: null,
      error: null,
      completed_at: null,
      incomplete_details: null,
      background: true,
      store: true,
      previous_response_id: 'resp_01JPREV',
    });
    expect(Value.Check(ResponseSchema, response)).toBe(true);
  });

  it('makes the failed response with its error, and what it had made by then', () => {
    const { output } = chatToResponse(assemble([chunk({ content: 'Hel' }, 'stop')]), background);
    const usage = chatToResponse(assemble([chunk({ content: 'Hel' }, 'stop')]), background).usage ?? undefined;
    const error = { code: 'upstream_error', message: 'The provider failed.' };
    const response = responseSnapshot(background, 'failed', { error, output, usage });
    expect(response).toMatchObject({ status: 'failed', error, output, output_text: 'Hel', usage, completed_at: null });
    expect(Value.Check(ResponseSchema, response)).toBe(true);
  });
});
