/**
 * Gemini through the gateway: the official openai SDK at our door, web and worker processes, and a
 * fake Gemini upstream on loopback speaking the API's real shapes. Every request fixture of
 * test/fixtures/gemini/requests is sent as a client would and the body the upstream received is
 * compared with the fixture; every response and stream fixture is answered and compared with what the
 * SDK gets. Then what only a whole system shows: thought signatures carried to the next turn, usage
 * arithmetic in the usage record, each class of error.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { type APIError } from 'openai';
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import type { WrittenCatalog } from '../../src/domain/catalog/schema.ts';
import type { ModelOf } from '../../src/providers/model.ts';
import type { geminiDescriptor } from '../../src/providers/gemini/descriptor.ts';
import { GEMINI_FIXTURE_MODEL, GEMINI_FIXTURES_DIR, geminiErrorBody, startGeminiUpstream, type FakeGemini } from '../helpers/fake-gemini.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { apiFailure as failure, drain, fixtureNames, requestIdOf, usageRecordOf } from '../helpers/sdk-calls.ts';

interface RequestFixture {
  model?: Partial<ModelOf<typeof geminiDescriptor>>;
  stream: boolean;
  openai: Record<string, unknown>;
  upstream: Record<string, unknown>;
}

const fixture = <T>(path: string) => JSON.parse(readFileSync(join(GEMINI_FIXTURES_DIR, path), 'utf8')) as T;
const REQUESTS = fixtureNames(join(GEMINI_FIXTURES_DIR, 'requests'), '.json');
const RESPONSES = fixtureNames(join(GEMINI_FIXTURES_DIR, 'responses'), '.json');
// The streams that fail (cut, error-event) are the errors' to test.
const STREAMS = fixtureNames(join(GEMINI_FIXTURES_DIR, 'streams'), '.chunks.json').filter((name) => name !== 'cut' && name !== 'error-event');
const hello = [{ role: 'user' as const, content: 'Say hello' }];

let upstream: FakeGemini;
let gateway: GatewayUnderTest;
let client: OpenAI;
let secret: string;

/** An alias per request fixture (with its catalog overrides), and `gemini` with none. */
function catalog(baseUrl: string): WrittenCatalog {
  const models: WrittenCatalog['models'] = { gemini: { ...GEMINI_FIXTURE_MODEL, base_url: baseUrl } };
  for (const name of REQUESTS)
    models[`gemini-${name}`] = { ...GEMINI_FIXTURE_MODEL, ...fixture<RequestFixture>(`requests/${name}.json`).model, base_url: baseUrl };
  return { models, tiers: { 'svc-flash': ['gemini'], 'svc-standard': ['gemini'], 'svc-pro': ['gemini'] } };
}

beforeAll(async () => {
  upstream = await startGeminiUpstream();
  gateway = await startGateway({ catalog: catalog(upstream.url), env: { GEMINI_API_KEY: 'gm-e2e-key', RETRY_BASE_MS: '50', RETRY_BUDGET_MS: '3000' } });
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
    const { openai, stream, upstream: expected } = fixture<RequestFixture>(`requests/${name}.json`);
    const params = { ...openai, model: `gemini-${name}` } as unknown as ChatCompletionCreateParams;
    if (stream) await drain(await client.chat.completions.create({ ...params, stream: true }));
    else await client.chat.completions.create({ ...params, stream: false });
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]?.body).toEqual(expected);
  });

  it('calls generateContent, or streamGenerateContent with alt=sse, with our key in x-goog-api-key', async () => {
    await client.chat.completions.create({ model: 'gemini', messages: hello });
    await drain(await client.chat.completions.create({ model: 'gemini', messages: hello, stream: true }));
    const [json, sse] = upstream.requests;
    expect(json?.path).toBe('/v1beta/models/gemini-test-flash:generateContent');
    expect(sse?.path).toBe('/v1beta/models/gemini-test-flash:streamGenerateContent');
    expect(sse?.query).toEqual({ alt: 'sse' });
    expect(json?.headers['x-goog-api-key']).toBe('gm-e2e-key');
    expect(json?.headers.authorization).toBeUndefined();
  });
});

describe('answers, as the client receives them', () => {
  it.each(RESPONSES)('%s', async (name) => {
    const { completion: expected } = fixture<{ completion: { choices: Array<{ message: { tool_calls?: Array<{ id: string }> } }>; usage?: unknown } }>(
      `responses/${name}.json`,
    );
    upstream.script([{ kind: 'fixture', name }]);
    const completion = await client.chat.completions.create({ model: 'gemini', messages: hello });
    expect(completion.model).toBe('gemini');
    expect(completion.choices).toEqual(expected.choices);
    if (expected.usage !== undefined) expect(completion.usage).toEqual(expected.usage);
  });

  it.each(STREAMS)('stream %s, its bytes cut every 7', async (name) => {
    const expected = fixture<Array<{ choices: unknown[]; usage?: unknown }>>(`streams/${name}.chunks.json`);
    upstream.script([{ kind: 'fixture', name, pieceBytes: 7 }]);
    const chunks = await drain(
      await client.chat.completions.create({ model: 'gemini', messages: hello, stream: true, stream_options: { include_usage: true } }),
    );
    const content = expected.filter((chunk) => chunk.choices.length > 0);
    expect(chunks.slice(0, content.length).map((chunk) => chunk.choices)).toEqual(content.map((chunk) => chunk.choices));
    expect(chunks.every((chunk) => chunk.model === 'gemini')).toBe(true);
    if (expected.at(-1)?.usage !== undefined) expect(chunks.at(-1)?.usage).toEqual(expected.at(-1)?.usage);
  });
});

describe('thought signatures carried to the next turn', () => {
  const tools = [
    {
      type: 'function' as const,
      function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } } } },
    },
    { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  ];
  const question = { role: 'user' as const, content: 'Weather and time in Tokyo?' };

  async function nextTurnOf(message: OpenAI.Chat.Completions.ChatCompletionMessage): Promise<unknown[]> {
    const calls = (message.tool_calls ?? []) as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[];
    const results = calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: `{"ok":true,"for":"${c.function.name}"}` }));
    await client.chat.completions.create({ model: 'gemini', tools, messages: [question, message, ...results] });
    const contents = (upstream.requests.at(-1)?.body as { contents: Array<{ role: string; parts: unknown[] }> }).contents;
    expect(contents[2]).toEqual({
      role: 'user',
      parts: calls.map((c) => ({ functionResponse: { name: c.function.name, response: { ok: true, for: c.function.name } } })),
    });
    return contents[1]?.parts ?? [];
  }

  it('sends each call back with its signature, and the function names with the results (JSON)', async () => {
    upstream.script([{ kind: 'fixture', name: 'function-calls' }]);
    const first = await client.chat.completions.create({ model: 'gemini', tools, messages: [question] });
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    const parts = await nextTurnOf(first.choices[0]?.message as OpenAI.Chat.Completions.ChatCompletionMessage);
    expect(parts[0]).toEqual({
      functionCall: { name: 'get_weather', args: { city: 'Tokyo', unit: 'celsius' } },
      thoughtSignature: 'CikBcsjafFK168IbtVtoxVV0Tsn8O+eU45rzJahzwuKGmMbdMdfpmNpgBwplAXLI2nyA/pIFcnZwFm+7WFmLyMd8R4DXwsjqaeA=',
    });
    expect(parts[1]).toEqual({ functionCall: { name: 'get_time', args: { city: 'Tokyo' } } });
  });

  it('does so from a stream assembled by the openai SDK (chat.completions.stream)', async () => {
    upstream.script([{ kind: 'fixture', name: 'function-call', pieceBytes: 11 }]);
    const stream = client.chat.completions.stream({ model: 'gemini', tools, messages: [question] });
    const first = await stream.finalChatCompletion();
    const message = first.choices[0]?.message as OpenAI.Chat.Completions.ChatCompletionMessage;
    const parts = await nextTurnOf(message);
    const signed = parts.filter((part) => typeof (part as { thoughtSignature?: unknown }).thoughtSignature === 'string');
    expect(signed.length).toBeGreaterThan(0);
    expect(parts.map((part) => (part as { functionCall?: { name: string } }).functionCall?.name).filter(Boolean)).toEqual(
      message.tool_calls?.map((c) => (c as { function: { name: string } }).function.name),
    );
  });
});

describe('usage', () => {
  it('counts thoughts as completion and reasoning tokens, cached tokens as cached, into the usage record', async () => {
    upstream.script([
      {
        kind: 'ok',
        text: 'thought about it',
        usage: { promptTokenCount: 4000, cachedContentTokenCount: 3000, candidatesTokenCount: 40, thoughtsTokenCount: 200, totalTokenCount: 4240 },
      },
    ]);
    const completion = await client.chat.completions.create({ model: 'gemini', messages: hello });
    expect(completion.usage).toEqual({
      prompt_tokens: 4000,
      completion_tokens: 240,
      total_tokens: 4240,
      prompt_tokens_details: { cached_tokens: 3000 },
      completion_tokens_details: { reasoning_tokens: 200 },
    });
    const record = await usageRecordOf(gateway, secret, requestIdOf(completion));
    expect(record).toMatchObject({
      provider: 'gemini',
      prompt_tokens: 4000,
      completion_tokens: 240,
      cached_tokens: 3000,
      reasoning_tokens: 200,
      usage_source: 'provider',
    });
    // 1,000 × 0.3 + 3,000 × 0.075 + 240 × 2.5 micro-units.
    expect(record.cost_micros).toBe(Math.round(1000 * 0.3 + 3000 * 0.075 + 240 * 2.5));
  });

  it('takes the counts of the last event, ignoring the prompt-only counts of the events before', async () => {
    upstream.script([{ kind: 'ok', text: 'one two three', usage: { promptTokenCount: 9, candidatesTokenCount: 3, totalTokenCount: 12 }, pieceBytes: 9 }]);
    const chunks = await drain(
      await client.chat.completions.create({ model: 'gemini', messages: hello, stream: true, stream_options: { include_usage: true } }),
    );
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('one two three');
    expect(chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
  });
});

describe('errors', () => {
  it('retries 429 RESOURCE_EXHAUSTED, waiting the RetryInfo delay of its body', async () => {
    const body = {
      error: { ...geminiErrorBody(429, 'Quota exceeded.').error, details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' }] },
    };
    upstream.script([
      { kind: 'status', status: 429, body },
      { kind: 'ok', text: 'after the wait' },
    ]);
    const started = Date.now();
    const completion = await client.chat.completions.create({ model: 'gemini', messages: hello });
    expect(completion.choices[0]?.message.content).toBe('after the wait');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(upstream.requests).toHaveLength(2);
  });

  it('retries 503 UNAVAILABLE', async () => {
    upstream.script([
      { kind: 'status', status: 503 },
      { kind: 'ok', text: 'back' },
    ]);
    expect((await client.chat.completions.create({ model: 'gemini', messages: hello })).choices[0]?.message.content).toBe('back');
    expect(upstream.requests).toHaveLength(2);
  });

  it('answers 400 INVALID_ARGUMENT as ours, with its status as code and the field it names as param, tried once', async () => {
    const body = {
      error: {
        ...geminiErrorBody(400, 'Invalid JSON payload received. Unknown name "foo".').error,
        details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'generation_config.foo', description: 'Unknown name' }] }],
      },
    };
    upstream.script([{ kind: 'status', status: 400, body }]);
    const error = await failure(client.chat.completions.create({ model: 'gemini', messages: hello }));
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'INVALID_ARGUMENT', param: 'generation_config.foo' });
    expect(error.message).toContain("The provider of 'gemini' rejected the request (HTTP 400): Invalid JSON payload received.");
    expect(upstream.requests).toHaveLength(1);
  });

  it('answers a refused key with 502 provider_failed', async () => {
    upstream.script([{ kind: 'status', status: 403 }]);
    expect(await failure(client.chat.completions.create({ model: 'gemini', messages: hello }))).toMatchObject({ status: 502, code: 'provider_failed' });
  });

  it('ends a stream whose body ends without a finishReason with an error event, never a silent 200', async () => {
    upstream.script([{ kind: 'cut', afterText: 'Half an ans' }]);
    const stream = await client.chat.completions.create({ model: 'gemini', messages: hello, stream: true });
    const received: string[] = [];
    const error = await (async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    expect(received.join('')).toBe('Half an ans');
    expect((error as APIError).error).toMatchObject({ code: 'provider_failed', type: 'api_error' });
  });

  it('retries an error object that came before the first token, and ends the stream with one that came after', async () => {
    upstream.script([
      { kind: 'error-event', error: geminiErrorBody(503, 'The model is overloaded.').error },
      { kind: 'ok', text: 'second try' },
    ]);
    const retried = await drain(await client.chat.completions.create({ model: 'gemini', messages: hello, stream: true }));
    expect(retried.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('second try');
    upstream.reset();
    upstream.script([{ kind: 'error-event', afterText: 'Partial ', error: geminiErrorBody(503, 'The model is overloaded.').error }]);
    const stream = await client.chat.completions.create({ model: 'gemini', messages: hello, stream: true });
    const error = await (async () => {
      for await (const chunk of stream) void chunk;
    })().catch((e: unknown) => e);
    expect((error as APIError).error).toMatchObject({ code: 'provider_failed' });
    expect(upstream.requests).toHaveLength(1);
  });

  it('refuses at the door what Gemini cannot do, before the upstream is called', async () => {
    const error = await failure(client.chat.completions.create({ model: 'gemini', messages: hello, logprobs: true }));
    expect(error).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'logprobs' });
    const parallel = await failure(client.chat.completions.create({ model: 'gemini', messages: hello, parallel_tool_calls: false }));
    expect(parallel).toMatchObject({ status: 422, param: 'parallel_tool_calls' });
    expect(upstream.requests).toHaveLength(0);
  });
});
