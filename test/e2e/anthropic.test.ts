/**
 * Claude through the gateway: the official openai SDK at our door, web and worker processes, and a
 * fake Anthropic upstream on loopback speaking the Messages API's real shapes. Every request fixture
 * of test/fixtures/anthropic/requests is sent as a client would and the body the upstream received is
 * compared with the fixture; every response and stream fixture is answered and compared with what the
 * SDK gets. Then what only a whole system shows: signatures carried to the next turn, cache-token
 * arithmetic in the usage record, each class of error.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { type APIError } from 'openai';
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import type { WrittenCatalog } from '../../src/domain/catalog/schema.ts';
import type { ModelOf } from '../../src/providers/model.ts';
import type { anthropicDescriptor } from '../../src/providers/anthropic/descriptor.ts';
import {
  ANTHROPIC_FIXTURE_MODEL,
  ANTHROPIC_FIXTURES_DIR,
  anthropicError,
  readAnthropicFixture,
  startAnthropicUpstream,
  type FakeAnthropic,
} from '../helpers/fake-anthropic.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { apiFailure as failure, drain, fixtureNames, requestIdOf, usageRecordOf } from '../helpers/sdk-calls.ts';

interface RequestFixture {
  model?: Partial<ModelOf<typeof anthropicDescriptor>>;
  stream: boolean;
  openai: Record<string, unknown>;
  upstream: Record<string, unknown>;
}

const REQUESTS = fixtureNames(new URL('requests/', ANTHROPIC_FIXTURES_DIR), '.json');
const RESPONSES = fixtureNames(new URL('responses/', ANTHROPIC_FIXTURES_DIR), '.json');
const STREAMS = fixtureNames(new URL('streams/', ANTHROPIC_FIXTURES_DIR), '.chunks.json');
const requestFixture = (name: string) => JSON.parse(readAnthropicFixture(`requests/${name}.json`)) as RequestFixture;
const hello = [{ role: 'user' as const, content: 'Say hello' }];

let upstream: FakeAnthropic;
let gateway: GatewayUnderTest;
let client: OpenAI;
let secret: string;

/** An alias per request fixture (with its catalog overrides), and `claude` with none. */
function catalog(baseUrl: string): WrittenCatalog {
  const models: WrittenCatalog['models'] = { claude: { ...ANTHROPIC_FIXTURE_MODEL, base_url: baseUrl } };
  for (const name of REQUESTS) models[`claude-${name}`] = { ...ANTHROPIC_FIXTURE_MODEL, ...requestFixture(name).model, base_url: baseUrl };
  return { models, tiers: { 'svc-flash': ['claude'], 'svc-standard': ['claude'], 'svc-pro': ['claude'] } };
}

beforeAll(async () => {
  upstream = await startAnthropicUpstream();
  gateway = await startGateway({ catalog: catalog(upstream.url), env: { ANTHROPIC_API_KEY: 'sk-ant-e2e', RETRY_BASE_MS: '50', RETRY_BUDGET_MS: '3000' } });
  secret = (await gateway.issueKey('acme', 'developer')).secret;
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

describe('requests, as the upstream receives them', () => {
  it.each(REQUESTS)('%s', async (name) => {
    const fixture = requestFixture(name);
    const params = { ...fixture.openai, model: `claude-${name}` } as unknown as ChatCompletionCreateParams;
    if (fixture.stream) await drain(await client.chat.completions.create({ ...params, stream: true }));
    else await client.chat.completions.create({ ...params, stream: false });
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]?.body).toEqual(fixture.upstream);
  });

  it('carries our key and the API version in their headers, to /v1/messages', async () => {
    await client.chat.completions.create({ model: 'claude', messages: hello });
    const recorded = upstream.requests[0];
    expect(recorded?.path).toBe('/v1/messages');
    expect(recorded?.headers['x-api-key']).toBe('sk-ant-e2e');
    expect(recorded?.headers['anthropic-version']).toBe('2023-06-01');
    expect(recorded?.headers.authorization).toBeUndefined();
  });
});

describe('answers, as the client receives them', () => {
  it.each(RESPONSES)('%s', async (name) => {
    const { completion: expected } = JSON.parse(readAnthropicFixture(`responses/${name}.json`)) as { completion: { choices: unknown; usage?: unknown } };
    upstream.script([{ kind: 'fixture', name }]);
    const completion = await client.chat.completions.create({ model: 'claude', messages: hello });
    expect(completion.model).toBe('claude');
    expect(completion.choices).toEqual(expected.choices);
    if (expected.usage !== undefined) expect(completion.usage).toEqual(expected.usage);
  });

  it.each(STREAMS)('stream %s, its bytes cut every 7', async (name) => {
    const expected = JSON.parse(readAnthropicFixture(`streams/${name}.chunks.json`)) as Array<{ choices: unknown[]; usage?: unknown }>;
    upstream.script([{ kind: 'fixture', name, pieceBytes: 7 }]);
    const chunks = await drain(
      await client.chat.completions.create({ model: 'claude', messages: hello, stream: true, stream_options: { include_usage: true } }),
    );
    const content = expected.filter((chunk) => chunk.choices.length > 0);
    expect(chunks.slice(0, content.length).map((chunk) => chunk.choices)).toEqual(content.map((chunk) => chunk.choices));
    expect(chunks.every((chunk) => chunk.model === 'claude')).toBe(true);
    expect(chunks.at(-1)?.usage).toEqual(expected.at(-1)?.usage);
  });
});

describe('reasoning carried to the next turn', () => {
  const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  const question = { role: 'user' as const, content: 'What is the weather in Paris?' };

  async function nextTurnOf(message: OpenAI.Chat.Completions.ChatCompletionMessage): Promise<unknown[]> {
    const call = message.tool_calls?.[0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    await client.chat.completions.create({
      model: 'claude',
      reasoning_effort: 'low',
      tools,
      messages: [question, message, { role: 'tool', tool_call_id: call.id, content: '18°C' }],
    });
    return (upstream.requests.at(-1)?.body as { messages: Array<{ content: unknown[] }> }).messages[1]?.content ?? [];
  }

  it('sends the thinking blocks and their signatures back, unchanged, before the tool call (JSON)', async () => {
    const { upstream: answer } = JSON.parse(readAnthropicFixture('responses/thinking-tool-use.json')) as {
      upstream: { content: Array<Record<string, unknown>> };
    };
    upstream.script([{ kind: 'fixture', name: 'thinking-tool-use' }]);
    const first = await client.chat.completions.create({ model: 'claude', reasoning_effort: 'low', tools, messages: [question] });
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(await nextTurnOf(first.choices[0]?.message as OpenAI.Chat.Completions.ChatCompletionMessage)).toEqual(answer.content);
  });

  it('does so from a stream assembled by the openai SDK (chat.completions.stream)', async () => {
    upstream.script([{ kind: 'fixture', name: 'thinking-tool-use', pieceBytes: 13 }]);
    const stream = client.chat.completions.stream({ model: 'claude', reasoning_effort: 'low', tools, messages: [question] });
    const first = await stream.finalChatCompletion();
    const sent = await nextTurnOf(first.choices[0]?.message as OpenAI.Chat.Completions.ChatCompletionMessage);
    expect(sent.map((block) => (block as { type: string }).type)).toEqual(['thinking', 'redacted_thinking', 'tool_use']);
    expect(sent[0]).toMatchObject({
      thinking: 'The user asks for the weather in Paris; I should call get_weather.',
      signature: expect.stringMatching(/^EqMBCkgI.+3lE$/),
    });
    expect(sent[2]).toEqual({ type: 'tool_use', id: 'toolu_01Th7vK2pQ9mN4xW8sL3rT6y', name: 'get_weather', input: { city: 'Paris' } });
  });
});

describe('usage', () => {
  it("counts cache reads and writes as prompt tokens, and prices them at the catalog's cache prices", async () => {
    upstream.script([
      { kind: 'ok', text: 'cached', usage: { input_tokens: 100, cache_creation_input_tokens: 2000, cache_read_input_tokens: 5000, output_tokens: 50 } },
    ]);
    const completion = await client.chat.completions.create({ model: 'claude', messages: hello });
    expect(completion.usage).toEqual({
      prompt_tokens: 7100,
      completion_tokens: 50,
      total_tokens: 7150,
      prompt_tokens_details: { cached_tokens: 5000, cache_write_tokens: 2000 },
    });
    const record = await usageRecordOf(gateway, secret, requestIdOf(completion));
    expect(record).toMatchObject({
      provider: 'anthropic',
      upstream_model: 'claude-sonnet-test',
      prompt_tokens: 7100,
      cached_tokens: 5000,
      cache_write_tokens: 2000,
      usage_source: 'provider',
    });
    // 100 × 3 + 5,000 × 0.3 + 2,000 × 3.75 + 50 × 15 micro-units.
    expect(record.cost_micros).toBe(100 * 3 + 5000 * 0.3 + 2000 * 3.75 + 50 * 15);
  });

  it('takes the last cumulative usage of a stream, never the sum of its events', async () => {
    upstream.script([{ kind: 'ok', text: 'one two three', usage: { input_tokens: 30, output_tokens: 3 }, pieceBytes: 5 }]);
    const chunks = await drain(
      await client.chat.completions.create({ model: 'claude', messages: hello, stream: true, stream_options: { include_usage: true } }),
    );
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('one two three');
    expect(chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 });
  });
});

describe('errors', () => {
  it.each([
    [429, { 'retry-after': '1' }],
    [529, {}],
  ])('retries HTTP %i and answers once the provider does', async (status, headers) => {
    upstream.script([
      { kind: 'status', status, headers },
      { kind: 'ok', text: 'after the wait' },
    ]);
    const completion = await client.chat.completions.create({ model: 'claude', messages: hello });
    expect(completion.choices[0]?.message.content).toBe('after the wait');
    expect(upstream.requests).toHaveLength(2);
  });

  it("answers the provider's 400 as ours, with its message, tried once", async () => {
    upstream.script([
      { kind: 'status', status: 400, body: anthropicError('invalid_request_error', 'messages.0.content.0.image.source.base64: invalid base64 data') },
    ]);
    const error = await failure(client.chat.completions.create({ model: 'claude', messages: hello }));
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'invalid_request_error' });
    expect(error.message).toContain("The provider of 'claude' rejected the request (HTTP 400): messages.0.content.0.image.source.base64: invalid base64 data");
    expect(upstream.requests).toHaveLength(1);
  });

  it('answers a refused key with 502 provider_failed', async () => {
    upstream.script([{ kind: 'status', status: 401, body: anthropicError('authentication_error', 'invalid x-api-key') }]);
    expect(await failure(client.chat.completions.create({ model: 'claude', messages: hello }))).toMatchObject({ status: 502, code: 'provider_failed' });
  });

  it('retries an overloaded_error event that came before the first token', async () => {
    upstream.script([
      { kind: 'error-event', error: { type: 'overloaded_error', message: 'Overloaded' } },
      { kind: 'ok', text: 'second try' },
    ]);
    const chunks = await drain(await client.chat.completions.create({ model: 'claude', messages: hello, stream: true }));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('second try');
    expect(upstream.requests).toHaveLength(2);
  });

  it('ends a stream with an error event when the provider fails after the first token, without retrying', async () => {
    upstream.script([{ kind: 'error-event', afterText: 'Partial ', error: { type: 'overloaded_error', message: 'Overloaded' } }]);
    const stream = await client.chat.completions.create({ model: 'claude', messages: hello, stream: true });
    const received: string[] = [];
    const error = await (async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    expect(received.join('')).toBe('Partial ');
    // The spec's envelope, as for any provider failure: /v1/messages alone tells an overload apart.
    expect((error as APIError).error).toEqual({
      type: 'api_error',
      code: 'provider_failed',
      message: expect.stringContaining('HTTP 529'),
      param: null,
      request_id: expect.stringMatching(/^req_/),
    });
    expect(upstream.requests).toHaveLength(1);
  });

  it('ends a stream cut without message_stop with an error event, never a silent 200', async () => {
    upstream.script([{ kind: 'cut', afterText: 'Half an ans' }]);
    const stream = await client.chat.completions.create({ model: 'claude', messages: hello, stream: true });
    const error = await (async () => {
      for await (const chunk of stream) void chunk;
    })().catch((e: unknown) => e);
    expect((error as APIError).error).toMatchObject({ code: 'provider_failed' });
  });

  it('refuses at the door what Anthropic cannot do, before the upstream is called', async () => {
    const seed = await failure(client.chat.completions.create({ model: 'claude', messages: hello, seed: 1 }));
    expect(seed).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'seed' });
    const json = await failure(client.chat.completions.create({ model: 'claude', messages: hello, response_format: { type: 'json_object' } }));
    expect(json).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'response_format' });
    expect(upstream.requests).toHaveLength(0);
  });
});
