/**
 * POST /v1/responses with the official `openai` SDK against web and worker processes, one gateway
 * routing to a fake OpenAI-compatible upstream, a fake Anthropic, a fake Gemini and the simulator,
 * each reached through the chat translation: text and its events, function tools and their round
 * trip, what it does not serve, errors before and after the first event,
 * and the admission every operation goes through (idempotency, budgets, PII, usage records).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
import type {
  Response,
  ResponseCreateParamsNonStreaming,
  ResponseFunctionToolCall,
  ResponseInputItem,
  ResponseStreamEvent,
} from 'openai/resources/responses/responses';
import type { WrittenCatalog } from '../../src/domain/catalog/schema.ts';
import { ANTHROPIC_FIXTURE_MODEL, startAnthropicUpstream, type FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { GEMINI_FIXTURE_MODEL, startGeminiUpstream, type FakeGemini } from '../helpers/fake-gemini.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { call, eventually } from '../helpers/http.ts';
import { apiFailure, usageRecordOf } from '../helpers/sdk-calls.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

let upstream: FakeUpstream;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let gateway: GatewayUnderTest;
let admin: string;
let client: OpenAI;

function catalog(): WrittenCatalog {
  const base = testCatalog(upstream.url);
  base.models.claude = { ...ANTHROPIC_FIXTURE_MODEL, base_url: anthropic.url };
  base.models.gemini = { ...GEMINI_FIXTURE_MODEL, base_url: gemini.url };
  base.models['fake-plain'] = { ...(base.models['fake-gpt'] as WrittenCatalog['models'][string]), rejected_params: ['reasoning_effort'] };
  return base;
}

beforeAll(async () => {
  [upstream, anthropic, gemini] = await Promise.all([startFakeUpstream(), startAnthropicUpstream(), startGeminiUpstream()]);
  const env = {
    ANTHROPIC_API_KEY: 'sk-ant-e2e',
    GEMINI_API_KEY: 'gm-e2e',
    RETRY_BASE_MS: '50',
    RETRY_MAX_ATTEMPTS: '2',
    RETRY_BUDGET_MS: '2000',
    SETTINGS_CACHE_TTL_MS: '100',
  };
  gateway = await startGateway({ catalog: catalog(), env });
  admin = (await gateway.issueKey('acme', 'admin')).secret;
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('acme', 'app')).secret, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([upstream?.close(), anthropic?.close(), gemini?.close()]);
});

beforeEach(() => {
  upstream.reset();
  anthropic.reset();
  gemini.reset();
});

/** Every event of a stream, in order. */
async function collect(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** What reading a stream ended with: the events before, and the error it threw. */
async function collectUntilError(stream: AsyncIterable<ResponseStreamEvent>): Promise<{ events: ResponseStreamEvent[]; error: unknown }> {
  const events: ResponseStreamEvent[] = [];
  const error = await (async () => {
    for await (const event of stream) events.push(event);
  })().then(
    () => new Error('expected the stream to throw'),
    (e: unknown) => e,
  );
  return { events, error };
}

/** POST /v1/responses without the SDK, to read the bytes of its stream. */
function postRaw(body: Record<string, unknown>): Promise<globalThis.Response> {
  return fetch(`${gateway.baseURL}/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** One SSE frame: its event name, an optional id line, its data. */
const FRAME = /^event: ([a-z_.]+)\n(?:id: \d+\n)?data: (\{.*\})$/s;
const ofType = <T extends ResponseStreamEvent['type']>(events: ResponseStreamEvent[], type: T) =>
  events.filter((event): event is Extract<ResponseStreamEvent, { type: T }> => event.type === type);
const calls = (response: Response) => response.output.filter((item): item is ResponseFunctionToolCall => item.type === 'function_call');
const chatBody = (i = 0) => upstream.requests[i]?.body as Record<string, unknown>;
const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
  strict: false,
};

describe('text', () => {
  it('answers a response whose id is made of the request id, with output_text, the message item and the usage', async () => {
    upstream.script([{ kind: 'ok', text: 'Hello there, world.' }]);
    const { data, response } = await client.responses.create({ model: 'fake-gpt', input: 'Say hello' }).withResponse();
    expect(data.id).toBe(`resp_${response.headers.get('x-request-id')}`);
    expect(data).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'fake-gpt',
      store: true,
      error: null,
      incomplete_details: null,
      output_text: 'Hello there, world.',
    });
    expect(data.output).toEqual([
      {
        type: 'message',
        id: expect.stringMatching(/^msg_/),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Hello there, world.', annotations: [], logprobs: [] }],
      },
    ]);
    expect(data.usage).toMatchObject({
      input_tokens: 2,
      output_tokens: 3,
      total_tokens: 5,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    });
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]?.path).toBe('/v1/chat/completions');
  });

  it('sends the upstream the chat request the translation makes of every setting', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const data = await client.responses.create({
      model: 'fake-gpt',
      instructions: 'Answer in JSON.',
      input: [
        { role: 'user', content: 'Where is it warm?' },
        {
          type: 'message',
          id: 'msg_earlier',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Which continent?', annotations: [] }],
        },
        { role: 'user', content: [{ type: 'input_text', text: 'Europe' }] },
      ],
      max_output_tokens: 50,
      temperature: 0.3,
      reasoning: { effort: 'low' },
      text: { format: { type: 'json_schema', name: 'place', schema, strict: true } },
      tools: [weatherTool],
      tool_choice: { type: 'function', name: 'get_weather' },
    });
    expect(chatBody()).toEqual({
      model: 'fake-upstream-model',
      messages: [
        { role: 'system', content: 'Answer in JSON.' },
        { role: 'user', content: 'Where is it warm?' },
        { role: 'assistant', content: 'Which continent?' },
        { role: 'user', content: [{ type: 'text', text: 'Europe' }] },
      ],
      max_completion_tokens: 50,
      temperature: 0.3,
      reasoning_effort: 'low',
      stream: false,
      response_format: { type: 'json_schema', json_schema: { name: 'place', schema, strict: true } },
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: weatherTool.parameters, strict: false } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    expect(data).toMatchObject({
      instructions: 'Answer in JSON.',
      max_output_tokens: 50,
      temperature: 0.3,
      tool_choice: { type: 'function', name: 'get_weather' },
      text: { format: { type: 'json_schema', name: 'place', strict: true } },
    });
    expect(data.tools).toEqual([
      { type: 'function', name: 'get_weather', description: 'The weather in a city', parameters: weatherTool.parameters, strict: false },
    ]);
  });

  it('streams named events numbered from 0: created, the item and its part, the deltas, their ends, completed with the usage', async () => {
    upstream.script([{ kind: 'ok', text: 'one two three four', chunks: 4 }]);
    const { data: stream, response } = await client.responses.create({ model: 'fake-gpt', input: 'Count to four', stream: true }).withResponse();
    const events = await collect(stream);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array<string>(4).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(
      ofType(events, 'response.output_text.delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe('one two three four');
    const [completed] = ofType(events, 'response.completed');
    expect(completed?.response).toMatchObject({
      id: `resp_${response.headers.get('x-request-id')}`,
      status: 'completed',
      output_text: 'one two three four',
      usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
    });
    expect(ofType(events, 'response.created')[0]?.response).toMatchObject({ status: 'in_progress', output: [] });
    expect(chatBody()).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('assembles the same response in the SDK helper (responses.stream), with delta snapshots', async () => {
    upstream.script([{ kind: 'ok', text: 'alpha beta gamma', chunks: 3 }]);
    const snapshots: string[] = [];
    const stream = client.responses
      .stream({ model: 'fake-gpt', input: 'Three words' })
      .on('response.output_text.delta', (event) => snapshots.push(event.snapshot));
    const final = await stream.finalResponse();
    expect(snapshots.at(-1)).toBe('alpha beta gamma');
    expect(snapshots).toHaveLength(3);
    expect(final).toMatchObject({ status: 'completed', output_text: 'alpha beta gamma', usage: { output_tokens: 3 } });
  });

  it('is an event stream on the wire: `event:` named as its data type, no [DONE] (simulator)', async () => {
    const response = await postRaw({ model: 'sim', input: 'Say something', stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = (await response.text()).split('\n\n').filter((frame) => frame !== '');
    expect(frames.join('\n')).not.toContain('[DONE]');
    const parsed = frames.map((frame) => FRAME.exec(frame));
    expect(parsed.every((match) => match !== null && (JSON.parse(match[2] as string) as { type: string }).type === match[1])).toBe(true);
    const last = JSON.parse(parsed.at(-1)?.[2] as string) as { type: string; response: Response };
    expect(last.type).toBe('response.completed');
    expect(last.response.output_text.split(' ')).toHaveLength(12);
  });

  it('ends incomplete at max_output_tokens, non-streamed and streamed (Anthropic through chat)', async () => {
    anthropic.script([
      { kind: 'fixture', name: 'max-tokens' },
      { kind: 'fixture', name: 'max-tokens', pieceBytes: 11 },
    ]);
    const params = { model: 'claude', instructions: 'Tell a story.', input: 'Once', max_output_tokens: 10 };
    const data = await client.responses.create(params);
    expect(data).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output_text: 'Once upon a time, in a land far' });
    expect(data.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
    expect(anthropic.requests[0]?.body).toMatchObject({
      model: 'claude-sonnet-test',
      system: [{ type: 'text', text: 'Tell a story.' }],
      max_tokens: 10,
      messages: [{ role: 'user', content: 'Once' }],
    });
    const events = await collect(await client.responses.create({ ...params, stream: true }));
    expect(events.at(-1)).toMatchObject({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output_text: 'Once upon a time, in a land far' },
    });
    expect(ofType(events, 'response.completed')).toHaveLength(0);
  });
});

describe('function tools', () => {
  const question = { role: 'user' as const, content: 'What is the weather in Paris?' };
  const upstreams = {
    'the OpenAI-compatible fake': {
      model: 'fake-gpt',
      script: () => upstream.script([{ kind: 'ok', toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' }] }]),
      expected: [['call_w1', 'get_weather', '{"city":"Paris"}']],
      usage: { input_tokens: 6 },
    },
    Anthropic: {
      model: 'claude',
      script: (stream: boolean) => anthropic.script([{ kind: 'fixture', name: stream ? 'tool-use-parallel' : 'tool-use', pieceBytes: stream ? 9 : undefined }]),
      expected: [
        ['toolu_01A09q90qw90lq917835lq9', 'get_weather', '{"city": "Paris", "unit": "celsius"}'],
        ['toolu_01B18r81rx81mr826724mr8', 'get_time', '{"timezone": "Asia/Tokyo"}'],
      ],
      usage: { input_tokens: 412, output_tokens: 121, total_tokens: 533 },
    },
    Gemini: {
      model: 'gemini',
      script: (stream: boolean) => gemini.script([{ kind: 'fixture', name: stream ? 'function-call' : 'function-calls' }]),
      expected: [
        ['fc_7q2k9x4m', 'get_weather', '{"city":"Tokyo","unit":"celsius"}'],
        ['fc_3h8w1c6z', 'get_time', '{"city":"Tokyo"}'],
      ],
      // Gemini's thoughts are output tokens, told apart as reasoning tokens.
      usage: { input_tokens: 83, output_tokens: 134, output_tokens_details: { reasoning_tokens: 104 } },
    },
  };

  it.each(Object.entries(upstreams))('answers function_call items from %s', async (_name, { model, script, expected, usage }) => {
    script(false);
    const data = await client.responses.create({ model, input: [question], tools: [weatherTool] });
    expect(data.status).toBe('completed');
    // A Gemini call's id carries its thought signature (the round trip below follows it).
    const made = calls(data).map((item) => [item.call_id.replace(/__thought__[\w-]+$/, ''), item.name, JSON.parse(item.arguments)]);
    expect(made).toEqual(expected.map(([id, name, args]) => [id, name, JSON.parse(args as string)]));
    expect(data.usage).toMatchObject(usage);
    expect(calls(data).every((item) => item.status === 'completed' && item.id?.startsWith('fc_'))).toBe(true);
  });

  it.each(Object.entries(upstreams))('streams the arguments of %s as function_call_arguments deltas', async (_name, { model, script }) => {
    script(true);
    const events = await collect(await client.responses.create({ model, input: [question], tools: [weatherTool], stream: true }));
    const final = ofType(events, 'response.completed')[0]?.response as Response;
    expect(calls(final).length).toBeGreaterThan(0);
    for (const item of calls(final)) {
      const deltas = ofType(events, 'response.function_call_arguments.delta').filter((event) => event.item_id === item.id);
      expect(deltas.length).toBeGreaterThan(0);
      expect(deltas.map((event) => event.delta).join('')).toBe(item.arguments);
      expect(ofType(events, 'response.function_call_arguments.done').find((event) => event.item_id === item.id)).toMatchObject({
        name: item.name,
        arguments: item.arguments,
      });
      expect(ofType(events, 'response.output_item.added').find((event) => event.item.id === item.id)?.item).toMatchObject({
        type: 'function_call',
        call_id: item.call_id,
        name: item.name,
      });
    }
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i));
  });

  it('keeps the SDK stream helper in step: its snapshot of the arguments, and the final function_call', async () => {
    upstream.script([{ kind: 'ok', toolCalls: [{ id: 'call_s1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] }]);
    const snapshots: string[] = [];
    const stream = client.responses
      .stream({ model: 'fake-gpt', input: [question], tools: [weatherTool] })
      .on('response.function_call_arguments.delta', (event) => snapshots.push(event.snapshot));
    const final = await stream.finalResponse();
    expect(snapshots).toEqual(['{"city":', '{"city":"Oslo"}']);
    expect(calls(final)).toMatchObject([{ call_id: 'call_s1', name: 'get_weather', arguments: '{"city":"Oslo"}' }]);
  });

  it("answers Anthropic's thinking as a reasoning item before the call, the effort sent as a thinking budget", async () => {
    anthropic.script([
      { kind: 'fixture', name: 'thinking-tool-use' },
      { kind: 'fixture', name: 'thinking-tool-use', pieceBytes: 13 },
    ]);
    const params = { model: 'claude', input: [question], tools: [weatherTool], reasoning: { effort: 'medium' as const }, max_output_tokens: 16000 };
    const thought = 'The user asks for the weather in Paris; I should call get_weather.';
    const data = await client.responses.create(params);
    expect(anthropic.requests[0]?.body).toMatchObject({ max_tokens: 16000, thinking: { type: 'enabled', budget_tokens: 8192 } });
    expect(data.output.map((item) => item.type)).toEqual(['reasoning', 'function_call']);
    expect(data.output[0]).toMatchObject({ type: 'reasoning', content: [{ type: 'reasoning_text', text: thought }] });
    expect(data).toMatchObject({ reasoning: { effort: 'medium' } });
    const events = await collect(await client.responses.create({ ...params, stream: true }));
    expect(
      ofType(events, 'response.reasoning_text.delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe(thought);
    expect((ofType(events, 'response.completed')[0]?.response as Response).output.map((item) => item.type)).toEqual(['reasoning', 'function_call']);
  });

  it("gives Anthropic's signed thinking back on the next turn, from the reasoning item's encrypted_content", async () => {
    anthropic.script([
      { kind: 'fixture', name: 'thinking-tool-use' },
      { kind: 'fixture', name: 'thinking-tool-use', pieceBytes: 13 },
      { kind: 'ok', text: 'It is 18°C.' },
      { kind: 'ok', text: 'It is 18°C.' },
    ]);
    const params = { model: 'claude', input: [question], tools: [weatherTool], reasoning: { effort: 'medium' as const }, max_output_tokens: 16000 };
    const whole = await client.responses.create(params);
    const streamed = (ofType(await collect(await client.responses.create({ ...params, stream: true })), 'response.completed')[0]?.response as Response).output;
    for (const output of [whole.output, streamed]) {
      expect(output[0]).toMatchObject({ type: 'reasoning', encrypted_content: expect.stringMatching(/^gw\.thinking\.1:/) });
      const answers = calls({ output } as Response).map((item) => ({ type: 'function_call_output' as const, call_id: item.call_id, output: '18°C' }));
      await client.responses.create({ ...params, input: [question, ...(output as ResponseInputItem[]), ...answers] });
      const turn = (anthropic.requests.at(-1)?.body as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> }).messages[1];
      expect(turn?.role).toBe('assistant');
      expect(turn?.content[0]).toEqual({
        type: 'thinking',
        thinking: 'The user asks for the weather in Paris; I should call get_weather.',
        signature: expect.stringMatching(/^EqMBCkgIARABGAIiQLXb6q0p3yS7uVwF2mN8kR4t/),
      });
      expect(turn?.content.map((block) => block.type)).toEqual(['thinking', 'redacted_thinking', 'tool_use']);
    }
  });

  it("gives Gemini's thought signature back on the next turn, from the function_call's call_id", async () => {
    gemini.script([
      { kind: 'fixture', name: 'function-calls' },
      { kind: 'ok', text: 'Sunny.' },
    ]);
    const first = await client.responses.create({ model: 'gemini', input: [question], tools: [weatherTool] });
    const outputs = calls(first).map((item) => ({ type: 'function_call_output' as const, call_id: item.call_id, output: 'sunny' }));
    await client.responses.create({ model: 'gemini', input: [question, ...(first.output as ResponseInputItem[]), ...outputs], tools: [weatherTool] });
    const parts = (gemini.requests[1]?.body as { contents: Array<{ parts: Array<Record<string, unknown>> }> }).contents[1]?.parts;
    expect(parts?.[0]).toMatchObject({ functionCall: { name: 'get_weather' }, thoughtSignature: expect.stringMatching(/^CikBcsjafFK168/) });
  });

  // What each upstream received on the second turn: the call it made and the output answering it.
  const secondTurns = {
    'fake-gpt': () => (upstream.requests.at(-1)?.body as { messages: unknown[] }).messages.slice(1),
    claude: () => (anthropic.requests.at(-1)?.body as { messages: unknown[] }).messages.slice(1),
    gemini: () => (gemini.requests.at(-1)?.body as { contents: unknown[] }).contents.slice(1),
  };

  it.each(Object.keys(secondTurns) as Array<keyof typeof secondTurns>)(
    'makes the round trip with %s: function_call items and function_call_output sent back',
    async (model) => {
      if (model === 'fake-gpt')
        upstream.script([
          { kind: 'ok', toolCalls: [{ id: 'call_r1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
          { kind: 'ok', text: 'It is 18°C.' },
        ]);
      if (model === 'claude')
        anthropic.script([
          { kind: 'fixture', name: 'tool-use' },
          { kind: 'ok', text: 'It is 18°C.' },
        ]);
      if (model === 'gemini')
        gemini.script([
          { kind: 'fixture', name: 'function-calls' },
          { kind: 'ok', text: 'It is 18°C.' },
        ]);
      const first = await client.responses.create({ model, input: [question], tools: [weatherTool] });
      const outputs = calls(first).map((item) => ({ type: 'function_call_output' as const, call_id: item.call_id, output: `result of ${item.name}` }));
      const second = await client.responses.create({ model, input: [question, ...(first.output as ResponseInputItem[]), ...outputs], tools: [weatherTool] });
      expect(second.output_text).toBe('It is 18°C.');
      const sent = JSON.stringify(secondTurns[model]());
      expect(calls(first).length).toBeGreaterThan(0);
      for (const item of calls(first)) {
        // Gemini pairs a functionResponse with its call by name; the others by the call's id.
        expect(sent).toContain(model === 'gemini' ? `"name":"${item.name}"` : item.call_id);
        expect(sent).toContain(`result of ${item.name}`);
      }
      if (model === 'fake-gpt') {
        expect(secondTurns[model]()).toEqual([
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_r1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          { role: 'tool', tool_call_id: 'call_r1', content: 'result of get_weather' },
        ]);
      }
    },
  );
});

describe('namespace and hosted tools', () => {
  // A namespace as Codex sends its sub-agent tools, and a hosted tool as it sends web search.
  const agents = {
    type: 'namespace',
    name: 'multi_agent_v1',
    description: 'Tools for spawning and managing sub-agents.',
    tools: [
      {
        type: 'function',
        name: 'spawn_agent',
        description: 'Spawn a sub-agent.',
        strict: false,
        parameters: { type: 'object', properties: { message: { type: 'string' } } },
      },
      {
        type: 'function',
        name: 'close_agent',
        strict: false,
        parameters: { type: 'object', properties: { target: { type: 'string' } }, required: ['target'] },
      },
    ],
  };
  const webSearch = { type: 'web_search', external_web_access: false };
  const params = (extra: Record<string, unknown> = {}) =>
    ({
      model: 'fake-gpt',
      input: [{ role: 'user' as const, content: 'Close agent a1.' }],
      tools: [weatherTool, agents],
      ...extra,
    }) as unknown as ResponseCreateParamsNonStreaming;
  const closeCall = { id: 'call_n1', name: 'multi_agent_v1__close_agent', arguments: '{"target":"a1"}' };
  const sentTools = (i: number) =>
    ((upstream.requests[i]?.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((tool) => tool.function.name);

  it("sends a namespace's functions under <namespace>__<name> and answers the upstream's call with the namespace, JSON and streamed", async () => {
    upstream.script([
      { kind: 'ok', toolCalls: [closeCall] },
      { kind: 'ok', toolCalls: [closeCall] },
    ]);
    const data = await client.responses.create(params());
    expect(sentTools(0)).toEqual(['get_weather', 'multi_agent_v1__spawn_agent', 'multi_agent_v1__close_agent']);
    expect(calls(data)).toMatchObject([
      { type: 'function_call', call_id: 'call_n1', name: 'close_agent', namespace: 'multi_agent_v1', arguments: '{"target":"a1"}' },
    ]);
    const events = await collect(await client.responses.create({ ...params(), stream: true }));
    const named = { name: 'close_agent', namespace: 'multi_agent_v1' };
    expect(ofType(events, 'response.output_item.added')[0]?.item).toMatchObject(named);
    expect(ofType(events, 'response.output_item.done')[0]?.item).toMatchObject(named);
    expect(calls(ofType(events, 'response.completed')[0]?.response as Response)).toMatchObject([named]);
  });

  it('sends a namespaced function_call back under the name the upstream called it by', async () => {
    upstream.script([
      { kind: 'ok', toolCalls: [closeCall] },
      { kind: 'ok', text: 'Closed.' },
    ]);
    const first = await client.responses.create(params());
    const output = { type: 'function_call_output' as const, call_id: 'call_n1', output: 'closed' };
    const second = await client.responses.create(
      params({ input: [...(params().input as ResponseInputItem[]), ...(first.output as ResponseInputItem[]), output] }),
    );
    expect(second.output_text).toBe('Closed.');
    expect((upstream.requests[1]?.body as { messages: unknown[] }).messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_n1', type: 'function', function: { name: 'multi_agent_v1__close_agent', arguments: '{"target":"a1"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_n1', content: 'closed' },
    ]);
  });

  it('drops a hosted tool no provider runs and names it in x-gateway-dropped-tools, JSON and streamed', async () => {
    upstream.script([
      { kind: 'ok', text: 'No search needed.' },
      { kind: 'ok', text: 'No search needed.' },
    ]);
    const plain = await client.responses.create(params({ tools: [weatherTool, webSearch] })).withResponse();
    expect(plain.data.output_text).toBe('No search needed.');
    expect(plain.response.headers.get('x-gateway-dropped-tools')).toBe('web_search');
    expect(sentTools(0)).toEqual(['get_weather']);
    const streamed = await client.responses.create({ ...params({ tools: [weatherTool, webSearch] }), stream: true }).withResponse();
    expect(streamed.response.headers.get('x-gateway-dropped-tools')).toBe('web_search');
    expect(ofType(await collect(streamed.data), 'response.completed')[0]?.response.output_text).toBe('No search needed.');
    expect(sentTools(1)).toEqual(['get_weather']);
  });

  it('refuses a request that needs the dropped tool (tool_choice) with 422 naming tool_choice, and no header', async () => {
    const response = await postRaw({ ...params(), tools: [weatherTool, webSearch], tool_choice: { type: 'web_search' } });
    expect(response.status).toBe(422);
    expect(((await response.json()) as { error: unknown }).error).toMatchObject({ code: 'unsupported_parameter', param: 'tool_choice' });
    expect(response.headers.get('x-gateway-dropped-tools')).toBeNull();
    expect(upstream.requests).toHaveLength(0);
  });

  it('serves the same tools through Anthropic: the namespace as prefixed tools, web search left out', async () => {
    anthropic.script([{ kind: 'ok', text: 'Nothing to close.' }]);
    const { data, response } = await client.responses.create(params({ model: 'claude', tools: [agents, webSearch] })).withResponse();
    expect(data.output_text).toBe('Nothing to close.');
    expect(response.headers.get('x-gateway-dropped-tools')).toBe('web_search');
    expect((anthropic.requests[0]?.body as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name)).toEqual([
      'multi_agent_v1__spawn_agent',
      'multi_agent_v1__close_agent',
    ]);
  });
});

describe('what the gateway does not serve', () => {
  it.each<[string, Record<string, unknown>, number, string, string]>([
    ['conversation', { conversation: 'conv_1' }, 400, 'invalid_value', 'conversation'],
    ['prompt', { prompt: { id: 'pmpt_1' } }, 400, 'invalid_value', 'prompt'],
    [
      'a tool_choice requiring a hosted tool',
      { tools: [weatherTool, { type: 'web_search' }], tool_choice: { type: 'web_search' } },
      422,
      'unsupported_parameter',
      'tool_choice',
    ],
    ['a tool the client runs but chat cannot express', { tools: [weatherTool, { type: 'custom', name: 'patch' }] }, 422, 'unsupported_parameter', 'tools[1]'],
  ])('%s', async (_what, extra, status, code, param) => {
    const body = { model: 'fake-gpt', input: 'Hi', ...extra } as unknown as ResponseCreateParamsNonStreaming;
    const error = await apiFailure(client.responses.create(body));
    expect([error.status, error.error]).toMatchObject([status, { code, param, type: 'invalid_request_error' }]);
    if (status === 400) expect(error.message).toMatch(/keeps no conversations|not available/);
    // Streamed, it is refused the same: a plain HTTP error, never an event.
    const streamed = await apiFailure(client.responses.create({ ...body, stream: true }));
    expect([streamed.status, streamed.error]).toMatchObject([status, { code, param }]);
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('errors', () => {
  it('an unknown model → 404 model_not_found, streamed or not', async () => {
    for (const stream of [false, true]) {
      const error = await apiFailure(client.responses.create({ model: 'no-such-model', input: 'Hi', stream }));
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error.error).toMatchObject({ code: 'model_not_found', param: 'model', type: 'invalid_request_error' });
      expect(error.requestID).toMatch(/^req_/);
    }
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['a function_call without arguments', { input: [{ type: 'function_call', call_id: 'c1', name: 'f' }] }, 'missing_required_field', 'input[0].arguments'],
    ['a temperature above 2', { input: 'Hi', temperature: 3 }, 'invalid_value', 'temperature'],
    ['no input', {}, 'missing_required_field', 'input'],
  ])('a bad body (%s) → 400 naming the field', async (_what, extra, code, param) => {
    const error = await apiFailure(client.responses.create({ model: 'fake-gpt', ...extra } as unknown as ResponseCreateParamsNonStreaming));
    expect([error.status, error.error]).toMatchObject([400, { code, param, type: 'invalid_request_error' }]);
    expect(upstream.requests).toHaveLength(0);
  });

  it('an upstream failing with 5xx after its retries → 502 provider_failed, streamed as a real HTTP error before any event', async () => {
    upstream.script(Array.from({ length: 4 }, () => ({ kind: 'status' as const, status: 503 })));
    const plain = await apiFailure(client.responses.create({ model: 'fake-gpt', input: 'Hi' }));
    expect([plain.status, plain.error]).toMatchObject([502, { code: 'provider_failed', type: 'api_error' }]);
    const streamed = await apiFailure(client.responses.create({ model: 'fake-gpt', input: 'Hi', stream: true }));
    expect(streamed).toBeInstanceOf(OpenAI.InternalServerError);
    expect([streamed.status, streamed.error]).toMatchObject([502, { code: 'provider_failed' }]);
    expect(upstream.requests).toHaveLength(4);
  });

  it('a stream broken after its first chunk → the SDK stream throws our error, after the text so far', async () => {
    upstream.script([{ kind: 'break-after-first-chunk' }]);
    const { events, error } = await collectUntilError(await client.responses.create({ model: 'fake-gpt', input: 'Hi', stream: true }));
    expect(
      ofType(events, 'response.output_text.delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe('Hello');
    expect(ofType(events, 'response.completed')).toHaveLength(0);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).error).toMatchObject({ code: 'provider_failed', type: 'api_error', request_id: expect.stringMatching(/^req_/) });
    expect(upstream.requests).toHaveLength(1);
  });

  it('sends the failure as a named error event numbered after the events before it, on the wire', async () => {
    upstream.script([{ kind: 'break-after-first-chunk' }]);
    const frames = (await (await postRaw({ model: 'fake-gpt', input: 'Hi', stream: true })).text()).split('\n\n').filter((frame) => frame !== '');
    const last = FRAME.exec(frames.at(-1) ?? '');
    expect(last?.[1]).toBe('error');
    expect(JSON.parse(last?.[2] as string)).toMatchObject({
      type: 'error',
      code: 'provider_failed',
      sequence_number: frames.length - 1,
      error: { code: 'provider_failed', type: 'api_error' },
    });
  });

  it.each<[string, Record<string, unknown>, number, string, string]>([
    [
      'a JSON mode the provider lacks',
      { model: 'claude', input: 'Hi', text: { format: { type: 'json_object' } } },
      422,
      'unsupported_parameter',
      'text.format',
    ],
    [
      'a reasoning effort the model rejects',
      { model: 'fake-plain', input: 'Hi', reasoning: { effort: 'low' } },
      422,
      'unsupported_parameter',
      'reasoning.effort',
    ],
    ['an output limit beyond the window', { model: 'fake-tiny', input: 'Hi', max_output_tokens: 60 }, 422, 'context_length_exceeded', 'input'],
    [
      'an output limit below the thinking budget (refused by the worker)',
      { model: 'claude', input: 'Hi', reasoning: { effort: 'low' }, max_output_tokens: 100 },
      400,
      'invalid_value',
      'max_output_tokens',
    ],
    [
      'a file by URL',
      { model: 'claude', input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/a.pdf' }] }] },
      422,
      'unsupported_parameter',
      'input[0].content[0].file_url',
    ],
  ])('a refusal (%s) names the parameter as the Responses request has it', async (_what, body, status, code, param) => {
    const error = await apiFailure(client.responses.create(body as unknown as ResponseCreateParamsNonStreaming));
    expect([error.status, error.error]).toMatchObject([status, { code, param }]);
    expect(error.message).not.toMatch(/'(response_format|reasoning_effort|max_completion_tokens|max_tokens|messages)'/);
    expect([upstream.requests.length, anthropic.requests.length]).toEqual([0, 0]);
  });

  it('an auditor → 403 permission_denied', async () => {
    const auditor = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('acme', 'auditor')).secret, maxRetries: 0 });
    const error = await apiFailure(auditor.responses.create({ model: 'sim', input: 'Hi' }));
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(error.error).toMatchObject({ code: 'permission_denied' });
  });
});

describe('admission', () => {
  it('replays an idempotent response without a second upstream call; another body under the key → 422', async () => {
    const headers = { 'Idempotency-Key': randomUUID() };
    upstream.script([{ kind: 'ok', text: 'Only once.' }]);
    const first = await client.responses.create({ model: 'fake-gpt', input: 'Once' }, { headers }).withResponse();
    const second = await client.responses.create({ model: 'fake-gpt', input: 'Once' }, { headers }).withResponse();
    expect(second.data).toEqual(first.data);
    expect(second.response.headers.get('idempotent-replayed')).toBe('true');
    expect(first.response.headers.get('idempotent-replayed')).toBeNull();
    expect(upstream.requests).toHaveLength(1);
    const reused = await apiFailure(client.responses.create({ model: 'fake-gpt', input: 'Twice' }, { headers }));
    expect([reused.status, reused.error]).toMatchObject([422, { code: 'idempotency_key_reused' }]);
  });

  it('replays an idempotent stream event for event', async () => {
    const headers = { 'Idempotency-Key': randomUUID() };
    upstream.script([{ kind: 'ok', text: 'streamed only once', chunks: 3 }]);
    const params = { model: 'fake-gpt', input: 'Once', stream: true as const };
    const first = await collect(await client.responses.create(params, { headers }));
    const { data, response } = await client.responses.create(params, { headers }).withResponse();
    const second = await collect(data);
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    expect(second).toEqual(first);
    expect(ofType(second, 'response.completed')[0]?.response.output_text).toBe('streamed only once');
    expect(upstream.requests).toHaveLength(1);
  });

  it('is refused 402 insufficient_credits once the budget is spent, streamed or not', async () => {
    const tenantAdmin = (await gateway.issueKey('thrifty', 'admin')).secret;
    const app = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('thrifty', 'app')).secret, maxRetries: 0 });
    // A request reserves its prompt estimate + 20 output tokens × 2 micro-units; the first costs 1 + 30 × 2 = 61.
    expect((await call(gateway.origin, tenantAdmin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 100 })).status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 200));
    upstream.script([{ kind: 'ok', text: Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ') }]);
    await app.responses.create({ model: 'fake-gpt', input: 'spend', max_output_tokens: 20 });
    await eventually(async () => (await call(gateway.origin, tenantAdmin, 'GET', '/v1/budgets')).body.data[0].reserved_micros === 0, 5000, 'settled');
    expect((await call(gateway.origin, tenantAdmin, 'GET', '/v1/budgets')).body.data[0].spent_micros).toBe(61);
    for (const stream of [false, true]) {
      const refused = await apiFailure(app.responses.create({ model: 'fake-gpt', input: 'spend', max_output_tokens: 20, stream }));
      expect([refused.status, refused.error]).toMatchObject([402, { code: 'insufficient_credits' }]);
    }
    expect(upstream.requests).toHaveLength(1);
  });

  it('blocks PII naming where it was, or masks it before the upstream sees it, as the policy says', async () => {
    const tenantAdmin = (await gateway.issueKey('pii-tenant', 'admin')).secret;
    const app = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('pii-tenant', 'app')).secret, maxRetries: 0 });
    const inItem = {
      model: 'fake-gpt',
      input: [
        { role: 'user' as const, content: 'Hi' },
        { role: 'user' as const, content: [{ type: 'input_text' as const, text: 'mail jane.doe@example.com' }] },
      ],
    };
    const inInstructions = { model: 'fake-gpt', instructions: 'Reply to jane.doe@example.com', input: 'Hi' };
    expect((await call(gateway.origin, tenantAdmin, 'PUT', '/internal/v1/pii-policy', { mode: 'block', critical: ['email'] })).status).toBe(200);
    await eventually(
      async () =>
        (await app.responses.create(inItem).then(
          () => 200,
          (e: { status: number }) => e.status,
        )) === 422,
      3000,
      'the block policy',
    );
    expect((await apiFailure(app.responses.create(inItem))).error).toMatchObject({ code: 'pii_detected', param: 'input[1].content[0].text' });
    expect((await apiFailure(app.responses.create({ ...inInstructions, stream: true }))).error).toMatchObject({ code: 'pii_detected', param: 'instructions' });
    expect((await call(gateway.origin, tenantAdmin, 'PUT', '/internal/v1/pii-policy', { mode: 'mask', critical: ['email'] })).status).toBe(200);
    await eventually(
      async () =>
        app.responses.create(inItem).then(
          () => true,
          () => false,
        ),
      3000,
      'the mask policy',
    );
    await app.responses.create(inInstructions);
    const [item, instructions] = upstream.requests.slice(-2).map((request) => JSON.stringify(request.body));
    expect(item).toContain('mail ');
    expect(instructions).toContain('Reply to ');
    for (const sent of [item, instructions]) expect(sent).not.toContain('jane.doe@example.com');
  });

  it('records the usage under operation responses, streamed and not', async () => {
    upstream.script([
      { kind: 'ok', text: 'four words of answer' },
      { kind: 'ok', text: 'two words', chunks: 2 },
    ]);
    const plain = await client.responses.create({ model: 'fake-gpt', input: 'Count my words' }).withResponse();
    const streamed = await client.responses.create({ model: 'fake-gpt', input: 'Count these', stream: true }).withResponse();
    await collect(streamed.data);
    const first = await usageRecordOf(gateway, admin, plain.response.headers.get('x-request-id') as string);
    expect(first).toMatchObject({
      operation: 'responses',
      model: 'fake-gpt',
      provider: 'openai-compatible',
      prompt_tokens: 3,
      completion_tokens: 4,
      usage_source: 'provider',
      status: 'succeeded',
      stream: false,
    });
    expect(first.cost_micros).toBe(3 * 1 + 4 * 2);
    const second = await usageRecordOf(gateway, admin, streamed.response.headers.get('x-request-id') as string);
    expect(second).toMatchObject({ operation: 'responses', prompt_tokens: 2, completion_tokens: 2, status: 'succeeded', stream: true });
  });
});
