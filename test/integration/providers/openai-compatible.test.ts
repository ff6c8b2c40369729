import { describe, it, expect, beforeAll, beforeEach, afterAll } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelOf } from '../../../src/providers/model.ts';
import type { openAiCompatibleDescriptor } from '../../../src/providers/openai-compatible/descriptor.ts';
import { createOpenAiCompatibleAdapter } from '../../../src/providers/openai-compatible/index.ts';
import { createUpstreamHttp } from '../../../src/providers/shared/http.ts';
import type { ProviderRequest } from '../../../src/providers/types.ts';
import type { ChatCompletionChunk, ChatRequest } from '../../../src/wire/openai-chat.ts';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.ts';
import { MODEL_BASICS, collect, failure, connectionsOfThreeStreams, targetFor } from '../../helpers/provider-calls.ts';

const HEADERS_TIMEOUT_MS = 300;
const messages: ChatRequest['messages'] = [{ role: 'user', content: 'Say hello' }];

let fake: FakeUpstream;
const http = createUpstreamHttp({ connectTimeoutMs: 1000, headersTimeoutMs: HEADERS_TIMEOUT_MS, bodyTimeoutMs: 2000, connections: 4 });
const adapter = createOpenAiCompatibleAdapter(http);

type Model = ModelOf<typeof openAiCompatibleDescriptor>;

function call(
  signal: AbortSignal = new AbortController().signal,
  options: { apiKey?: string | null; model?: Partial<Model>; timeoutMs?: number } = {},
): ProviderRequest<Model> {
  const model: Model = { provider: 'openai-compatible', upstream_model: 'upstream-model-1', base_url: fake.url, ...MODEL_BASICS, ...options.model };
  return {
    target: targetFor(model, options.apiKey === undefined ? 'sk-test' : options.apiKey),
    body: { messages, max_tokens: 50 },
    signal,
    timeoutMs: options.timeoutMs ?? 60_000,
  };
}

beforeAll(async () => {
  fake = await startFakeUpstream();
});

beforeEach(() => {
  fake.reset();
});

afterAll(async () => {
  await http.close();
  await fake.close();
});

describe('openai-compatible adapter against a loopback upstream', () => {
  it('reads each stream to the end of its body, so that the next call reuses the kept-alive connection', async () => {
    fake.script([
      { kind: 'ok', text: 'first' },
      { kind: 'ok', text: 'second' },
      { kind: 'ok', text: 'third' },
    ]);
    expect(await connectionsOfThreeStreams(() => adapter.stream(call()), http, fake)).toBe(1);
  });

  it('completes, sending our model and the bearer key', async () => {
    fake.script([{ kind: 'ok', text: 'Hi there friend' }]);
    const completion = await adapter.complete(call());
    expect(completion.choices[0]?.message.content).toBe('Hi there friend');
    expect(completion.model).toBe('upstream-model-1');
    expect(completion.usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
    const recorded = fake.requests[0];
    expect(recorded?.headers.authorization).toBe('Bearer sk-test');
    expect(recorded?.body).toEqual({ messages, max_tokens: 50, model: 'upstream-model-1', stream: false });
  });

  it("speaks Azure OpenAI's addressing: the deployment in the path, api-version in the query, the key in api-key", async () => {
    fake.script([{ kind: 'ok', text: 'From Azure' }]);
    const azure = { base_url: fake.origin, azure: { api_version: '2024-10-21', deployment: 'my gpt deployment' } };
    const completion = await adapter.complete(call(undefined, { model: azure }));
    expect(completion.choices[0]?.message.content).toBe('From Azure');
    const recorded = fake.requests[0];
    expect(recorded?.path).toBe('/openai/deployments/my%20gpt%20deployment/chat/completions');
    expect(recorded?.query).toEqual({ 'api-version': '2024-10-21' });
    expect(recorded?.headers['api-key']).toBe('sk-test');
    expect(recorded?.headers.authorization).toBeUndefined();
  });

  it('names the Azure deployment after the upstream model when the catalog names none, streams included', async () => {
    fake.script([{ kind: 'ok', text: 'a b', chunks: 2 }]);
    const chunks = await collect(adapter.stream(call(undefined, { model: { base_url: `${fake.origin}/`, azure: { api_version: '2025-01-01-preview' } } })));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('a b');
    expect(fake.requests[0]?.path).toBe('/openai/deployments/upstream-model-1/chat/completions');
    expect(fake.requests[0]?.query['api-version']).toBe('2025-01-01-preview');
  });

  it('passes the usage details of the upstream on, streamed and not', async () => {
    const usage = {
      prompt_tokens: 20,
      completion_tokens: 9,
      total_tokens: 29,
      prompt_tokens_details: { cached_tokens: 16, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 5 },
    };
    fake.script([
      { kind: 'ok', usage },
      { kind: 'ok', usage },
    ]);
    expect((await adapter.complete(call())).usage).toEqual(usage);
    expect((await collect(adapter.stream(call()))).at(-1)?.usage).toEqual(usage);
  });

  it('sends no authorization header without an api key', async () => {
    await adapter.complete(call(undefined, { apiKey: null }));
    expect(fake.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('streams chunks and always asks for, and passes on, the usage chunk', async () => {
    fake.script([{ kind: 'ok', text: 'One two three four', chunks: 4 }]);
    const chunks = await collect(adapter.stream(call()));
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('One two three four');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 4, total_tokens: 6 } });
    expect(fake.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('maps a 500 to a retryable server_error with the provider message', async () => {
    fake.script([{ kind: 'status', status: 500, body: { error: { message: 'engine overloaded' } } }]);
    const error = await failure(adapter.complete(call()));
    expect(error).toMatchObject({ kind: 'server_error', retryable: true, status: 500, upstreamMessage: 'engine overloaded' });
  });

  it('maps a 429 with retry-after to rate_limited with the delay', async () => {
    fake.script([{ kind: 'status', status: 429, headers: { 'retry-after': '2' } }]);
    const error = await failure(collect(adapter.stream(call())));
    expect(error).toMatchObject({ kind: 'rate_limited', retryable: true, status: 429, retryAfterMs: 2000 });
  });

  it('times out a hanging upstream after headersTimeoutMs and closes its connection', async () => {
    fake.script([{ kind: 'hang' }]);
    const started = Date.now();
    const error = await failure(adapter.complete(call()));
    expect(error.kind).toBe('timeout');
    expect(error.retryable).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    // undici's headers timer has ~1 s resolution (lib/util/timers.js).
    expect(Date.now() - started).toBeLessThan(HEADERS_TIMEOUT_MS + 1500);
    await fake.waitForClose(0, 2000);
  });

  it('yields the first chunk, then fails with broken_stream when the connection breaks', async () => {
    fake.script([{ kind: 'break-after-first-chunk' }]);
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(collect(adapter.stream(call()), seen));
    expect(seen).toHaveLength(1);
    expect(seen[0]?.choices[0]?.delta.content).toBe('Hello');
    expect(error).toMatchObject({ kind: 'broken_stream', retryable: true });
  });

  it('fails with broken_stream when the body ends without [DONE]', async () => {
    const partial = 'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[]}\n\n';
    fake.script([{ kind: 'status', status: 200, headers: { 'content-type': 'text/event-stream' }, body: partial }]);
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(collect(adapter.stream(call()), seen));
    expect(seen).toHaveLength(1);
    expect(error.kind).toBe('broken_stream');
  });

  it('turns an {"error":…} event mid-stream into broken_stream with its message', async () => {
    const body =
      'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}\n\n' +
      'data: {"error":{"message":"upstream overloaded"}}\n\n';
    fake.script([{ kind: 'status', status: 200, headers: { 'content-type': 'text/event-stream' }, body }]);
    const error = await failure(collect(adapter.stream(call())));
    expect(error).toMatchObject({ kind: 'broken_stream', upstreamMessage: 'upstream overloaded' });
  });

  it('rejects a 200 body that is not a completion as invalid_response', async () => {
    fake.script([{ kind: 'status', status: 200, body: { hello: 'world' } }]);
    const error = await failure(adapter.complete(call()));
    expect(error).toMatchObject({ kind: 'invalid_response', retryable: false });
  });

  it('aborts mid-stream through the signal, and the upstream sees its connection close', async () => {
    fake.script([{ kind: 'slow-stream', chunkDelayMs: 100, chunks: 50 }]);
    const controller = new AbortController();
    const seen: ChatCompletionChunk[] = [];
    const streaming = collect(adapter.stream(call(controller.signal)), seen);
    await expect.poll(() => seen.length).toBeGreaterThan(0);
    controller.abort();
    const error = await failure(streaming);
    expect(error).toMatchObject({ kind: 'aborted', retryable: false });
    await fake.waitForClose(0, 2000);
  });

  it('aborts before the response headers, and the upstream sees its connection close', async () => {
    fake.script([{ kind: 'hang' }]);
    const controller = new AbortController();
    const pending = failure(adapter.complete(call(controller.signal)));
    await expect.poll(() => fake.requests.length).toBe(1);
    controller.abort();
    expect((await pending).kind).toBe('aborted');
    await fake.waitForClose(0, 2000);
  });

  it('classifies a refused connection as connect', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await failure(adapter.complete(call(undefined, { model: { base_url: `http://127.0.0.1:${port}/v1` } })));
    expect(error).toMatchObject({ kind: 'connect', retryable: true, status: null });
  });
});
