import { describe, it, expect, beforeAll, beforeEach, afterAll } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelOf } from '../../../src/providers/model.ts';
import type { geminiDescriptor } from '../../../src/providers/gemini/descriptor.ts';
import { GatewayError } from '../../../src/errors/gateway-error.ts';
import { createGeminiAdapter } from '../../../src/providers/gemini/index.ts';
import { RESPONSE_BODY_LIMIT_BYTES } from '../../../src/providers/shared/send.ts';
import { createUpstreamHttp } from '../../../src/providers/shared/http.ts';
import type { ProviderRequest } from '../../../src/providers/types.ts';
import type { ChatCompletionChunk, ChatRequest } from '../../../src/wire/openai-chat.ts';
import { GEMINI_FIXTURES_DIR, GEMINI_FIXTURE_MODEL, startGeminiUpstream, type FakeGemini } from '../../helpers/fake-gemini.ts';
import { collect, failure, connectionsOfThreeStreams, targetFor } from '../../helpers/provider-calls.ts';

type Model = ModelOf<typeof geminiDescriptor>;

const messages: ChatRequest['messages'] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Say hello' },
];
const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';

let fake: FakeGemini;
const http = createUpstreamHttp({ connectTimeoutMs: 1000, headersTimeoutMs: 2000, bodyTimeoutMs: 2000, connections: 4 });
const adapter = createGeminiAdapter(http);

function call(options: { body?: ChatRequest; signal?: AbortSignal; apiKey?: string | null; model?: Partial<Model> } = {}): ProviderRequest<Model> {
  const model: Model = { ...GEMINI_FIXTURE_MODEL, base_url: fake.url, ...options.model };
  return {
    target: targetFor(model, options.apiKey === undefined ? 'AIza-test-key' : options.apiKey, 'gemini-flash'),
    body: options.body ?? { messages, max_tokens: 50 },
    signal: options.signal ?? new AbortController().signal,
    timeoutMs: 60_000,
  };
}

function text(chunks: ChatCompletionChunk[]): string {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
}

function fixtureNames(kind: 'requests' | 'responses' | 'streams', extension: string): string[] {
  return readdirSync(`${GEMINI_FIXTURES_DIR}${kind}`)
    .filter((file) => file.endsWith(extension) && !file.endsWith('.chunks.json'))
    .map((file) => file.slice(0, -extension.length));
}

function readFixture<T>(path: string): T {
  return JSON.parse(readFileSync(`${GEMINI_FIXTURES_DIR}${path}`, 'utf8')) as T;
}

beforeAll(async () => {
  fake = await startGeminiUpstream();
});

beforeEach(() => {
  fake.reset();
});

afterAll(async () => {
  await http.close();
  await fake.close();
});

describe('gemini adapter against a loopback upstream: answers', () => {
  it('reads each stream to the end of its body, so that the next call reuses the kept-alive connection', async () => {
    fake.script([
      { kind: 'ok', text: 'first' },
      { kind: 'ok', text: 'second' },
      { kind: 'ok', text: 'third' },
    ]);
    expect(await connectionsOfThreeStreams(() => adapter.stream(call()), http, fake)).toBe(1);
  });

  it('completes through generateContent with the key header, and reads text, model and usage', async () => {
    fake.script([{ kind: 'ok', text: 'Hi there friend', usage: { promptTokenCount: 4, candidatesTokenCount: 3, thoughtsTokenCount: 2, totalTokenCount: 9 } }]);
    const completion = await adapter.complete(call());
    expect(completion).toMatchObject({
      id: 'fake-gemini-0',
      object: 'chat.completion',
      model: 'gemini-test-flash',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there friend' }, finish_reason: 'stop' }],
    });
    expect(completion.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 5, total_tokens: 9, completion_tokens_details: { reasoning_tokens: 2 } });
    const recorded = fake.requests[0];
    expect(recorded?.path).toBe('/v1beta/models/gemini-test-flash:generateContent');
    expect(recorded?.query).toEqual({});
    expect(recorded?.headers['x-goog-api-key']).toBe('AIza-test-key');
    expect(recorded?.headers['content-type']).toBe('application/json');
    expect(recorded?.body).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }],
      generationConfig: { maxOutputTokens: 50 },
    });
  });

  it('sends no key header without an api key', async () => {
    await adapter.complete(call({ apiKey: null }));
    expect(fake.requests[0]?.headers['x-goog-api-key']).toBeUndefined();
  });

  it('streams through streamGenerateContent?alt=sse, role first, then finish, then usage', async () => {
    fake.script([{ kind: 'ok', text: 'One two three four five', pieceBytes: 5 }]);
    const chunks = await collect(adapter.stream(call()));
    expect(text(chunks)).toBe('One two three four five');
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    expect(chunks.slice(1).every((chunk) => chunk.choices[0]?.delta.role === undefined)).toBe(true);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    // The fake counts words: 'Be brief.' + 'Say hello' is 4, the answer 5.
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 } });
    expect(new Set(chunks.map((chunk) => chunk.id))).toEqual(new Set(['fake-gemini-0']));
    expect(fake.requests[0]?.path).toBe('/v1beta/models/gemini-test-flash:streamGenerateContent');
    expect(fake.requests[0]?.query).toEqual({ alt: 'sse' });
  });

  it.each(fixtureNames('requests', '.json'))('request fixture %s: the fake accepts the body and records the fixture upstream', async (name) => {
    const fixture = readFixture<{ model?: Partial<Model>; stream: boolean; openai: ChatRequest; upstream: unknown }>(`requests/${name}.json`);
    const request = call({ body: fixture.openai, model: fixture.model });
    if (fixture.stream) await collect(adapter.stream(request));
    else await adapter.complete(request);
    expect(fake.requests[0]?.body).toEqual(fixture.upstream);
  });

  it.each(fixtureNames('responses', '.json'))('response fixture %s: completes to the recorded completion', async (name) => {
    fake.script([{ kind: 'fixture', name }]);
    const { created: _created, ...completion } = await adapter.complete(call());
    expect(completion).toEqual(readFixture<{ completion: unknown }>(`responses/${name}.json`).completion);
  });

  it.each(fixtureNames('streams', '.sse').filter((name) => name !== 'error-event' && name !== 'cut'))(
    'stream fixture %s, cut every 3 bytes: streams the recorded chunks',
    async (name) => {
      fake.script([{ kind: 'fixture', name, pieceBytes: 3 }]);
      const chunks = await collect(adapter.stream(call()));
      expect(chunks.map(({ created: _created, ...chunk }) => chunk)).toEqual(readFixture<unknown[]>(`streams/${name}.chunks.json`));
    },
  );

  it('refuses what Gemini cannot express before calling it', async () => {
    const body: ChatRequest = {
      messages: [
        { role: 'user', content: 'x' },
        { role: 'function', name: 'f', content: '1' },
      ],
    };
    const error = await collect(adapter.stream(call({ body }))).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 422, param: 'messages[1].role' });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('gemini adapter against a loopback upstream: failures', () => {
  it('maps a 429 with retry-after to a retryable rate_limited with the wait', async () => {
    fake.script([{ kind: 'status', status: 429, headers: { 'retry-after': '2' } }]);
    const error = await failure(collect(adapter.stream(call())));
    expect(error).toMatchObject({ kind: 'rate_limited', retryable: true, status: 429, retryAfterMs: 2000, code: 'RESOURCE_EXHAUSTED' });
  });

  it("takes the wait of a 429 from the body's RetryInfo when no header names one", async () => {
    const body = {
      error: { code: 429, message: 'You exceeded your current quota.', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': RETRY_INFO, retryDelay: '38s' }] },
    };
    fake.script([{ kind: 'status', status: 429, body }]);
    const error = await failure(adapter.complete(call()));
    expect(error).toMatchObject({ kind: 'rate_limited', retryable: true, retryAfterMs: 38_000, upstreamMessage: 'You exceeded your current quota.' });
  });

  it.each([
    [529, { 'retry-after': '1' }, 1000],
    [503, { 'retry-after': '3' }, 3000],
    [500, {}, null],
  ])('maps a %i to a retryable server_error (retry-after %j)', async (status, headers, retryAfterMs) => {
    fake.script([{ kind: 'status', status, headers }]);
    const error = await failure(adapter.complete(call()));
    expect(error).toMatchObject({ kind: 'server_error', retryable: true, status, retryAfterMs });
  });

  it("maps a 400 to a final invalid_request with Gemini's message, status code and field", async () => {
    const body = {
      error: {
        code: 400,
        message: '* GenerateContentRequest.generation_config.max_output_tokens: must be positive',
        status: 'INVALID_ARGUMENT',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.BadRequest',
            fieldViolations: [{ field: 'generation_config.max_output_tokens', description: 'must be positive' }],
          },
        ],
      },
    };
    fake.script([{ kind: 'status', status: 400, body }]);
    const error = await failure(adapter.complete(call()));
    expect(error).toMatchObject({
      kind: 'invalid_request',
      retryable: false,
      status: 400,
      code: 'INVALID_ARGUMENT',
      param: 'generation_config.max_output_tokens',
      upstreamMessage: body.error.message,
    });
  });

  it('maps a 403 to unauthorized', async () => {
    fake.script([{ kind: 'status', status: 403 }]);
    expect(await failure(adapter.complete(call()))).toMatchObject({ kind: 'unauthorized', retryable: false, code: 'PERMISSION_DENIED' });
  });

  it('gets the error the real API gives for a body without contents', async () => {
    const error = await failure(adapter.complete(call({ body: { messages: [{ role: 'system', content: 'Only a system message' }] } })));
    expect(error).toMatchObject({ kind: 'invalid_request', status: 400, code: 'INVALID_ARGUMENT', param: 'contents' });
    expect(error.upstreamMessage).toContain('contents is not specified');
  });

  it('fails with the error of an error event mid-stream, after the output before it', async () => {
    fake.script([{ kind: 'error-event', afterText: 'Partial answer', error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }]);
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(collect(adapter.stream(call()), seen));
    expect(text(seen)).toBe('Partial answer');
    expect(error).toMatchObject({ kind: 'server_error', status: 503, code: 'UNAVAILABLE', upstreamMessage: 'The model is overloaded.' });
  });

  it('fails with broken_stream when the connection drops before a finishReason', async () => {
    fake.script([{ kind: 'cut', afterText: 'Half an' }]);
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(collect(adapter.stream(call()), seen));
    expect(text(seen)).toBe('Half an');
    expect(error).toMatchObject({ kind: 'broken_stream', retryable: true });
  });

  it('fails with broken_stream when the body ends before a finishReason', async () => {
    fake.script([{ kind: 'fixture', name: 'cut', pieceBytes: 7 }]);
    const seen: ChatCompletionChunk[] = [];
    expect(await failure(collect(adapter.stream(call()), seen))).toMatchObject({ kind: 'broken_stream' });
    expect(text(seen)).toBe('Rome was not built in a day');
  });

  it('aborts mid-stream through the signal, and the upstream sees its connection close', async () => {
    fake.script([{ kind: 'ok', text: 'word '.repeat(200), pieceBytes: 40, pieceDelayMs: 20 }]);
    const controller = new AbortController();
    const seen: ChatCompletionChunk[] = [];
    const streaming = failure(collect(adapter.stream(call({ signal: controller.signal })), seen));
    await expect.poll(() => seen.length).toBeGreaterThan(0);
    controller.abort();
    expect(await streaming).toMatchObject({ kind: 'aborted', retryable: false });
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
    fake.script([{ kind: 'status', status: 200, body: '<html>Service page</html>' }]);
    expect(await failure(adapter.complete(call()))).toMatchObject({ kind: 'invalid_response', retryable: false });
  });

  it('rejects a 2xx body over the size limit as invalid_response', async () => {
    fake.script([{ kind: 'status', status: 200, body: `{"candidates": [{"content": {"parts": [{"text": "${'a'.repeat(RESPONSE_BODY_LIMIT_BYTES)}"}]}}]}` }]);
    const error = await failure(adapter.complete(call()));
    expect(error).toMatchObject({ kind: 'invalid_response', retryable: false });
    expect(error.message).toContain('larger than');
  });

  it('takes an error object in a 2xx body as the error its code stands for', async () => {
    fake.script([{ kind: 'status', status: 200, body: { error: { code: 503, message: 'Backend unavailable', status: 'UNAVAILABLE' } } }]);
    expect(await failure(adapter.complete(call()))).toMatchObject({ kind: 'server_error', status: 503, upstreamMessage: 'Backend unavailable' });
  });

  it('classifies a refused connection as connect', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await failure(adapter.complete(call({ model: { base_url: `http://127.0.0.1:${port}` } })))).toMatchObject({ kind: 'connect', retryable: true });
  });
});
