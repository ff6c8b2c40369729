/**
 * The official SDK reads what the translations make: requests it builds pass the door's schema and
 * translate, and the answers, served through a custom fetch, come back through its own parsing and
 * stream accumulation unchanged.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import OpenAI from 'openai';
import { Value } from '@sinclair/typebox/value';
import { ResponseStreamTranslator, chatToResponse } from '../../../../src/operations/responses/from-chat.ts';
import { responsesToChat } from '../../../../src/operations/responses/to-chat.ts';
import { ResponsesRequestSchema, type ResponsesRequest } from '../../../../src/wire/openai-responses.ts';
import type { ChatCompletionChunk } from '../../../../src/wire/openai-chat.ts';
import { COMPLETED_AT, FULL_STREAM, USAGE, assemble, chunk, contextFor, sseBody } from './fixtures.ts';

// completed_at is read off the clock, once for the stream and once for the response it is compared with.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(COMPLETED_AT * 1000);
});
afterEach(() => {
  vi.useRealTimers();
});

/**
 * A client whose requests are answered by the translations: the body it sends is validated and
 * translated, and `chunks` is the chat answer, whole or streamed as the request asks.
 */
function clientAnswering(chunks: ChatCompletionChunk[]) {
  const seen: ResponsesRequest[] = [];
  const fetch = async (_url: string | URL | Request, init?: RequestInit): Promise<globalThis.Response> => {
    const body: unknown = JSON.parse(typeof init?.body === 'string' ? init.body : '');
    if (!Value.Check(ResponsesRequestSchema, body)) throw new Error(`the SDK sent a body the door refuses: ${JSON.stringify(body)}`);
    seen.push(body);
    const { stream } = responsesToChat(body);
    const context = contextFor(body, { id: 'resp_01JSDK', model: body.model });
    if (!stream) return globalThis.Response.json(chatToResponse(assemble(chunks), context));
    const translator = new ResponseStreamTranslator(context);
    const events = [...translator.start(), ...chunks.flatMap((c) => translator.push(c)), ...translator.finish(USAGE)];
    return new globalThis.Response(sseBody(events), { headers: { 'content-type': 'text/event-stream' } });
  };
  return { client: new OpenAI({ apiKey: 'x', baseURL: 'http://gateway.test/v1', fetch, maxRetries: 0 }), seen };
}

const TOOLS: OpenAI.Responses.FunctionTool[] = [
  {
    type: 'function',
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    strict: true,
  },
  { type: 'function', name: 'get_time', parameters: { type: 'object', properties: {}, additionalProperties: false }, strict: true },
];

/** A request of every kind of item the gateway serves, typed by the SDK. */
const CONVERSATION: OpenAI.Responses.ResponseCreateParamsNonStreaming = {
  model: 'svc-standard',
  instructions: 'Be brief.',
  input: [
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'Weather in Paris?' },
        { type: 'input_image', image_url: 'https://example.com/paris.png', detail: 'auto' },
      ],
    },
    { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'Call the tool.' }] },
    { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
    { type: 'function_call_output', call_id: 'call_1', output: '{"temp":21}' },
    { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'It is 21 °C.', annotations: [] }] },
    { type: 'message', role: 'user', content: [{ type: 'input_file', file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' }] },
  ],
  tools: TOOLS,
  tool_choice: 'auto',
  text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
  reasoning: { effort: 'medium', summary: 'auto' },
  max_output_tokens: 800,
  temperature: 0.4,
  top_p: 1,
  parallel_tool_calls: true,
  store: false,
  include: ['reasoning.encrypted_content'],
  metadata: { trace: 't1' },
  safety_identifier: 'hashed',
  prompt_cache_key: 'pck',
  truncation: 'disabled',
  stream_options: null,
  previous_response_id: null,
};

describe('SDK requests', () => {
  it('a request with every served item passes the door and translates', () => {
    expect(Value.Check(ResponsesRequestSchema, CONVERSATION)).toBe(true);
    expect(responsesToChat(CONVERSATION as ResponsesRequest).chat.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
  });
});

describe('SDK answers', () => {
  it('responses.create() reads the Response, with its output_text', async () => {
    const { client, seen } = clientAnswering(FULL_STREAM);
    const response = await client.responses.create({ model: 'svc-standard', input: 'Weather in Paris?', tools: TOOLS });
    expect(seen[0]).toEqual({ model: 'svc-standard', input: 'Weather in Paris?', tools: TOOLS });
    expect(response.output_text).toBe('Let me check.');
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    expect(response.usage?.input_tokens_details.cached_tokens).toBe(100);
  });

  it('responses.create({stream: true}) yields the events as they were sent', async () => {
    const { client } = clientAnswering(FULL_STREAM);
    const stream = await client.responses.create({ model: 'svc-standard', input: 'Weather in Paris?', stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.at(-1)?.type).toBe('response.completed');
  });

  it.each([
    ['reasoning, text and tool calls', FULL_STREAM, 'Let me check.'],
    [
      'a long text',
      'The quick brown fox jumps over the lazy dog.'.split(' ').map((word, i) => chunk({ content: i === 0 ? word : ` ${word}` })),
      'The quick brown fox jumps over the lazy dog.',
    ],
    ['a refusal', [chunk({ refusal: 'No.' }, 'stop')], ''],
    ['an answer cut short', [chunk({ content: 'Once upon' }, 'length')], 'Once upon'],
  ])('responses.stream().finalResponse() equals chatToResponse: %s', async (_what, chunks, text) => {
    const { client } = clientAnswering(chunks);
    const request: OpenAI.Responses.ResponseCreateParamsStreaming = { model: 'svc-standard', input: 'Go', instructions: 'Be brief.', stream: true };
    const deltas: string[] = [];
    const stream = client.responses.stream(request).on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    const expected = chatToResponse(assemble(chunks), contextFor(request as ResponsesRequest, { id: 'resp_01JSDK' }));
    // The SDK adds what it parses (null without a schema or function tools); nothing else differs.
    const SDK_ADDED = new Set(['parsed', 'output_parsed', 'parsed_arguments']);
    expect(JSON.parse(JSON.stringify(final, (key, value: unknown) => (SDK_ADDED.has(key) ? undefined : value)))).toEqual(expected);
    expect(final.output_text).toBe(text);
    expect(deltas.join('')).toBe(text);
  });

  it('responses.stream() with function tools parses the arguments of the calls', async () => {
    const { client } = clientAnswering(FULL_STREAM);
    const final = await client.responses.stream({ model: 'svc-standard', input: 'Weather in Paris?', tools: TOOLS }).finalResponse();
    const calls = final.output.filter((item) => item.type === 'function_call');
    expect(calls.map((call) => [call.call_id, call.parsed_arguments])).toEqual([
      ['call_a', { city: 'Paris' }],
      ['call_b', {}],
    ]);
  });
});
