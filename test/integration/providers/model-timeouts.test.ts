/** A model's own timeouts (catalog `timeouts`) on real calls to a loopback fake upstream, through the OpenAI-compatible adapter. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelOf } from '../../../src/providers/model.ts';
import type { openAiCompatibleDescriptor } from '../../../src/providers/openai-compatible/descriptor.ts';
import { createOpenAiCompatibleAdapter } from '../../../src/providers/openai-compatible/index.ts';
import { createUpstreamHttp } from '../../../src/providers/shared/http.ts';
import type { ProviderRequest } from '../../../src/providers/types.ts';
import type { ChatCompletionChunk } from '../../../src/wire/openai-chat.ts';
import { connectTimeoutsOf, type TargetPool } from '../../../src/domain/catalog/targets.ts';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.ts';
import { MODEL_BASICS, collect, failure, targetFor } from '../../helpers/provider-calls.ts';

type Model = ModelOf<typeof openAiCompatibleDescriptor>;
let fake: FakeUpstream;
// Generous global limits: every timeout below is the model's own.
const http = createUpstreamHttp({ connectTimeoutMs: 5_000, headersTimeoutMs: 30_000, bodyTimeoutMs: 30_000, connections: 4 });
const adapter = createOpenAiCompatibleAdapter(http);

function call(timeouts: Model['timeouts']): ProviderRequest<Model> {
  const model: Model = { provider: 'openai-compatible', upstream_model: 'm', base_url: fake.url, ...MODEL_BASICS, timeouts };
  return {
    target: targetFor(model, 'sk-test'),
    body: { messages: [{ role: 'user', content: 'hi' }] },
    signal: new AbortController().signal,
    timeoutMs: 60_000,
  };
}

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work;
  return { value, ms: performance.now() - started };
}

beforeAll(async () => {
  fake = await startFakeUpstream();
});
beforeEach(() => fake.reset());
afterAll(async () => {
  await http.close();
  await fake.close();
});

describe("a model's timeouts", () => {
  it('first_token_ms: a plain answer whose headers do not come in time is a timeout, to the millisecond', async () => {
    fake.script([{ kind: 'hang' }]);
    const { value: error, ms } = await timed(failure(adapter.complete(call({ first_token_ms: 200 }))));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(error.message).toContain("the model's timeout");
    expect(ms).toBeGreaterThanOrEqual(190);
    expect(ms).toBeLessThan(1_000);
  });

  it('first_token_ms: a stream whose first chunk does not come in time is a timeout, though its headers came at once', async () => {
    fake.script([{ kind: 'slow-stream', chunkDelayMs: 600, chunks: 3 }]);
    const { value: error, ms } = await timed(failure(collect(adapter.stream(call({ first_token_ms: 200 })))));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(error.message).toContain("first token within the model's 200 ms");
    expect(ms).toBeLessThan(550);
    await fake.waitForClose(0, 2_000);
  });

  it('between_tokens_ms: a stream that goes silent after its first chunks is a timeout, the chunks before it delivered', async () => {
    fake.script([{ kind: 'slow-stream', chunkDelayMs: 400, chunks: 4 }]);
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(collect(adapter.stream(call({ first_token_ms: 1_000, between_tokens_ms: 200 })), seen));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(error.message).toContain("a token within the model's 200 ms of the last");
    expect(seen).toHaveLength(1);
  });

  it('total_ms: a stream still arriving when the whole call is over time is cut, as a timeout', async () => {
    fake.script([{ kind: 'slow-stream', chunkDelayMs: 50, chunks: 40 }]);
    const seen: ChatCompletionChunk[] = [];
    const { value: error, ms } = await timed(failure(collect(adapter.stream(call({ total_ms: 400, between_tokens_ms: 1_000 })), seen)));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(error.message).toContain("did not finish within the model's 400 ms");
    expect(ms).toBeLessThan(900);
    expect(seen.length).toBeGreaterThan(2);
    expect(seen.length).toBeLessThan(40);
  });

  it('leaves calls within the limits alone', async () => {
    fake.script([{ kind: 'slow-stream', chunkDelayMs: 20, chunks: 5 }]);
    const chunks = await collect(adapter.stream(call({ first_token_ms: 500, between_tokens_ms: 500, total_ms: 2_000 })));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('w0 w1 w2 w3 w4 ');
  });
});

describe('connect_ms', () => {
  it('is kept by origin, the shortest of the models that share one, for the connection pool of that origin', () => {
    const pool = (alias: string, targets: Array<{ base_url?: string; connect_ms?: number; provider?: string }>): TargetPool => ({
      alias,
      routing: 'weighted',
      breaker: { failureRate: 0.5, minCalls: 10, windowMs: 30_000, cooldownMs: 30_000, maxCooldownMs: 600_000 },
      targets: targets.map((target, i) => ({
        ...targetFor({
          provider: (target.provider ?? 'openai-compatible') as 'openai-compatible',
          upstream_model: 'm',
          ...(target.base_url ? { base_url: target.base_url } : {}),
          ...MODEL_BASICS,
          timeouts: target.connect_ms === undefined ? undefined : { connect_ms: target.connect_ms },
        } as Model),
        deployment: `${alias}-${i}`,
        weight: 1,
        rpm: null,
        tpm: null,
      })),
    });
    const pools = new Map([
      [
        'a',
        pool('a', [
          { base_url: 'https://api.example.com/v1', connect_ms: 800 },
          { base_url: 'https://eu.example.com:8443/v1', connect_ms: 300 },
        ]),
      ],
      ['b', pool('b', [{ base_url: 'https://api.example.com/v2', connect_ms: 500 }, { base_url: 'https://other.example.com/v1' }])],
      ['c', pool('c', [{ provider: 'anthropic', connect_ms: 700 }])],
    ]);
    const limits = connectTimeoutsOf(pools, (provider) => (provider === 'anthropic' ? 'https://api.anthropic.com' : null));
    expect(Object.fromEntries(limits)).toEqual({
      'https://api.example.com': 500,
      'https://eu.example.com:8443': 300,
      'https://api.anthropic.com': 700,
    });
  });
});
