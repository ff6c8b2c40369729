/** The upstream calls' spans: GenAI attributes from the target and the response, failures, abandoned streams. */
import { afterEach, describe, expect, it } from 'vitest';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { traceProviders } from '../../../src/infra/tracing/traced-providers.ts';
import { targetAttributes } from '../../../src/infra/tracing/upstream-attributes.ts';
import { TRACING_OFF, type Tracing } from '../../../src/infra/tracing/tracing.ts';
import type { ProviderRegistry } from '../../../src/providers/registry.ts';
import type { NativeEvent, ProviderTarget } from '../../../src/providers/types.ts';
import type { CatalogModel } from '../../../src/domain/catalog/schema.ts';
import type { ChatCompletion, ChatCompletionChunk } from '../../../src/wire/openai-chat.ts';
import { UpstreamError } from '../../../src/providers/shared/upstream-error.ts';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const tracing: Tracing = { enabled: true, tracer: provider.getTracer('test'), shutdown: async () => {} };

afterEach(() => exporter.reset());

const PRICES = { context_window: 8192, max_output_tokens: 1024, input_price_per_mtok: 1, output_price_per_mtok: 2 };

function target(alias: string, model: Record<string, unknown>): ProviderTarget {
  const full = { ...PRICES, ...model } as unknown as CatalogModel;
  return { alias, deployment: alias, provider: full.provider, upstreamModel: full.upstream_model, model: full, apiKey: null };
}

const openai = target('gpt', { provider: 'openai-compatible', upstream_model: 'gpt-4o', base_url: 'https://api.openai.com/v1' });
const anthropic = target('claude', { provider: 'anthropic', upstream_model: 'claude-sonnet-4' });

const completion: ChatCompletion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 0,
  model: 'gpt-4o-2024-08-06',
  choices: [{ index: 0, message: { role: 'assistant', content: 'secret answer' }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 },
};

function chunk(content: string, finishReason: string | null, usage?: ChatCompletionChunk['usage']): ChatCompletionChunk {
  return {
    id: 'chatcmpl-2',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'gpt-4o-2024-08-06',
    choices: [{ index: 0, delta: { content }, finish_reason: finishReason, logprobs: null }],
    ...(usage ? { usage } : {}),
  };
}

async function* items<T>(list: T[], failure?: Error): AsyncIterable<T> {
  for (const item of list) yield item;
  if (failure) throw failure;
}

function registry(overrides: Partial<ProviderRegistry> = {}): ProviderRegistry {
  const unused = () => {
    throw new Error('not called');
  };
  return { complete: unused, stream: unused, embed: unused, messages: { complete: unused, stream: unused }, close: async () => {}, ...overrides };
}

function onlySpan(): ReadableSpan {
  const spans = exporter.getFinishedSpans();
  expect(spans).toHaveLength(1);
  return spans[0] as ReadableSpan;
}

describe('who an upstream call goes to', () => {
  it('names the provider as the GenAI conventions do, with the server from the base URL or the public default', () => {
    expect(targetAttributes(openai)).toEqual({
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      'gateway.model_alias': 'gpt',
      'server.address': 'api.openai.com',
      'server.port': 443,
    });
    const azure = target('az', {
      provider: 'openai-compatible',
      upstream_model: 'gpt-4o',
      base_url: 'http://az.example:8080',
      azure: { api_version: '2024-10-21' },
    });
    expect(targetAttributes(azure)).toMatchObject({ 'gen_ai.provider.name': 'azure.ai.openai', 'server.address': 'az.example', 'server.port': 8080 });
    expect(targetAttributes(anthropic)).toMatchObject({ 'gen_ai.provider.name': 'anthropic', 'server.address': 'api.anthropic.com', 'server.port': 443 });
    expect(targetAttributes(target('gem', { provider: 'gemini', upstream_model: 'gemini-2.5-flash' }))).toMatchObject({
      'gen_ai.provider.name': 'gcp.gemini',
      'server.address': 'generativelanguage.googleapis.com',
    });
    const simulator = targetAttributes(target('sim', { provider: 'simulator', upstream_model: 'sim-1' }));
    expect(simulator['gen_ai.provider.name']).toBe('simulator');
    expect(simulator).not.toHaveProperty('server.address');
  });
});

describe('traced calls', () => {
  it('is the registry itself when tracing is off', () => {
    const plain = registry();
    expect(traceProviders(plain, TRACING_OFF)).toBe(plain);
  });

  it('records a completion: a CLIENT span named after the operation and the upstream model, with what the response said', async () => {
    await traceProviders(registry({ complete: async () => completion }), tracing).complete({
      target: openai,
      body: { messages: [] },
      signal: AbortSignal.timeout(1000),
      timeoutMs: 1000,
    });
    const span = onlySpan();
    expect(span.name).toBe('chat gpt-4o');
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.response.id': 'chatcmpl-1',
      'gen_ai.response.model': 'gpt-4o-2024-08-06',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 4,
    });
    expect(JSON.stringify(span.attributes)).not.toContain('secret');
  });

  it('records a stream read to its end, and one abandoned early with what it had seen', async () => {
    const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
    const traced = traceProviders(
      registry({ stream: () => items([chunk('a', null), chunk('b', 'length'), { ...chunk('', null), choices: [], usage }]) }),
      tracing,
    );
    const request = { target: openai, body: { messages: [] } as never, signal: AbortSignal.timeout(1000), timeoutMs: 1000 };
    for await (const _ of traced.stream(request));
    expect(onlySpan().attributes).toMatchObject({
      'gen_ai.response.finish_reasons': ['length'],
      'gen_ai.usage.input_tokens': 3,
      'gen_ai.usage.output_tokens': 2,
    });
    exporter.reset();
    for await (const _ of traced.stream(request)) break;
    const abandoned = onlySpan();
    expect(abandoned.status.code).toBe(SpanStatusCode.UNSET);
    expect(abandoned.attributes).toMatchObject({ 'gen_ai.response.model': 'gpt-4o-2024-08-06' });
    expect(abandoned.attributes).not.toHaveProperty('gen_ai.usage.input_tokens');
  });

  it('marks a failure with its kind and status, never its message', async () => {
    const failure = new UpstreamError('rate_limited', 'Rate limited on prompt "secret question"', { status: 429 });
    const traced = traceProviders(registry({ stream: () => items([chunk('a', null)], failure) }), tracing);
    await expect(async () => {
      for await (const _ of traced.stream({ target: openai, body: { messages: [] }, signal: AbortSignal.timeout(1000), timeoutMs: 1000 }));
    }).rejects.toBe(failure);
    const span = onlySpan();
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(span.attributes).toMatchObject({ 'error.type': 'rate_limited', 'http.response.status_code': 429 });
    expect(JSON.stringify(span.attributes) + JSON.stringify(span.events)).not.toContain('secret');
  });

  it('records embeddings as their own operation, with input tokens only', async () => {
    const embed = async () => ({ object: 'list' as const, data: [], model: 'text-embedding-3-small', usage: { prompt_tokens: 8, total_tokens: 8 } });
    const embeddingsTarget = target('emb', { provider: 'openai-compatible', upstream_model: 'text-embedding-3-small', base_url: 'https://api.openai.com/v1' });
    await traceProviders(registry({ embed }), tracing).embed({
      target: embeddingsTarget,
      body: { input: 'x' },
      signal: AbortSignal.timeout(1000),
      timeoutMs: 1000,
    });
    const span = onlySpan();
    expect(span.name).toBe('embeddings text-embedding-3-small');
    expect(span.attributes).toMatchObject({ 'gen_ai.operation.name': 'embeddings', 'gen_ai.usage.input_tokens': 8, 'gen_ai.usage.output_tokens': 0 });
  });

  it("counts Anthropic's cache reads and writes as input tokens of a native Messages stream", async () => {
    const events: NativeEvent[] = [
      {
        type: 'message_start',
        message: { id: 'msg_1', model: 'claude-sonnet-4-20250514', usage: { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 1 } },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'secret' } },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 25 } },
      { type: 'message_stop' },
    ];
    const traced = traceProviders(registry({ messages: { complete: () => Promise.reject(new Error('not called')), stream: () => items(events) } }), tracing);
    for await (const _ of traced.messages.stream({
      target: anthropic,
      body: { messages: [], max_tokens: 10 },
      betas: [],
      signal: AbortSignal.timeout(1000),
      timeoutMs: 1000,
    }));
    expect(onlySpan().attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.response.id': 'msg_1',
      'gen_ai.response.model': 'claude-sonnet-4-20250514',
      'gen_ai.response.finish_reasons': ['end_turn'],
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.usage.output_tokens': 25,
    });
  });
});
