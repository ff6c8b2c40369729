import { describe, it, expect } from 'vitest';
import { encode } from 'gpt-tokenizer';
import { countPromptTokens } from '../../../src/providers/shared/tokens.ts';
import type { ModelOf } from '../../../src/providers/model.ts';
import type { simulatorDescriptor } from '../../../src/providers/simulator/descriptor.ts';
import type { SimulatorOptions } from '../../../src/providers/simulator/descriptor.ts';
import { createSimulatorAdapter } from '../../../src/providers/simulator/index.ts';
import type { ProviderRequest } from '../../../src/providers/types.ts';
import type { ChatCompletionChunk, ChatRequest } from '../../../src/wire/openai-chat.ts';
import { MODEL_BASICS, collect, failure, targetFor } from '../../helpers/provider-calls.ts';

const messages: ChatRequest['messages'] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: [{ type: 'text', text: 'Tell me about gateways.' }] },
];

function call(
  simulator: SimulatorOptions,
  body: ChatRequest = { messages },
  signal = new AbortController().signal,
): ProviderRequest<ModelOf<typeof simulatorDescriptor>> {
  return {
    target: targetFor({ provider: 'simulator', upstream_model: 'sim-model', ...MODEL_BASICS, simulator }, null, 'sim'),
    body,
    signal,
    timeoutMs: 60_000,
  };
}

function textOf(chunks: ChatCompletionChunk[]): string {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
}

const simulator = createSimulatorAdapter();

describe('simulator output', () => {
  it('is deterministic for the same messages and differs for others', async () => {
    const first = await simulator.complete(call({}));
    const second = await simulator.complete(call({}));
    const other = await simulator.complete(call({}, { messages: [{ role: 'user', content: 'Something else' }] }));
    expect(first.choices[0]?.message.content).toBe(second.choices[0]?.message.content);
    expect(first.choices[0]?.message.content).not.toBe(other.choices[0]?.message.content);
    expect(first.id).toMatch(/^chatcmpl-sim-/);
    expect(first.id).not.toBe(second.id);
    expect(first.model).toBe('sim-model');
  });

  it('answers 64 tokens by default, completion_tokens when configured, capped by max_tokens', async () => {
    expect((await simulator.complete(call({}))).usage?.completion_tokens).toBe(64);
    const configured = await simulator.complete(call({ completion_tokens: 10 }));
    expect(configured.usage?.completion_tokens).toBe(10);
    expect(configured.choices[0]?.finish_reason).toBe('stop');
    const capped = await simulator.complete(call({ completion_tokens: 10 }, { messages, max_tokens: 4 }));
    expect(capped.usage?.completion_tokens).toBe(4);
    expect(capped.choices[0]?.finish_reason).toBe('length');
    const cappedNewStyle = await simulator.complete(call({}, { messages, max_completion_tokens: 7 }));
    expect(cappedNewStyle.usage?.completion_tokens).toBe(7);
  });

  it('reports usage counted with the tokenizer', async () => {
    const completion = await simulator.complete(call({ completion_tokens: 12 }));
    const prompt = countPromptTokens(messages);
    expect(completion.usage).toEqual({ prompt_tokens: prompt, completion_tokens: 12, total_tokens: prompt + 12 });
    expect(encode(completion.choices[0]?.message.content ?? '')).toHaveLength(12);
  });

  it('streams the same text, then a finish chunk, then the usage chunk', async () => {
    const completion = await simulator.complete(call({ completion_tokens: 8 }));
    const chunks = await collect(simulator.stream(call({ completion_tokens: 8 })));
    expect(textOf(chunks)).toBe(completion.choices[0]?.message.content);
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: completion.usage });
  });

  it('waits latency_ms before answering and paces tokens_per_second', async () => {
    let started = Date.now();
    await simulator.complete(call({ latency_ms: 150, completion_tokens: 3 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);

    started = Date.now();
    const arrivals: number[] = [];
    for await (const chunk of simulator.stream(call({ tokens_per_second: 20, completion_tokens: 5 }))) {
      if (chunk.choices[0]?.delta.content !== undefined) arrivals.push(Date.now() - started);
    }
    expect(arrivals).toHaveLength(5);
    expect(arrivals.at(-1)).toBeGreaterThanOrEqual(4 * 50 - 20);
  });
});

describe('simulator faults', () => {
  it('throws rate_limited with the configured Retry-After', async () => {
    const error = await failure(simulator.complete(call({ fault: { kind: '429', rate: 1, retry_after_seconds: 3 } })));
    expect(error).toMatchObject({ kind: 'rate_limited', status: 429, retryable: true, retryAfterMs: 3000 });
  });

  it('throws server_error for 500, streaming or not', async () => {
    const options: SimulatorOptions = { fault: { kind: '500', rate: 1 } };
    expect(await failure(simulator.complete(call(options)))).toMatchObject({ kind: 'server_error', status: 500 });
    expect(await failure(collect(simulator.stream(call(options))))).toMatchObject({ kind: 'server_error' });
  });

  it('hangs until its timeout, then throws timeout', async () => {
    const hanging = createSimulatorAdapter({ hangTimeoutMs: 100 });
    const started = Date.now();
    const error = await failure(hanging.complete(call({ fault: { kind: 'timeout', rate: 1 } })));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  });

  it('stops hanging as soon as the signal aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const pending = failure(simulator.complete(call({ fault: { kind: 'timeout', rate: 1 } }, { messages }, controller.signal)));
    setTimeout(() => controller.abort(), 50);
    expect((await pending).kind).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('breaks a stream after part of the text, and fails a non-streamed call as a 500', async () => {
    const options: SimulatorOptions = { completion_tokens: 10, fault: { kind: 'broken_stream', rate: 1 } };
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(collect(simulator.stream(call(options)), seen));
    expect(error).toMatchObject({ kind: 'broken_stream', retryable: true });
    expect(seen).toHaveLength(5);
    expect(await failure(simulator.complete(call(options)))).toMatchObject({ kind: 'server_error', status: 500 });
  });

  it('injects faults at the configured rate', async () => {
    const options: SimulatorOptions = { completion_tokens: 2, fault: { kind: '500', rate: 0.5 } };
    const lucky = createSimulatorAdapter({ random: () => 0.7 });
    const unlucky = createSimulatorAdapter({ random: () => 0.2 });
    expect((await lucky.complete(call(options))).usage?.completion_tokens).toBe(2);
    expect((await failure(unlucky.complete(call(options)))).kind).toBe('server_error');
    const never = { completion_tokens: 2, fault: { kind: '500', rate: 0 } } as const;
    expect((await unlucky.complete(call(never))).usage?.completion_tokens).toBe(2);
  });
});

describe('simulator abort', () => {
  it('stops a paced stream promptly when the signal aborts', async () => {
    const controller = new AbortController();
    const seen: ChatCompletionChunk[] = [];
    const options: SimulatorOptions = { tokens_per_second: 10, completion_tokens: 100 };
    const pending = failure(collect(simulator.stream(call(options, { messages }, controller.signal)), seen));
    let abortedAt = 0;
    setTimeout(() => {
      abortedAt = Date.now();
      controller.abort();
    }, 250);
    expect((await pending).kind).toBe('aborted');
    expect(Date.now() - abortedAt).toBeLessThan(50);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.length).toBeLessThan(10);
  });

  it('refuses to start with an already aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await failure(simulator.complete(call({}, { messages }, controller.signal)));
    expect(error.kind).toBe('aborted');
  });
});
