/**
 * Upstream errors keep their meaning at our door (OpenAI-compatible upstream; the Anthropic and Gemini
 * suites check their own error shapes): the request's fault is a 400/422 the openai SDK does not retry,
 * our key refused is a 502, a rate limit that outlasts the retry budget is a 429 with Retry-After.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { apiFailure as failure } from '../helpers/sdk-calls.ts';

const hello = [{ role: 'user' as const, content: 'Say hello' }];
let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let sdk: OpenAI;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({ catalog: testCatalog(upstream.url), env: { RETRY_BASE_MS: '50', RETRY_MAX_ATTEMPTS: '2', RETRY_BUDGET_MS: '2000' } });
  const { secret } = await gateway.issueKey('acme', 'app');
  // The SDK's default retries: a 502 would be sent three times, a 400 once.
  sdk = new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 2 });
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});
beforeEach(async () => {
  upstream.reset();
  // Tests script 429s with long Retry-Afters and runs of failures: no pause or open breaker carries over.
  await gateway.resetBreakers();
});

describe("the upstream's refusal of the request", () => {
  it.each([
    [
      400,
      {
        message: "Invalid 'messages[0].content': string too long.",
        type: 'invalid_request_error',
        code: 'string_above_max_length',
        param: 'messages[0].content',
      },
      400,
    ],
    [404, { message: 'Unrecognized request argument supplied: foo', type: 'invalid_request_error', code: 'unknown_parameter', param: 'foo' }, 400],
    [413, { message: 'Request too large.', type: 'invalid_request_error', code: null, param: null }, 400],
    [422, { message: 'Unprocessable: tools[0] is invalid.', type: 'invalid_request_error', code: 'invalid_tools', param: 'tools' }, 422],
  ])('HTTP %i becomes %i invalid_request_error with its code and param, tried once by gateway and SDK alike', async (status, body, expected) => {
    upstream.answerByDefault({ kind: 'status', status, body: { error: body } });
    const error = await failure(sdk.chat.completions.create({ model: 'fake-gpt', messages: hello }));
    expect(error.status).toBe(expected);
    expect(error.error).toMatchObject({ type: 'invalid_request_error', code: body.code ?? 'provider_invalid_request', param: body.param });
    expect(error.message).toContain(`The provider of 'fake-gpt' rejected the request (HTTP ${status}): ${body.message}`);
    expect(upstream.requests).toHaveLength(1);
  });

  it("keeps the spec's 422 for a provider's context_length_exceeded", async () => {
    upstream.script([
      {
        kind: 'status',
        status: 400,
        body: { error: { message: "This model's maximum context length is 8192 tokens.", code: 'context_length_exceeded', param: 'messages' } },
      },
    ]);
    const error = await failure(sdk.chat.completions.create({ model: 'fake-gpt', messages: hello }));
    expect(error).toMatchObject({ status: 422, code: 'context_length_exceeded', param: 'messages' });
  });

  it('is not tried on the next candidate of a tier either', async () => {
    upstream.script([{ kind: 'status', status: 400, body: { error: { message: 'bad tool schema' } } }]);
    const error = await failure(sdk.chat.completions.create({ model: 'svc-standard', messages: hello }));
    expect(error.status).toBe(400);
    expect(upstream.requests).toHaveLength(1);
  });

  it('arrives before the first token of a stream with its real status', async () => {
    upstream.script([{ kind: 'status', status: 400, body: { error: { message: 'bad stop', param: 'stop', code: 'invalid_value' } } }]);
    const error = await failure(sdk.chat.completions.create({ model: 'fake-gpt', messages: hello, stream: true }));
    expect(error).toMatchObject({ status: 400, code: 'invalid_value', param: 'stop' });
  });
});

describe('our key refused by the provider', () => {
  it.each([401, 403])("HTTP %i is a 502 provider_failed, logged as the operator's problem", async (status) => {
    upstream.answerByDefault({
      kind: 'status',
      status,
      body: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } },
    });
    const quiet = new OpenAI({ baseURL: sdk.baseURL, apiKey: sdk.apiKey, maxRetries: 0 });
    const error = await failure(quiet.chat.completions.create({ model: 'fake-gpt', messages: hello }));
    expect(error).toMatchObject({ status: 502, code: 'provider_failed', type: 'api_error' });
    expect(upstream.requests).toHaveLength(1);
    await expect.poll(() => gateway.workers[0]?.output() ?? '').toContain(`refused the gateway's key (HTTP ${status})`);
  });
});

describe('a provider rate limit that outlasts the retry budget', () => {
  it("is a 429 rate_limit_exceeded with the provider's Retry-After", async () => {
    upstream.answerByDefault({ kind: 'status', status: 429, headers: { 'retry-after': '7' }, body: { error: { message: 'Rate limit reached.' } } });
    const quiet = new OpenAI({ baseURL: sdk.baseURL, apiKey: sdk.apiKey, maxRetries: 0 });
    const error = await failure(quiet.chat.completions.create({ model: 'fake-gpt', messages: hello }));
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded', type: 'rate_limit_error' });
    expect(error.headers?.get('retry-after')).toBe('7');
    expect(error.message).toMatch(/Retry after 7 seconds/);
    // The wait (7 s) is past the budget (2 s): tried once, not slept on.
    expect(upstream.requests).toHaveLength(1);
  });

  it('advises our own backoff when the provider named no wait', async () => {
    upstream.answerByDefault({ kind: 'status', status: 429, body: { error: { message: 'Slow down.' } } });
    const quiet = new OpenAI({ baseURL: sdk.baseURL, apiKey: sdk.apiKey, maxRetries: 0 });
    const error = await failure(quiet.chat.completions.create({ model: 'fake-gpt', messages: hello }));
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    expect(Number(error.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(upstream.requests).toHaveLength(2);
  });
});
