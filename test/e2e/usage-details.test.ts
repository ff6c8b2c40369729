/**
 * The upstream's usage details (cached and reasoning tokens) reach the client, JSON and streamed, and
 * the usage record, whose cost uses the catalog's cache price. OpenAI-compatible upstream; the Anthropic
 * and Gemini suites check their own arithmetic.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { requestIdOf, usageRecordOf } from '../helpers/sdk-calls.ts';

const USAGE = {
  prompt_tokens: 1200,
  completion_tokens: 300,
  total_tokens: 1500,
  prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 256, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};
const hello = [{ role: 'user' as const, content: 'Say hello' }];
let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let client: OpenAI;
let secret: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  const catalog = testCatalog(upstream.url);
  catalog.models['fake-gpt'] = {
    ...(catalog.models['fake-gpt'] as Extract<(typeof catalog.models)[string], { provider: 'openai-compatible' }>),
    input_price_per_mtok: 2,
    output_price_per_mtok: 8,
    cache_read_price_per_mtok: 0.5,
  };
  gateway = await startGateway({ catalog });
  secret = (await gateway.issueKey('acme', 'developer')).secret;
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

describe('usage details of an OpenAI-compatible upstream', () => {
  it('come back on a completion and into its usage record, priced with the cache price', async () => {
    upstream.script([{ kind: 'ok', text: 'cached answer', usage: USAGE }]);
    const completion = await client.chat.completions.create({ model: 'fake-gpt', messages: hello });
    expect(completion.usage).toEqual(USAGE);
    const record = await usageRecordOf(gateway, secret, requestIdOf(completion));
    expect(record).toMatchObject({
      prompt_tokens: 1200,
      completion_tokens: 300,
      total_tokens: 1500,
      cached_tokens: 1024,
      cache_write_tokens: 0,
      reasoning_tokens: 256,
      usage_source: 'provider',
    });
    // 176 uncached × 2 + 1,024 cached × 0.5 + 300 × 8 micro-units.
    expect(record.cost_micros).toBe(176 * 2 + 1024 * 0.5 + 300 * 8);
  });

  it('come back in the streamed usage chunk', async () => {
    upstream.script([{ kind: 'ok', text: 'streamed and cached', chunks: 3, usage: USAGE }]);
    const stream = await client.chat.completions.create({ model: 'fake-gpt', messages: hello, stream: true, stream_options: { include_usage: true } });
    let usage: unknown;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage).toEqual(USAGE);
  });
});
