/**
 * A tier's fallback crosses providers: an Anthropic candidate that stays overloaded (529) gives way to
 * a Gemini one, and the response's `model` names the candidate that answered. The usage record says
 * which provider served it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { ANTHROPIC_FIXTURE_MODEL, anthropicError, startAnthropicUpstream, type FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { GEMINI_FIXTURE_MODEL, startGeminiUpstream, type FakeGemini } from '../helpers/fake-gemini.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { drain, requestIdOf, usageRecordOf } from '../helpers/sdk-calls.ts';

const hello = [{ role: 'user' as const, content: 'Say hello' }];
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let gateway: GatewayUnderTest;
let client: OpenAI;
let secret: string;

beforeAll(async () => {
  [anthropic, gemini] = await Promise.all([startAnthropicUpstream(), startGeminiUpstream()]);
  const models = { claude: { ...ANTHROPIC_FIXTURE_MODEL, base_url: anthropic.url }, gemini: { ...GEMINI_FIXTURE_MODEL, base_url: gemini.url } };
  gateway = await startGateway({
    catalog: { models, tiers: { 'svc-flash': ['gemini'], 'svc-standard': ['claude', 'gemini'], 'svc-pro': ['claude'] } },
    env: { RETRY_BASE_MS: '50', RETRY_MAX_ATTEMPTS: '2', RETRY_BUDGET_MS: '3000' },
  });
  secret = (await gateway.issueKey('acme', 'developer')).secret;
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([anthropic?.close(), gemini?.close()]);
});
beforeEach(() => {
  anthropic.reset();
  gemini.reset();
  anthropic.answerByDefault({ kind: 'status', status: 529, body: anthropicError('overloaded_error', 'Overloaded') });
});

describe('a tier falling back from Anthropic to Gemini', () => {
  it('answers from Gemini once Claude stays overloaded, and says so', async () => {
    gemini.script([{ kind: 'ok', text: 'Gemini here.' }]);
    const completion = await client.chat.completions.create({ model: 'svc-standard', messages: hello });
    expect(completion.model).toBe('gemini');
    expect(completion.choices[0]?.message.content).toBe('Gemini here.');
    expect(anthropic.requests).toHaveLength(2);
    expect(gemini.requests).toHaveLength(1);
    expect(await usageRecordOf(gateway, secret, requestIdOf(completion))).toMatchObject({
      model: 'gemini',
      provider: 'gemini',
      requested_model: 'svc-standard',
      status: 'succeeded',
    });
  });

  it('does so for a stream that failed before its first token, and every chunk names the candidate', async () => {
    gemini.script([{ kind: 'ok', text: 'Streamed by Gemini.', pieceBytes: 10 }]);
    const chunks = await drain(await client.chat.completions.create({ model: 'svc-standard', messages: hello, stream: true }));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('Streamed by Gemini.');
    expect(chunks.every((chunk) => chunk.model === 'gemini')).toBe(true);
    expect(anthropic.requests.length).toBeGreaterThanOrEqual(1);
  });

  it('stays on Claude when it answers', async () => {
    anthropic.script([{ kind: 'ok', text: 'Claude here.' }]);
    const completion = await client.chat.completions.create({ model: 'svc-standard', messages: hello });
    expect(completion.model).toBe('claude');
    expect(gemini.requests).toHaveLength(0);
  });
});
