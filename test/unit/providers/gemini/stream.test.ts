import { describe, it, expect } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import type { ModelOf } from '../../../../src/providers/model.ts';
import type { geminiDescriptor } from '../../../../src/providers/gemini/descriptor.ts';
import { translateGeminiStream } from '../../../../src/providers/gemini/stream.ts';
import type { ChatCompletionChunk } from '../../../../src/wire/openai-chat.ts';
import { GEMINI_FIXTURES_DIR, GEMINI_FIXTURE_MODEL, geminiSse } from '../../../helpers/fake-gemini.ts';
import { collect, failure, targetFor } from '../../../helpers/provider-calls.ts';

const DIR = `${GEMINI_FIXTURES_DIR}streams/`;
const names = readdirSync(DIR)
  .filter((file) => file.endsWith('.sse'))
  .map((file) => file.replace(/\.sse$/, ''));
// Streams that end in an error rather than a finish: what they yield first, then how they fail.
const FAILING: Readonly<Record<string, { kind: string; status: number | null }>> = {
  'error-event': { kind: 'server_error', status: 503 },
  cut: { kind: 'broken_stream', status: null },
};
const PIECES = [1, 2, 3, 7, 64, Number.POSITIVE_INFINITY];

const target = targetFor<ModelOf<typeof geminiDescriptor>>(GEMINI_FIXTURE_MODEL, 'test-key');

/** The bytes of `text` as an upstream body read in pieces of `size` bytes. */
async function* pieces(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text, 'utf8');
  const step = Number.isFinite(size) ? size : bytes.length;
  for (let at = 0; at < bytes.length; at += step) yield bytes.subarray(at, at + step);
}

function stream(body: string, size = Number.POSITIVE_INFINITY): AsyncGenerator<ChatCompletionChunk> {
  return translateGeminiStream(pieces(body, size), target);
}

function withoutCreated(chunks: ChatCompletionChunk[]): unknown[] {
  return chunks.map(({ created: _created, ...rest }) => rest);
}

const event = (parts: unknown[], extra: Record<string, unknown> = {}, candidate: Record<string, unknown> = {}) =>
  geminiSse({ candidates: [{ content: { role: 'model', parts }, index: 0, ...candidate }], modelVersion: 'gemini-x', responseId: 'r1', ...extra });

describe('gemini stream fixtures', () => {
  it('covers the cases the adapter documents', () => {
    expect(names).toEqual(expect.arrayContaining(['text', 'function-call', 'call-then-stop', 'thoughts', 'safety', 'max-tokens', 'error-event', 'cut']));
  });

  const cases = names.flatMap((name) => PIECES.map((size) => [name, size] as const));
  it.each(cases)('%s, read in pieces of %d bytes: yields the recorded chunks', async (name, size) => {
    const body = readFileSync(`${DIR}${name}.sse`, 'utf8');
    const expected = JSON.parse(readFileSync(`${DIR}${name}.chunks.json`, 'utf8')) as unknown[];
    const seen: ChatCompletionChunk[] = [];
    const failing = FAILING[name];
    if (failing === undefined) await collect(stream(body, size), seen);
    else expect(await failure(collect(stream(body, size), seen))).toMatchObject(failing);
    expect(withoutCreated(seen)).toEqual(expected);
    expect(new Set(seen.map((chunk) => chunk.created)).size).toBe(1);
  });
});

describe('gemini stream translation', () => {
  it('takes the error object mid-stream as the error its code stands for', async () => {
    const body = readFileSync(`${DIR}error-event.sse`, 'utf8');
    const error = await failure(collect(stream(body)));
    expect(error).toMatchObject({
      kind: 'server_error',
      retryable: true,
      status: 503,
      code: 'UNAVAILABLE',
      upstreamMessage: 'The model is overloaded. Please try again later.',
    });
  });

  it.each([
    [429, 'RESOURCE_EXHAUSTED', 'rate_limited', true],
    [500, 'INTERNAL', 'server_error', true],
    [400, 'INVALID_ARGUMENT', 'invalid_request', false],
    [403, 'PERMISSION_DENIED', 'unauthorized', false],
  ] as const)('classifies an error event with code %i (%s) as %s', async (code, status, kind, retryable) => {
    const error = await failure(collect(stream(geminiSse({ error: { code, message: 'm', status } }))));
    expect(error).toMatchObject({ kind, retryable, status: code, code: status });
  });

  it('classifies an error event without a code by its status name', async () => {
    const error = await failure(collect(stream(geminiSse({ error: { message: 'busy', status: 'UNAVAILABLE' } }))));
    expect(error).toMatchObject({ kind: 'server_error', status: 503 });
  });

  it('fails with invalid_response on an event that is not JSON', async () => {
    const error = await failure(collect(stream(`${event([{ text: 'a' }])}data: {"candidates": [\r\n\r\n`)));
    expect(error).toMatchObject({ kind: 'invalid_response', retryable: false });
  });

  it('fails with broken_stream when the body ends without a finishReason, even after usage', async () => {
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(
      collect(stream(event([{ text: 'a' }], { usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 } })), seen),
    );
    expect(error.kind).toBe('broken_stream');
    expect(error.message).toContain('finishReason');
    expect(seen).toHaveLength(1);
    expect(await failure(collect(stream('')))).toMatchObject({ kind: 'broken_stream' });
  });

  it('yields nothing for events without output, and the role on the first chunk that has some', async () => {
    const body =
      event([{ text: '' }]) +
      geminiSse({ usageMetadata: { promptTokenCount: 4 }, modelVersion: 'gemini-x', responseId: 'r1' }) +
      event([{ text: 'Hi' }], {}, { finishReason: 'STOP' });
    const chunks = await collect(stream(body));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([{ role: 'assistant', content: 'Hi' }, {}]);
  });

  it('takes the first event id and model for every chunk, and the upstream model when Gemini sends none', async () => {
    const body = event([{ text: 'a' }]) + event([{ text: 'b' }], { responseId: 'other', modelVersion: 'other' }, { finishReason: 'STOP' });
    const chunks = await collect(stream(body));
    expect(new Set(chunks.map((chunk) => `${chunk.id} ${chunk.model}`))).toEqual(new Set(['r1 gemini-x']));
    const bare = await collect(stream(geminiSse({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'STOP' }] })));
    expect(bare[0]?.model).toBe('gemini-test-flash');
    expect(bare[0]?.id).toMatch(/^chatcmpl-/);
  });

  it('numbers tool calls across events and gives calls without id a fresh one', async () => {
    const body = event([{ functionCall: { name: 'a', args: {} } }]) + event([{ functionCall: { name: 'b' } }], {}, { finishReason: 'STOP' });
    const calls = (await collect(stream(body))).flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(calls).toEqual([
      { index: 0, id: expect.stringMatching(/^call_[0-9a-f]{24}$/), type: 'function', function: { name: 'a', arguments: '{}' } },
      { index: 1, id: expect.stringMatching(/^call_[0-9a-f]{24}$/), type: 'function', function: { name: 'b', arguments: '{}' } },
    ]);
  });

  it('keeps the last usage with completion counts, ignores events after the finish except their counts', async () => {
    const body =
      event([{ text: 'a' }], { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1, totalTokenCount: 6 } }, { finishReason: 'STOP' }) +
      event([{ text: 'ignored' }], { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3, totalTokenCount: 8 } }, { finishReason: 'STOP' }) +
      event([], { usageMetadata: { promptTokenCount: 5 } });
    const chunks = await collect(stream(body));
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason ?? null)).toEqual([null, 'stop', null]);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } });
  });

  it('ends after the finish chunk when Gemini reported no usage', async () => {
    const chunks = await collect(stream(event([{ text: 'a' }], {}, { finishReason: 'MAX_TOKENS' })));
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason)).toEqual([null, 'length']);
  });

  it.each([
    ['a candidates field that is not an array', geminiSse({ candidates: {} })],
    ['a part that is not an object', event(['text'])],
    ['an event that is not an object', geminiSse([1])],
  ])('fails with invalid_response on %s', async (_why, body) => {
    expect(await failure(collect(stream(body)))).toMatchObject({ kind: 'invalid_response' });
  });
});
