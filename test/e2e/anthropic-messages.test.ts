/**
 * Anthropic's Messages API at the gateway's door (POST /v1/messages and /v1/messages/count_tokens),
 * driven as Claude Code drives it: the official @anthropic-ai/sdk against web and worker processes.
 * `claude` is a fake Anthropic upstream and gets the request untranslated; `fake-gpt` (a fake
 * OpenAI-compatible upstream), `gemini` (a fake Gemini) and `sim` (the simulator) get it translated
 * to chat and back; `svc-standard` mixes both kinds. Then the errors in Anthropic's shape, the token
 * count, and the admission chain: idempotency, budgets, the PII policy, usage records.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import Anthropic, { type APIError } from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming, MessageParam, RawMessageStreamEvent, Tool } from '@anthropic-ai/sdk/resources/messages';
import type { WrittenCatalog } from '../../src/domain/catalog/schema.ts';
import { ANTHROPIC_FIXTURE_MODEL, anthropicError, readAnthropicFixture, startAnthropicUpstream, type FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { GEMINI_FIXTURE_MODEL, startGeminiUpstream, type FakeGemini } from '../helpers/fake-gemini.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { usageRecordOf } from '../helpers/sdk-calls.ts';
import { call } from '../helpers/http.ts';

const hello: MessageParam[] = [{ role: 'user', content: 'Say hello' }];
const weather: Tool = {
  name: 'get_weather',
  description: 'The weather in a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const webSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 } as const;
const EMAIL = 'jane.doe@example.com';

let anthropic: FakeAnthropic;
let openai: FakeUpstream;
let gemini: FakeGemini;
let gateway: GatewayUnderTest;
let secret: string;
let client: Anthropic;

function catalog(): WrittenCatalog {
  const base = testCatalog(openai.url);
  base.models.claude = { ...ANTHROPIC_FIXTURE_MODEL, base_url: anthropic.url, anthropic_beta: ['catalog-beta-2025-01-01'] };
  base.models.gemini = { ...GEMINI_FIXTURE_MODEL, base_url: gemini.url };
  return { models: base.models, tiers: { 'svc-flash': ['fake-gpt'], 'svc-standard': ['fake-gpt', 'claude'], 'svc-pro': ['claude', 'gemini'] } };
}

/** A client of the gateway as Claude Code makes one: the SDK appends /v1/messages itself. */
function sdk(options: ConstructorParameters<typeof Anthropic>[0] = {}): Anthropic {
  return new Anthropic({ baseURL: gateway.origin, apiKey: secret, maxRetries: 0, ...options });
}

/** The Anthropic.APIError a call ends with; fails the test when it succeeds or throws anything else. */
async function failure(request: Promise<unknown>): Promise<APIError> {
  const error = await request.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Anthropic.APIError);
  return error as APIError;
}

async function collect(stream: AsyncIterable<RawMessageStreamEvent>): Promise<RawMessageStreamEvent[]> {
  const events: RawMessageStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

function textOf(events: RawMessageStreamEvent[]): string {
  return events.map((event) => (event.type === 'content_block_delta' && event.delta.type === 'text_delta' ? event.delta.text : '')).join('');
}

/** An SSE fixture's events as Anthropic sent them, pings left out. */
function fixtureEvents(name: string): Array<Record<string, unknown>> {
  const events = readAnthropicFixture(`streams/${name}.sse`)
    .split('\n\n')
    .filter((event) => event.includes('data: '));
  return events.map((event) => JSON.parse(event.slice(event.indexOf('data: ') + 6)) as Record<string, unknown>).filter((event) => event.type !== 'ping');
}

/** What the fake Anthropic received, and in which headers. */
const sentToClaude = () => anthropic.requests[0] as { body: Record<string, unknown>; headers: Record<string, string | undefined> };

beforeAll(async () => {
  [anthropic, openai, gemini] = await Promise.all([startAnthropicUpstream(), startFakeUpstream(), startGeminiUpstream()]);
  const env = {
    ANTHROPIC_API_KEY: 'sk-ant-e2e',
    GEMINI_API_KEY: 'gm-e2e',
    RETRY_BASE_MS: '50',
    RETRY_MAX_ATTEMPTS: '2',
    RETRY_BUDGET_MS: '2000',
    SETTINGS_CACHE_TTL_MS: '100',
  };
  gateway = await startGateway({ catalog: catalog(), env });
  secret = (await gateway.issueKey('acme', 'developer')).secret;
  client = sdk();
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([anthropic?.close(), openai?.close(), gemini?.close()]);
});
beforeEach(async () => {
  anthropic.reset();
  openai.reset();
  gemini.reset();
  // Tests script 429s with long Retry-Afters and runs of failures: no pause or open breaker carries over.
  await gateway.resetBreakers();
});

describe('native: an Anthropic alias gets the request as the client sent it', () => {
  // Everything Claude Code sends that chat cannot say: cache markers, signed thinking, a server tool.
  const request = {
    model: 'claude',
    max_tokens: 4096,
    system: [{ type: 'text', text: 'You are a weather bot.', cache_control: { type: 'ephemeral' } }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should call get_weather.', signature: 'EqMBCkgIARABsig==' },
          { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_01A', content: [{ type: 'text', text: '18°C' }], cache_control: { type: 'ephemeral' } }],
      },
    ],
    thinking: { type: 'enabled', budget_tokens: 2048 },
    tools: [{ ...weather, cache_control: { type: 'ephemeral' } }, webSearch],
    tool_choice: { type: 'auto' },
    metadata: { user_id: 'user-42' },
    service_tier: 'auto',
  } satisfies MessageCreateParamsNonStreaming;
  const betas = ['interleaved-thinking-2025-05-14', 'catalog-beta-2025-01-01', 'context-1m-2025-08-07'];

  it.each([false, true])('passes the body through untouched but for the upstream model name, with the betas merged (stream: %s)', async (stream) => {
    if (stream) await client.beta.messages.stream({ ...request, betas }).finalMessage();
    else await client.beta.messages.create({ ...request, betas });
    expect(anthropic.requests).toHaveLength(1);
    expect(sentToClaude().body).toEqual({ ...request, model: 'claude-sonnet-test', ...(stream ? { stream: true } : {}) });
    expect(sentToClaude().headers['anthropic-beta']).toBe('catalog-beta-2025-01-01,interleaved-thinking-2025-05-14,context-1m-2025-08-07');
    // Our key goes upstream, never the client's.
    expect(sentToClaude().headers['x-api-key']).toBe('sk-ant-e2e');
    expect(JSON.stringify(sentToClaude().headers)).not.toContain(secret);
  });

  it("answers with the upstream's message, named by the alias", async () => {
    const { upstream } = JSON.parse(readAnthropicFixture('responses/thinking-tool-use.json')) as { upstream: Record<string, unknown> };
    anthropic.script([{ kind: 'fixture', name: 'thinking-tool-use' }]);
    const { data, response } = await client.messages.create({ model: 'claude', max_tokens: 4096, messages: hello }).withResponse();
    expect(data).toEqual({ ...upstream, model: 'claude' });
    expect(response.headers.get('request-id')).toMatch(/^req_/);
  });

  it("relays the upstream's events as it sent them, pings left out, message_start naming the alias", async () => {
    anthropic.script([{ kind: 'fixture', name: 'text', pieceBytes: 7 }]);
    const events = await collect(await client.messages.create({ model: 'claude', max_tokens: 100, messages: hello, stream: true }));
    const expected = fixtureEvents('text');
    const start = expected[0] as { message: Record<string, unknown> };
    expect(events).toEqual([{ ...start, message: { ...start.message, model: 'claude' } }, ...expected.slice(1)]);
  });

  it('messages.stream().finalMessage() assembles thinking with its signature, redacted thinking and the tool input', async () => {
    anthropic.script([{ kind: 'fixture', name: 'thinking-tool-use', pieceBytes: 13 }]);
    const stream = client.messages.stream({
      model: 'claude',
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      tools: [weather],
      messages: hello,
    });
    const signatures: string[] = [];
    stream.on('signature', (signature) => signatures.push(signature));
    const message = await stream.finalMessage();
    const signed = fixtureEvents('thinking-tool-use').find((event) => (event.delta as { type?: string } | undefined)?.type === 'signature_delta');
    const thinking = (signed?.delta as { signature: string }).signature;
    expect(signatures).toEqual([thinking]);
    expect(message).toMatchObject({ model: 'claude', stop_reason: 'tool_use', usage: { input_tokens: 380, output_tokens: 96 } });
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'The user asks for the weather in Paris; I should call get_weather.', signature: thinking },
      { type: 'redacted_thinking', data: expect.stringMatching(/^EmwKAhgB.+aZpQ==$/) },
      { type: 'tool_use', id: 'toolu_01Th7vK2pQ9mN4xW8sL3rT6y', name: 'get_weather', input: { city: 'Paris' } },
    ]);
  });

  it.each([false, true])("records the native usage, cache tokens priced at the catalog's cache prices (stream: %s)", async (stream) => {
    const usage = { input_tokens: 100, cache_creation_input_tokens: 2000, cache_read_input_tokens: 5000, output_tokens: 50 };
    anthropic.script([{ kind: 'ok', text: 'cached answer', usage }]);
    const params = { model: 'claude', max_tokens: 100, messages: hello };
    const { data, response } = stream ? await client.messages.stream(params).withResponse() : await client.messages.create(params).withResponse();
    const message = 'finalMessage' in data ? await data.finalMessage() : data;
    expect(message.usage).toMatchObject(usage);
    const record = await usageRecordOf(gateway, secret, response.headers.get('request-id') as string);
    expect(record).toMatchObject({
      operation: 'messages',
      model: 'claude',
      provider: 'anthropic',
      upstream_model: 'claude-sonnet-test',
      stream,
      status: 'succeeded',
    });
    expect(record).toMatchObject({ prompt_tokens: 7100, completion_tokens: 50, cached_tokens: 5000, cache_write_tokens: 2000, usage_source: 'provider' });
    // 100 × 3 + 5,000 × 0.3 + 2,000 × 3.75 + 50 × 15 micro-units.
    expect(record.cost_micros).toBe(100 * 3 + 5000 * 0.3 + 2000 * 3.75 + 50 * 15);
  });
});

describe('translated: chat upstreams answer in Anthropic’s shape', () => {
  it('sends the OpenAI-compatible upstream a chat request: system, turns, tools as functions, tool_choice, stop, max_tokens', async () => {
    openai.script([{ kind: 'ok', text: 'It is 18°C.' }]);
    const message = await client.messages.create({
      model: 'fake-gpt',
      max_tokens: 300,
      system: 'Be brief.',
      stop_sequences: ['END'],
      metadata: { user_id: 'user-42' },
      tools: [weather],
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '18°C' }] },
      ],
    });
    expect(openai.requests[0]?.body).toEqual({
      model: 'fake-upstream-model',
      stream: false,
      max_tokens: 300,
      stop: ['END'],
      user: 'user-42',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: weather.description, parameters: weather.input_schema } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
    });
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'fake-gpt',
      stop_reason: 'end_turn',
      content: [{ type: 'text', text: 'It is 18°C.' }],
    });
    expect(message.id).toMatch(/^msg_/);
    expect(message.usage).toMatchObject({ input_tokens: 6, output_tokens: 3 });
  });

  it.each([
    ['fake-gpt', 'Hello from the fake upstream.', 5],
    ['gemini', 'Hello from the fake gemini.', 5],
    ['sim', null, 12],
  ])('%s: the same text whole and streamed, the events in Anthropic’s order ending with message_delta and message_stop', async (model, text, outputTokens) => {
    const whole = await client.messages.create({ model, max_tokens: 100, messages: hello });
    expect(whole).toMatchObject({ model, stop_reason: 'end_turn', usage: { output_tokens: outputTokens } });
    const answer = (whole.content[0] as Anthropic.TextBlock).text;
    if (text !== null) expect(answer).toBe(text);
    const events = await collect(await client.messages.create({ model, max_tokens: 100, messages: hello, stream: true }));
    const types = events.map((event) => event.type);
    const deltas = types.filter((type) => type === 'content_block_delta').length;
    expect(deltas).toBeGreaterThan(1);
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      ...Array<string>(deltas).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[0]).toMatchObject({ message: { model, content: [], stop_reason: null } });
    expect(textOf(events)).toBe(answer);
    expect(events.at(-2)).toMatchObject({ delta: { stop_reason: 'end_turn' }, usage: { output_tokens: outputTokens } });
  });

  it('streams from the OpenAI-compatible upstream with its usage asked for; the real counts replace the estimate', async () => {
    const { data: stream, response } = await client.messages.stream({ model: 'fake-gpt', max_tokens: 100, messages: hello }).withResponse();
    const message = await stream.finalMessage();
    expect(openai.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(message.usage).toMatchObject({ input_tokens: 2, output_tokens: 5 });
    const record = await usageRecordOf(gateway, secret, response.headers.get('request-id') as string);
    expect(record).toMatchObject({
      operation: 'messages',
      model: 'fake-gpt',
      provider: 'openai-compatible',
      prompt_tokens: 2,
      completion_tokens: 5,
      stream: true,
      usage_source: 'provider',
    });
  });

  // Claude Code shows the context in use from message_start; a chat upstream reports its counts
  // only at the end, so the gateway's own count (count_tokens') is what message_start can carry.
  it.each(['fake-gpt', 'svc-standard'])(
    "%s: a translated stream's message_start reports the prompt's input tokens as count_tokens counts them",
    async (model) => {
      const prompt = {
        model,
        system: 'You are a weather bot.',
        tools: [weather],
        messages: [...hello, { role: 'assistant' as const, content: 'Hello!' }, { role: 'user' as const, content: 'Weather in Paris?' }],
      };
      const { input_tokens: counted } = await client.messages.countTokens(prompt);
      const events = await collect(await client.messages.create({ ...prompt, max_tokens: 100, stream: true }));
      expect(counted).toBeGreaterThan(20);
      expect(events[0]).toMatchObject({ type: 'message_start', message: { model: 'fake-gpt', usage: { input_tokens: counted } } });
    },
  );

  it('a tool-use round trip through Gemini: tool_use blocks, then tool_result turns sent back as function responses', async () => {
    gemini.script([
      { kind: 'fixture', name: 'function-calls' },
      { kind: 'ok', text: 'Sunny, 21°C, 3 pm.' },
    ]);
    const question: MessageParam = { role: 'user', content: 'Weather and time in Tokyo?' };
    const tools: Tool[] = [weather, { name: 'get_time', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
    const first = await client.messages.create({ model: 'gemini', max_tokens: 500, tools, messages: [question] });
    expect(first.stop_reason).toBe('tool_use');
    // A call's id carries Gemini's signature, when it has one (the next test follows it).
    expect(first.content).toEqual([
      {
        type: 'tool_use',
        id: expect.stringMatching(/^fc_7q2k9x4m(__thought__[\w-]+)?$/),
        name: 'get_weather',
        input: { city: 'Tokyo', unit: 'celsius' },
        caller: { type: 'direct' },
      },
      {
        type: 'tool_use',
        id: expect.stringMatching(/^fc_3h8w1c6z(__thought__[\w-]+)?$/),
        name: 'get_time',
        input: { city: 'Tokyo' },
        caller: { type: 'direct' },
      },
    ]);
    const [weatherCall, timeCall] = first.content as Anthropic.ToolUseBlock[];
    const results = [
      { type: 'tool_result' as const, tool_use_id: weatherCall?.id ?? '', content: 'Sunny, 21°C' },
      { type: 'tool_result' as const, tool_use_id: timeCall?.id ?? '', content: '3 pm' },
    ];
    const second = await client.messages.create({
      model: 'gemini',
      max_tokens: 500,
      tools,
      messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: results }],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'Sunny, 21°C, 3 pm.', citations: null }]);
    const contents = (gemini.requests[1]?.body as { contents: Array<{ role: string; parts: unknown[] }> }).contents;
    expect(contents.map((turn) => turn.role)).toEqual(['user', 'model', 'user']);
    expect(contents[1]?.parts).toMatchObject([
      { functionCall: { name: 'get_weather', args: { city: 'Tokyo', unit: 'celsius' } } },
      { functionCall: { name: 'get_time', args: { city: 'Tokyo' } } },
    ]);
    expect(contents[2]?.parts).toMatchObject([{ functionResponse: { name: 'get_weather' } }, { functionResponse: { name: 'get_time' } }]);
    expect(JSON.stringify(contents[2])).toContain('Sunny, 21°C');
  });

  // Gemini 3 refuses a call of the current turn that comes back without its thoughtSignature
  // (src/providers/gemini/contents.ts), so the signature must survive the trip through a tool_use block.
  it('carries a Gemini call’s thought signature to the next turn, as Gemini 3 requires', async () => {
    gemini.script([{ kind: 'fixture', name: 'function-calls' }]);
    const question: MessageParam = { role: 'user', content: 'Weather in Tokyo?' };
    const first = await client.messages.create({ model: 'gemini', max_tokens: 500, tools: [weather], messages: [question] });
    const results = first.content.map((block) => ({ type: 'tool_result' as const, tool_use_id: (block as Anthropic.ToolUseBlock).id, content: 'ok' }));
    await client.messages.create({
      model: 'gemini',
      max_tokens: 500,
      tools: [weather],
      messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: results }],
    });
    const parts = (gemini.requests[1]?.body as { contents: Array<{ parts: Array<Record<string, unknown>> }> }).contents[1]?.parts;
    expect(parts?.[0]).toMatchObject({ functionCall: { name: 'get_weather' }, thoughtSignature: expect.stringMatching(/^CikBcsjafFK168/) });
  });

  it('messages.stream() assembles the tool calls of a Gemini stream', async () => {
    gemini.script([{ kind: 'fixture', name: 'function-call', pieceBytes: 11 }]);
    const message = await client.messages
      .stream({ model: 'gemini', max_tokens: 500, tools: [weather], messages: [{ role: 'user', content: 'Weather in Paris?' }] })
      .finalMessage();
    expect(message).toMatchObject({ model: 'gemini', stop_reason: 'tool_use', usage: { output_tokens: 31 + 84 } });
    expect(message.content.map((block) => [block.type, (block as Anthropic.ToolUseBlock).name, (block as Anthropic.ToolUseBlock).input])).toEqual([
      ['tool_use', 'get_weather', { city: 'Paris', unit: 'celsius' }],
      ['tool_use', 'get_time', { city: 'Paris' }],
    ]);
    expect(gemini.requests[0]?.path).toBe('/v1beta/models/gemini-test-flash:streamGenerateContent');
  });
});

describe('server tools', () => {
  it.each(['fake-gpt', 'svc-flash'])('%s, with no native candidate: 422 unsupported_parameter naming tools[0], in Anthropic’s shape', async (model) => {
    const error = await failure(client.messages.create({ model, max_tokens: 100, tools: [webSearch], messages: hello }));
    expect(error).toBeInstanceOf(Anthropic.UnprocessableEntityError);
    expect(error.error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', code: 'unsupported_parameter', param: 'tools[0]' },
      request_id: expect.stringMatching(/^req_/),
    });
    expect(openai.requests).toHaveLength(0);
  });

  it('a mixed tier serves a server tool with its native candidate, and other requests with its first', async () => {
    const native = await client.messages.create({ model: 'svc-standard', max_tokens: 100, tools: [webSearch], messages: hello });
    expect(native.model).toBe('claude');
    expect(sentToClaude().body.tools).toEqual([webSearch]);
    const translated = await client.messages.create({ model: 'svc-standard', max_tokens: 100, tools: [weather], messages: hello });
    expect(translated.model).toBe('fake-gpt');
    expect([anthropic.requests.length, openai.requests.length]).toEqual([1, 1]);
  });
});

describe('errors in Anthropic’s shape, as the SDK types them', () => {
  it('takes the key as x-api-key or as a bearer token; no key or a wrong one is a 401 authentication_error', async () => {
    const bearer = sdk({ apiKey: null, authToken: secret });
    expect((await bearer.messages.create({ model: 'sim', max_tokens: 10, messages: hello })).model).toBe('sim');
    const missing = await failure(
      sdk({ apiKey: null, authToken: null, defaultHeaders: { authorization: null } }).messages.create({ model: 'sim', max_tokens: 10, messages: hello }),
    );
    expect(missing).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(missing.error).toMatchObject({ type: 'error', error: { type: 'authentication_error', code: 'missing_api_key' } });
    const wrong = await failure(sdk({ apiKey: 'sk-gw-not-a-key' }).messages.create({ model: 'sim', max_tokens: 10, messages: hello }));
    expect(wrong).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(wrong.error).toMatchObject({ error: { type: 'authentication_error', code: 'invalid_api_key' } });
    // The request-id header of Anthropic's API, on a refusal made before the route's own hooks ran too.
    expect(wrong.requestID).toMatch(/^req_/);
    expect(wrong.requestID).toBe((wrong.error as { request_id: string }).request_id);
  });

  it('an auditor may not create messages: 403 permission_error', async () => {
    const auditor = sdk({ apiKey: (await gateway.issueKey('acme', 'auditor')).secret });
    const error = await failure(auditor.messages.create({ model: 'sim', max_tokens: 10, messages: hello }));
    expect(error).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(error.error).toMatchObject({ error: { type: 'permission_error', code: 'permission_denied' } });
    expect(error.requestID).toMatch(/^req_/);
  });

  it('an unknown model is a 404 not_found_error, code model_not_found', async () => {
    const error = await failure(client.messages.create({ model: 'claude-9', max_tokens: 10, messages: hello }));
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    expect(error.error).toMatchObject({ error: { type: 'not_found_error', code: 'model_not_found', param: 'model' } });
  });

  it('an invalid body or anthropic-version is a 400 invalid_request_error naming the parameter', async () => {
    const body = await failure(client.messages.create({ model: 'claude', max_tokens: 0, messages: hello }));
    expect(body).toBeInstanceOf(Anthropic.BadRequestError);
    expect(body.error).toMatchObject({ error: { type: 'invalid_request_error', param: 'max_tokens' } });
    const version = await failure(
      sdk({ defaultHeaders: { 'anthropic-version': 'latest' } }).messages.create({ model: 'claude', max_tokens: 10, messages: hello }),
    );
    expect(version.error).toMatchObject({ error: { type: 'invalid_request_error', param: 'anthropic-version' } });
    expect(anthropic.requests).toHaveLength(0);
  });

  it('an upstream rate limit that outlasts the retry budget is a 429 rate_limit_error with its Retry-After', async () => {
    anthropic.answerByDefault({ kind: 'status', status: 429, headers: { 'retry-after': '7' } });
    const error = await failure(client.messages.create({ model: 'claude', max_tokens: 10, messages: hello }));
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect(error.error).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
    expect(error.headers?.get('retry-after')).toBe('7');
  });

  it("keeps the meaning of the upstream's 400: a prompt too long stays an invalid_request_error saying so, tried once", async () => {
    anthropic.script([{ kind: 'status', status: 400, body: anthropicError('invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum') }]);
    const error = await failure(client.messages.create({ model: 'claude', max_tokens: 10, messages: hello }));
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.error).toMatchObject({ error: { type: 'invalid_request_error' } });
    expect(error.message).toContain('prompt is too long: 210000 tokens > 200000 maximum');
    expect(anthropic.requests).toHaveLength(1);
  });

  // Anthropic's overloaded_error is what its SDK and Claude Code retry as an overload; Gemini's 503
  // UNAVAILABLE says only that the service is unavailable (overloaded or down), so it stays api_error.
  it.each([
    ['claude', 'overloaded_error'],
    ['gemini', 'api_error'],
  ])('%s: an upstream error after the first token ends the stream with event: error (%s), which the SDK throws', async (model, type) => {
    if (model === 'claude') anthropic.script([{ kind: 'error-event', afterText: 'Partial ', error: { type: 'overloaded_error', message: 'Overloaded' } }]);
    else gemini.script([{ kind: 'error-event', afterText: 'Partial ', error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }]);
    const stream = client.messages.stream({ model, max_tokens: 100, messages: hello });
    const texts: string[] = [];
    stream.on('text', (text) => texts.push(text));
    const error = await failure(stream.finalMessage());
    expect(texts.join('')).toBe('Partial ');
    expect(error.error).toMatchObject({ type: 'error', error: { type, code: 'provider_failed' }, request_id: expect.stringMatching(/^req_/) });
  });

  it('an upstream that stays overloaded before the first token is a 502 overloaded_error, code provider_failed', async () => {
    anthropic.answerByDefault({ kind: 'status', status: 529 });
    const error = await failure(client.messages.create({ model: 'claude', max_tokens: 10, messages: hello }));
    expect(error.status).toBe(502);
    expect(error.error).toMatchObject({ error: { type: 'overloaded_error', code: 'provider_failed' } });
  });
});

describe('POST /v1/messages/count_tokens', () => {
  it('counts with the gateway’s tokenizer: positive, growing with the input, no upstream call, no usage record', async () => {
    const small = await client.messages.countTokens({ model: 'claude', messages: hello });
    const { data: large, response } = await client.messages
      .countTokens({
        model: 'svc-standard',
        system: 'You are a careful assistant.',
        tools: [weather],
        messages: [...hello, { role: 'assistant', content: 'Hello!' }, { role: 'user', content: 'Now tell me a long story about the sea.' }],
      })
      .withResponse();
    expect(small.input_tokens).toBeGreaterThan(2);
    expect(small.input_tokens).toBeLessThan(20);
    expect(large.input_tokens).toBeGreaterThan(small.input_tokens + 20);
    expect([anthropic.requests.length, openai.requests.length, gemini.requests.length]).toEqual([0, 0, 0]);
    // A message's record, written after, is seen; the count's never is.
    const { response: after } = await client.messages.create({ model: 'sim', max_tokens: 10, messages: hello }).withResponse();
    await usageRecordOf(gateway, secret, after.headers.get('request-id') as string);
    const today = new Date().toISOString().slice(0, 10);
    const records = (await call(gateway.origin, secret, 'GET', `/v1/usage?since=${today}&limit=1000`)).body.data as Array<{ request_id: string }>;
    expect(records.map((record) => record.request_id)).not.toContain(response.headers.get('request-id'));
  });

  it('answers an unknown model 404 not_found_error', async () => {
    const error = await failure(client.messages.countTokens({ model: 'claude-9', messages: hello }));
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    expect(error.error).toMatchObject({ error: { type: 'not_found_error', code: 'model_not_found' } });
  });
});

describe('admission', () => {
  it.each([false, true])('replays an idempotent request from its stored answer, with one upstream call (stream: %s)', async (stream) => {
    anthropic.script([{ kind: 'ok', text: 'Only once.' }]);
    const headers = { 'Idempotency-Key': randomUUID() };
    const params = { model: 'claude', max_tokens: 50, messages: hello };
    const send = async () => {
      if (!stream) return client.messages.create(params, { headers }).withResponse();
      const { data, response } = await client.messages.create({ ...params, stream: true }, { headers }).withResponse();
      return { data: await collect(data), response };
    };
    const first = await send();
    const again = await send();
    expect(again.data).toEqual(first.data);
    const answer = stream ? textOf(first.data as RawMessageStreamEvent[]) : ((first.data as Anthropic.Message).content[0] as Anthropic.TextBlock).text;
    expect(answer).toBe('Only once.');
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(anthropic.requests).toHaveLength(1);
    const reused = await failure(client.messages.create({ ...params, max_tokens: 51 }, { headers }));
    expect(reused.error).toMatchObject({ error: { type: 'invalid_request_error', code: 'idempotency_key_reused' } });
  });

  it('an exhausted budget is a 402 billing_error; a token count costs nothing and still answers', async () => {
    const admin = (await gateway.issueKey('thrifty', 'admin')).secret;
    expect((await call(gateway.origin, admin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 1 })).status).toBe(201);
    const thrifty = sdk({ apiKey: admin });
    const error = await failure(thrifty.messages.create({ model: 'claude', max_tokens: 100, messages: hello }));
    expect(error).toBeInstanceOf(Anthropic.PaymentRequiredError);
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'billing_error', code: 'insufficient_credits' } });
    expect(anthropic.requests).toHaveLength(0);
    expect((await thrifty.messages.countTokens({ model: 'claude', messages: hello })).input_tokens).toBeGreaterThan(0);
  });

  describe('the PII policy', () => {
    let privacy: Anthropic;
    let admin: string;
    // The address is in an earlier turn's signed thinking, a text, a tool call's input, and a tool's
    // answer nested in a search result; the turn the tool result continues has clean signed thinking.
    const turns: MessageParam[] = [
      { role: 'user', content: 'Who should I write to?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: `The user's contact is ${EMAIL}.`, signature: 'sig-earlier-turn' },
          { type: 'text', text: 'Tell me more.' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: `Write to ${EMAIL} today.` }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should send the mail.', signature: 'sig-current-turn' },
          { type: 'tool_use', id: 'toolu_01M', name: 'send_mail', input: { to: [EMAIL], options: { subject: 'Hello', cc: 'bob@example.org', urgent: true } } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01M',
            content: [
              { type: 'search_result', source: 'https://crm.test/log', title: 'Mail log', content: [{ type: 'text', text: `Delivered to ${EMAIL}.` }] },
            ],
          },
        ],
      },
    ];
    const request = {
      model: 'claude',
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      tools: [weather],
      messages: turns,
    } satisfies MessageCreateParamsNonStreaming;
    const setPolicy = async (mode: string) => {
      expect((await call(gateway.origin, admin, 'PUT', '/internal/v1/pii-policy', { mode, critical: ['email'] })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 150));
    };

    beforeAll(async () => {
      admin = (await gateway.issueKey('privacy', 'admin')).secret;
      privacy = sdk({ apiKey: (await gateway.issueKey('privacy', 'app')).secret });
    });

    it('block: 422 pii_detected naming every block, thinking, tool input and nested tool result included, never the value; nothing sent', async () => {
      await setPolicy('block');
      const error = await failure(privacy.messages.create(request));
      expect(error.status).toBe(422);
      expect(error.error).toMatchObject({ error: { type: 'invalid_request_error', code: 'pii_detected', param: 'messages[1].content[0].thinking' } });
      for (const param of [
        'messages[2].content[0].text',
        'messages[3].content[1].input.to[0]',
        'messages[3].content[1].input.options.cc',
        'messages[4].content[0].content[0].content[0].text',
      ]) {
        expect(error.message).toContain(param);
      }
      expect(error.message).not.toContain(EMAIL);
      expect(anthropic.requests).toHaveLength(0);
    });

    // Anthropic refuses a thinking block whose text changed (its signature no longer matches), and
    // lets a client leave out the thinking of earlier turns: the block goes, the rest is masked.
    it('mask: placeholders in texts, tool input and nested tool results; signed thinking holding the address left out, clean thinking untouched', async () => {
      await setPolicy('mask');
      await privacy.messages.create(request);
      const sent = sentToClaude().body.messages as MessageParam[];
      expect(sent[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Tell me more.' }] });
      expect(sent[2]?.content).toEqual([{ type: 'text', text: 'Write to [EMAIL_1] today.' }]);
      expect(sent[3]?.content).toEqual([
        turns[3]?.content[0],
        { type: 'tool_use', id: 'toolu_01M', name: 'send_mail', input: { to: ['[EMAIL_1]'], options: { subject: 'Hello', cc: '[EMAIL_2]', urgent: true } } },
      ]);
      expect(JSON.stringify(sent[4])).toContain('Delivered to [EMAIL_1].');
      expect(JSON.stringify(sentToClaude().body)).not.toMatch(/example\.(com|org)/);
    });

    it("mask: a translated conversation's unsigned thinking (a chat model's reasoning) is masked in place", async () => {
      await setPolicy('mask');
      const reasoning: MessageParam[] = [
        ...hello,
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: `Greet ${EMAIL}.`, signature: '' },
            { type: 'text', text: 'Hello!' },
          ],
        },
        { role: 'user', content: 'Thanks.' },
      ];
      await privacy.messages.create({ model: 'fake-gpt', max_tokens: 100, messages: reasoning });
      const assistant = (openai.requests[0]?.body as { messages: Array<Record<string, unknown>> }).messages[1];
      expect(assistant).toMatchObject({
        role: 'assistant',
        reasoning_content: 'Greet [EMAIL_1].',
        thinking_blocks: [{ type: 'thinking', thinking: 'Greet [EMAIL_1].', signature: '' }],
      });
    });

    it('flag: an address only in a tool call and a tool result is flagged on the usage record, and sent as it was', async () => {
      await setPolicy('flag');
      const mailing: MessageParam = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01M', name: 'send_mail', input: { to: [EMAIL] } }] };
      const { response } = await privacy.messages
        .create({ model: 'claude', max_tokens: 100, messages: [hello[0] as MessageParam, mailing, turns[4] as MessageParam] })
        .withResponse();
      expect(JSON.stringify(sentToClaude().body.messages)).toContain(EMAIL);
      const record = await usageRecordOf(gateway, admin, response.headers.get('request-id') as string);
      expect(record.pii_flags).toEqual(['email']);
    });
  });
});
