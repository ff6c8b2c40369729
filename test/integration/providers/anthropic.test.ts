import { describe, it, expect, beforeAll, beforeEach, afterAll } from 'vitest';
import type { ModelOf } from '../../../src/providers/model.ts';
import type { anthropicDescriptor } from '../../../src/providers/anthropic/descriptor.ts';
import { createAnthropicAdapter } from '../../../src/providers/anthropic/index.ts';
import { createUpstreamHttp } from '../../../src/providers/shared/http.ts';
import { RESPONSE_BODY_LIMIT_BYTES } from '../../../src/providers/shared/send.ts';
import type { ProviderRequest } from '../../../src/providers/types.ts';
import type { ChatCompletionChunk, ChatRequest } from '../../../src/wire/openai-chat.ts';
import { ANTHROPIC_FIXTURE_MODEL, readAnthropicFixture, startAnthropicUpstream, type FakeAnthropic } from '../../helpers/fake-anthropic.ts';
import { collect, failure, connectionsOfThreeStreams, targetFor } from '../../helpers/provider-calls.ts';

type Model = ModelOf<typeof anthropicDescriptor>;

const messages: ChatRequest['messages'] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Say hello' },
];

let fake: FakeAnthropic;
const http = createUpstreamHttp({ connectTimeoutMs: 1000, headersTimeoutMs: 2000, bodyTimeoutMs: 2000, connections: 4 });
const adapter = createAnthropicAdapter(http);

function call(
  options: { signal?: AbortSignal; timeoutMs?: number; apiKey?: string | null; model?: Partial<Model>; body?: Partial<ChatRequest> } = {},
): ProviderRequest<Model> {
  const model: Model = { ...ANTHROPIC_FIXTURE_MODEL, base_url: fake.url, ...options.model };
  return {
    target: targetFor(model, options.apiKey === undefined ? 'sk-ant-test' : options.apiKey, 'claude-test'),
    body: { messages, max_tokens: 50, ...options.body },
    signal: options.signal ?? new AbortController().signal,
    timeoutMs: options.timeoutMs ?? 60_000,
  };
}

function withoutCreated(chunks: ChatCompletionChunk[]): Array<Omit<ChatCompletionChunk, 'created'>> {
  return chunks.map(({ created: _created, ...rest }) => rest);
}

beforeAll(async () => {
  fake = await startAnthropicUpstream();
});

beforeEach(() => {
  fake.reset();
});

afterAll(async () => {
  await http.close();
  await fake.close();
});

describe('anthropic adapter against a loopback upstream', () => {
  it('reads each stream to the end of its body, so that the next call reuses the kept-alive connection', async () => {
    fake.script([
      { kind: 'ok', text: 'first' },
      { kind: 'ok', text: 'second' },
      { kind: 'ok', text: 'third' },
    ]);
    expect(await connectionsOfThreeStreams(() => adapter.stream(call()), http, fake)).toBe(1);
  });

  it('completes, posting the translated body to /v1/messages with the key and version headers', async () => {
    fake.script([{ kind: 'ok', text: 'Hi there friend', usage: { input_tokens: 9, cache_read_input_tokens: 4, output_tokens: 3 } }]);
    const completion = await adapter.complete(call({ model: { anthropic_beta: ['context-1m-2025-08-07', 'files-api-2025-04-14'] } }));
    expect(completion).toMatchObject({
      id: 'msg_01Fake000000000000000000',
      object: 'chat.completion',
      model: 'claude-sonnet-test',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there friend' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 13, completion_tokens: 3, total_tokens: 16, prompt_tokens_details: { cached_tokens: 4, cache_write_tokens: 0 } },
    });
    const recorded = fake.requests[0];
    expect(recorded).toMatchObject({ method: 'POST', path: '/v1/messages', query: {} });
    expect(recorded?.headers).toMatchObject({
      'x-api-key': 'sk-ant-test',
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
      'anthropic-beta': 'context-1m-2025-08-07,files-api-2025-04-14',
    });
    expect(recorded?.headers.authorization).toBeUndefined();
    expect(recorded?.body).toEqual({
      model: 'claude-sonnet-test',
      max_tokens: 50,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: 'Say hello' }],
    });
  });

  it('sends no x-api-key header without a key, and no anthropic-beta header without betas', async () => {
    await adapter.complete(call({ apiKey: null }));
    expect(fake.requests[0]?.headers['x-api-key']).toBeUndefined();
    expect(fake.requests[0]?.headers['anthropic-beta']).toBeUndefined();
  });

  it('translates a recorded response fixture', async () => {
    fake.script([{ kind: 'fixture', name: 'tool-use' }]);
    const completion = await adapter.complete(call());
    const { completion: expected } = JSON.parse(readAnthropicFixture('responses/tool-use.json')) as { completion: Record<string, unknown> };
    expect(completion).toEqual({ ...expected, created: completion.created });
  });

  it('streams: first chunk with the role, text, the finish chunk, then the usage chunk', async () => {
    fake.script([{ kind: 'ok', text: 'One two three four', usage: { input_tokens: 7, output_tokens: 4 }, pieceBytes: 5 }]);
    const chunks = await collect(adapter.stream(call()));
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('One two three four');
    expect(chunks.at(-2)?.choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'stop' });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 } });
    expect(new Set(chunks.map((chunk) => chunk.id))).toEqual(new Set(['msg_01Fake000000000000000000']));
    expect(fake.requests[0]?.body).toMatchObject({ stream: true });
    expect(fake.requests[0]?.headers.accept).toBe('text/event-stream');
  });

  it('streams a recorded fixture cut every 3 bytes into its recorded chunks', async () => {
    fake.script([{ kind: 'fixture', name: 'tool-use-parallel', pieceBytes: 3 }]);
    const chunks = await collect(adapter.stream(call()));
    expect(withoutCreated(chunks)).toEqual(JSON.parse(readAnthropicFixture('streams/tool-use-parallel.chunks.json')));
  });

  it.each([
    [429, 'rate_limit_error', 'rate_limited'],
    [529, 'overloaded_error', 'server_error'],
    [503, 'api_error', 'server_error'],
  ])('classifies HTTP %d (%s) with retry-after as retryable %s with the delay', async (status, type, kind) => {
    fake.script([{ kind: 'status', status, headers: { 'retry-after': '7' }, body: { type: 'error', error: { type, message: `Upstream says ${type}` } } }]);
    const error = await failure(adapter.complete(call()));
    expect(error).toMatchObject({ kind, status, retryable: true, retryAfterMs: 7000, code: type, upstreamMessage: `Upstream says ${type}` });
  });

  it('classifies a retry-after on a streamed 429 too', async () => {
    fake.script([{ kind: 'status', status: 429, headers: { 'retry-after': '2' } }]);
    const error = await failure(collect(adapter.stream(call())));
    expect(error).toMatchObject({ kind: 'rate_limited', retryable: true, retryAfterMs: 2000, code: 'rate_limit_error' });
  });

  it("classifies a 400 as a non-retryable invalid_request with Anthropic's message and type", async () => {
    fake.script([
      {
        kind: 'status',
        status: 400,
        body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages.0.content.0.text: text content blocks must be non-empty' } },
      },
    ]);
    const error = await failure(adapter.complete(call()));
    expect(error).toMatchObject({
      kind: 'invalid_request',
      retryable: false,
      status: 400,
      code: 'invalid_request_error',
      upstreamMessage: 'messages.0.content.0.text: text content blocks must be non-empty',
    });
  });

  it('gets the real API shape of refusal from the fake when a required field is missing', async () => {
    const { 'anthropic-version': _version, ...headers } = { 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
    const response = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'claude-sonnet-test', max_tokens: 5, messages: [] }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } });
    const noMaxTokens = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'm', messages: [] }),
    });
    expect(await noMaxTokens.json()).toMatchObject({ error: { message: 'max_tokens: Field required' } });
  });

  it('fails on an error event after text, having yielded the text', async () => {
    fake.script([{ kind: 'error-event', afterText: 'Partial', error: { type: 'overloaded_error', message: 'Overloaded' } }]);
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(collect(adapter.stream(call()), seen));
    expect(seen.map((chunk) => chunk.choices[0]?.delta)).toEqual([{ role: 'assistant', content: 'Partial' }]);
    expect(error).toMatchObject({ kind: 'server_error', status: 529, code: 'overloaded_error', upstreamMessage: 'Overloaded', retryable: true });
  });

  it('fails on an error event before any output without yielding a chunk', async () => {
    fake.script([{ kind: 'error-event', error: { type: 'error', error: { type: 'rate_limit_error', message: 'Slow down' } } }]);
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(collect(adapter.stream(call()), seen));
    expect(seen).toEqual([]);
    expect(error).toMatchObject({ kind: 'rate_limited', status: 429, code: 'rate_limit_error' });
  });

  it('fails with broken_stream when the connection is cut after some text', async () => {
    fake.script([{ kind: 'cut', afterText: 'Half an ans' }]);
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(collect(adapter.stream(call()), seen));
    expect(seen.map((chunk) => chunk.choices[0]?.delta.content)).toEqual(['Half an ans']);
    expect(error).toMatchObject({ kind: 'broken_stream', retryable: true });
  });

  it('fails with broken_stream when the body ends without message_stop', async () => {
    fake.script([{ kind: 'fixture', name: 'cut' }]);
    const error = await failure(collect(adapter.stream(call())));
    expect(error.kind).toBe('broken_stream');
  });

  it('aborts mid-stream through the signal, and the upstream sees its connection close', async () => {
    fake.script([{ kind: 'ok', text: 'word '.repeat(40), delayMs: 150 }]);
    const controller = new AbortController();
    const seen: ChatCompletionChunk[] = [];
    const streaming = failure(collect(adapter.stream(call({ signal: controller.signal })), seen));
    await expect.poll(() => seen.length, { timeout: 5000 }).toBeGreaterThan(0);
    controller.abort();
    expect(await streaming).toMatchObject({ kind: 'aborted', retryable: false });
    await fake.waitForClose(0, 2000);
  });

  it('gives up waiting for the response when what is left of the retry budget is spent: a timeout, to the millisecond', async () => {
    fake.script([{ kind: 'hang' }]);
    const started = performance.now();
    const error = await failure(adapter.complete(call({ timeoutMs: 250 })));
    const took = performance.now() - started;
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(error.message).toContain('250 ms left of the retry budget');
    expect(took).toBeGreaterThanOrEqual(240);
    // undici's own headers timeout (2 s here) fires up to a second late; the budget's timer does not.
    expect(took).toBeLessThan(1000);
    await fake.waitForClose(0, 2000);
  });

  it('aborts before the response headers, and the upstream sees its connection close', async () => {
    fake.script([{ kind: 'hang' }]);
    const controller = new AbortController();
    const pending = failure(adapter.complete(call({ signal: controller.signal })));
    await expect.poll(() => fake.requests.length).toBe(1);
    controller.abort();
    expect((await pending).kind).toBe('aborted');
    await fake.waitForClose(0, 2000);
  });

  it('rejects a 2xx body that is not JSON as invalid_response', async () => {
    fake.script([{ kind: 'status', status: 200, body: '<html>Bad gateway</html>' }]);
    expect(await failure(adapter.complete(call()))).toMatchObject({ kind: 'invalid_response', retryable: false });
  });

  it('rejects a 2xx JSON body that is not a message as invalid_response', async () => {
    fake.script([{ kind: 'status', status: 200, body: { hello: 'world' } }]);
    expect(await failure(adapter.complete(call()))).toMatchObject({ kind: 'invalid_response', retryable: false });
  });

  it('rejects a 2xx body over the size limit as invalid_response', async () => {
    const huge = JSON.stringify({ id: 'msg_big', type: 'message', content: [{ type: 'text', text: 'x'.repeat(RESPONSE_BODY_LIMIT_BYTES) }] });
    fake.script([{ kind: 'status', status: 200, body: huge }]);
    const error = await failure(adapter.complete(call()));
    expect(error).toMatchObject({ kind: 'invalid_response', retryable: false });
    expect(error.message).toContain('larger than');
  });

  it('refuses a request it cannot express before calling the upstream', async () => {
    const pending = adapter.complete(call({ body: { response_format: { type: 'json_object' } } }));
    await expect(pending).rejects.toMatchObject({ status: 422, param: 'response_format' });
    expect(fake.requests).toHaveLength(0);
  });
});
