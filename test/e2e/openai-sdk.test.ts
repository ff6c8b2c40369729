/** The official `openai` SDK against web + worker as separate processes, a real upstream on loopback. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { type APIError } from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({ catalog: testCatalog(upstream.url) });
  const { secret } = await gateway.issueKey('acme', 'app');
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

beforeEach(() => upstream.reset());

const hello = [{ role: 'user' as const, content: 'Say hello to the world' }];

describe('non-streaming completions', () => {
  it('returns the completion with the provider usage, the model used and a request id', async () => {
    upstream.script([{ kind: 'ok', text: 'Hello there, world.' }]);
    const { data, response } = await client.chat.completions.create({ model: 'fake-gpt', messages: hello }).withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.model).toBe('fake-gpt');
    expect(data.choices[0]?.message).toEqual({ role: 'assistant', content: 'Hello there, world.' });
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.usage).toEqual({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    const requestId = (data as unknown as { request_id: string }).request_id;
    expect(requestId).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(response.headers.get('x-request-id')).toBe(requestId);
    expect(upstream.requests[0]?.body).toMatchObject({ model: 'fake-upstream-model', messages: hello });
  });

  it('names the tier candidate that answered', async () => {
    const data = await client.chat.completions.create({ model: 'svc-flash', messages: hello });
    expect(data.model).toBe('fake-gpt');
  });

  it('counts with the tokenizer when the provider reports no usage', async () => {
    upstream.script([{ kind: 'ok', text: 'Counted locally', usage: false }]);
    const data = await client.chat.completions.create({ model: 'fake-gpt', messages: hello });
    expect(data.usage?.completion_tokens).toBeGreaterThan(0);
    expect(data.usage?.prompt_tokens).toBeGreaterThan(5);
    expect(data.usage?.total_tokens).toBe((data.usage?.prompt_tokens ?? 0) + (data.usage?.completion_tokens ?? 0));
  });

  it('serves the built-in simulator', async () => {
    const data = await client.chat.completions.create({ model: 'sim', messages: hello });
    expect(data.choices[0]?.message.content?.split(' ')).toHaveLength(12);
    expect(data.usage?.completion_tokens).toBe(12);
  });
});

describe('streaming completions', () => {
  it('relays the chunks and ends with [DONE]; asks the upstream for usage and strips it when the client did not', async () => {
    upstream.script([{ kind: 'ok', text: 'one two three four', chunks: 4 }]);
    const stream = await client.chat.completions.create({ model: 'fake-gpt', messages: hello, stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('one two three four');
    expect(chunks.every((c) => c.model === 'fake-gpt' && c.choices.length === 1 && c.usage === undefined)).toBe(true);
    expect(upstream.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('sends the usage chunk last when the client asks for it', async () => {
    upstream.script([{ kind: 'ok', text: 'alpha beta', chunks: 2 }]);
    const stream = await client.chat.completions.create({ model: 'fake-gpt', messages: hello, stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toEqual({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('estimates the streamed usage when the provider reports none, never zero', async () => {
    upstream.script([{ kind: 'ok', text: 'estimated answer text', chunks: 3, usage: false }]);
    const stream = await client.chat.completions.create({ model: 'fake-gpt', messages: hello, stream: true, stream_options: { include_usage: true } });
    let usage;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it('streams the simulator at the wire level: event-stream, numbered data events, [DONE] last', async () => {
    const { secret } = await gateway.issueKey('acme', 'developer');
    const response = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim', messages: hello, stream: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    const events = (await response.text()).split('\n\n').filter((event) => event !== '');
    expect(events.at(-1)).toMatch(/^id: \d+\ndata: \[DONE\]$/);
    const ids = events.map((event) => Number(/^id: (\d+)\n/.exec(event)?.[1]));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect(events.slice(0, -1).every((event) => /^id: \d+\ndata: \{.*\}$/.test(event))).toBe(true);
  });
});

describe('errors surface as the SDK typed errors with our codes', () => {
  it('unknown model → NotFoundError model_not_found', async () => {
    const error = await client.chat.completions.create({ model: 'no-such-model', messages: hello }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'model_not_found', param: 'model', type: 'invalid_request_error' });
    expect((error as APIError).requestID).toMatch(/^req_/);
  });

  it('"auto" → BadRequestError saying automatic selection is not available', async () => {
    const error = await client.chat.completions.create({ model: 'auto', messages: hello }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ code: 'model_selection_unavailable', param: 'model' });
    expect((error as Error).message).toMatch(/automatic model selection/i);
  });

  it('a parameter the provider rejects → 422 unsupported_parameter with param', async () => {
    const error = await client.chat.completions.create({ model: 'fake-reasoning', messages: hello, temperature: 0.2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(error).toMatchObject({ code: 'unsupported_parameter', param: 'temperature' });
    expect(upstream.requests).toHaveLength(0);
  });

  it('a tier skips a candidate that rejects a parameter', async () => {
    const data = await client.chat.completions.create({ model: 'svc-pro', messages: hello, temperature: 0.2 });
    expect(data.model).toBe('fake-gpt');
  });

  it('prompt + max_tokens over the window → 422 context_length_exceeded', async () => {
    const error = await client.chat.completions.create({ model: 'fake-tiny', messages: hello, max_tokens: 60 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(error).toMatchObject({ code: 'context_length_exceeded' });
    expect((error as Error).message).toMatch(/context window/);
  });

  it('an invalid key → AuthenticationError invalid_api_key', async () => {
    const stranger = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'gwk_not-a-real-key', maxRetries: 0 });
    const error = await stranger.chat.completions.create({ model: 'fake-gpt', messages: hello }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_api_key', type: 'authentication_error' });
  });

  it('a role that may not complete → PermissionDeniedError permission_denied', async () => {
    const { secret } = await gateway.issueKey('acme', 'auditor');
    const auditor = new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 });
    const error = await auditor.chat.completions.create({ model: 'fake-gpt', messages: hello }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(error).toMatchObject({ status: 403, code: 'permission_denied' });
  });

  it('a streamed request that fails before its first token keeps its real status', async () => {
    const error = await client.chat.completions.create({ model: 'no-such-model', messages: hello, stream: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
  });
});
