import { describe, it, expect } from 'vitest';
import { readdirSync } from 'node:fs';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { ModelOf } from '../../../../src/providers/model.ts';
import type { anthropicDescriptor } from '../../../../src/providers/anthropic/descriptor.ts';
import { translateStream } from '../../../../src/providers/anthropic/stream.ts';
import { ChatCompletionChunkSchema, type ChatCompletionChunk } from '../../../../src/wire/openai-chat.ts';
import { ANTHROPIC_FIXTURES_DIR, ANTHROPIC_FIXTURE_MODEL, readAnthropicFixture } from '../../../helpers/fake-anthropic.ts';
import { collect, failure, targetFor } from '../../../helpers/provider-calls.ts';

const REQUIRED_CASES = ['text', 'tool-use-parallel', 'thinking', 'redacted-thinking', 'refusal', 'max-tokens', 'cache-usage'];
const CASES = readdirSync(new URL('streams/', ANTHROPIC_FIXTURES_DIR))
  .filter((file) => file.endsWith('.chunks.json'))
  .map((file) => file.slice(0, -'.chunks.json'.length))
  .sort();
// Every byte, pairs, triples, odd sizes cutting lines and UTF-8 characters, and the whole body at once.
const PIECE_SIZES = [1, 2, 3, 7, 64, Number.POSITIVE_INFINITY];
const target = targetFor<ModelOf<typeof anthropicDescriptor>>(ANTHROPIC_FIXTURE_MODEL, 'sk-ant-test', 'claude-test');
const chunkChecker = TypeCompiler.Compile(ChatCompletionChunkSchema);
const encoder = new TextEncoder();

/** The body as the network might deliver it: cut every `size` bytes. */
async function* pieces(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = encoder.encode(text);
  const step = Number.isFinite(size) ? size : bytes.length;
  for (let at = 0; at < bytes.length; at += step) yield bytes.slice(at, at + step);
}

function withoutCreated(chunks: ChatCompletionChunk[]): Array<Omit<ChatCompletionChunk, 'created'>> {
  return chunks.map(({ created: _created, ...rest }) => rest);
}

function replay(text: string, size = Number.POSITIVE_INFINITY, seen: ChatCompletionChunk[] = []): Promise<ChatCompletionChunk[]> {
  return collect(translateStream(pieces(text, size), target), seen);
}

/** An SSE body from [event name, data] pairs. */
function sse(events: Array<[string, unknown]>): string {
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join('');
}

const START: [string, unknown] = [
  'message_start',
  { type: 'message_start', message: { id: 'msg_s', model: 'claude-x', usage: { input_tokens: 10, output_tokens: 1 } } },
];
const STOP: [string, unknown] = ['message_stop', { type: 'message_stop' }];
const textStart = (index: number): [string, unknown] => [
  'content_block_start',
  { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
];
const textDelta = (index: number, text: string): [string, unknown] => [
  'content_block_delta',
  { type: 'content_block_delta', index, delta: { type: 'text_delta', text } },
];
const messageDelta = (stopReason: string | null, usage: Record<string, number> = { output_tokens: 5 }): [string, unknown] => [
  'message_delta',
  { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage },
];

describe('anthropic stream fixtures', () => {
  it('cover every case the brief lists', () => {
    expect(CASES).toEqual(expect.arrayContaining(REQUIRED_CASES));
  });

  describe.each(CASES)('%s', (name) => {
    const body = readAnthropicFixture(`streams/${name}.sse`);
    const expected = JSON.parse(readAnthropicFixture(`streams/${name}.chunks.json`)) as unknown[];

    it.each(PIECE_SIZES)('yields the recorded chunks when cut every %d bytes', async (size) => {
      const chunks = await replay(body, size);
      expect(withoutCreated(chunks)).toEqual(expected);
      expect(new Set(chunks.map((chunk) => `${chunk.id} ${chunk.created}`)).size).toBe(1);
      for (const chunk of chunks) expect(chunkChecker.Errors(chunk).First()).toBeUndefined();
    });
  });
});

describe('anthropic stream failures from fixtures', () => {
  it.each(PIECE_SIZES)('error-overloaded (cut every %d bytes): no chunk, then a retryable 529 server_error', async (size) => {
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(replay(readAnthropicFixture('streams/error-overloaded.sse'), size, seen));
    expect(seen).toEqual([]);
    expect(error).toMatchObject({ kind: 'server_error', status: 529, retryable: true, code: 'overloaded_error', upstreamMessage: 'Overloaded' });
    expect(error.message).toBe('Upstream reported an error in the stream: overloaded_error: Overloaded');
  });

  it.each(PIECE_SIZES)('error-after-text (cut every %d bytes): the text, then a 500 server_error', async (size) => {
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(replay(readAnthropicFixture('streams/error-after-text.sse'), size, seen));
    expect(withoutCreated(seen)).toEqual([
      {
        id: 'msg_01ErA9tT2kN5pQ8wR3xL6mVb',
        object: 'chat.completion.chunk',
        model: 'claude-sonnet-4-5-20250929',
        choices: [{ index: 0, delta: { role: 'assistant', content: 'Partial answer' }, finish_reason: null }],
      },
    ]);
    expect(error).toMatchObject({ kind: 'server_error', status: 500, code: 'api_error', upstreamMessage: 'Internal server error' });
  });

  it.each(PIECE_SIZES)('cut (cut every %d bytes): the text, then broken_stream', async (size) => {
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(replay(readAnthropicFixture('streams/cut.sse'), size, seen));
    expect(seen.map((chunk) => chunk.choices[0]?.delta)).toEqual([{ role: 'assistant', content: 'Partial answer' }, { content: ' that never' }]);
    expect(error).toMatchObject({ kind: 'broken_stream', retryable: true });
  });
});

describe('anthropic stream translation details', () => {
  it('yields nothing before the first output: a stream of only message_start and pings that breaks is retryable with no chunk', async () => {
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(replay(sse([START, ['ping', { type: 'ping' }], textStart(0)]), 1, seen));
    expect(seen).toEqual([]);
    expect(error.kind).toBe('broken_stream');
    expect(error.message).toContain('before its first output');
  });

  it('puts the role on the finish chunk when it is the first chunk (a refusal without output)', async () => {
    const chunks = await replay(sse([START, messageDelta('refusal'), STOP]));
    expect(chunks.map((chunk) => chunk.choices[0] ?? null)).toEqual([
      { index: 0, delta: { role: 'assistant', refusal: 'The model declined to answer (Anthropic stop_reason "refusal").' }, finish_reason: 'content_filter' },
      null,
    ]);
    expect(chunks[1]?.usage).toEqual({
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    });
  });

  it('takes input and cache counts from message_delta over message_start, and its output_tokens, never adding', async () => {
    const start: [string, unknown] = [
      'message_start',
      {
        type: 'message_start',
        message: {
          id: 'msg_u',
          model: 'claude-x',
          usage: { input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 50, output_tokens: 1 },
        },
      },
    ];
    const chunks = await replay(
      sse([start, textStart(0), textDelta(0, 'Hi'), messageDelta('end_turn', { input_tokens: 40, cache_read_input_tokens: 300, output_tokens: 9 }), STOP]),
    );
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 390, completion_tokens: 9, total_tokens: 399, prompt_tokens_details: { cached_tokens: 300, cache_write_tokens: 50 } },
    });
  });

  it('keeps the last message_delta usage and yields one finish chunk when message_delta repeats', async () => {
    const chunks = await replay(
      sse([START, textStart(0), textDelta(0, 'Hi'), messageDelta(null, { output_tokens: 3 }), messageDelta('max_tokens', { output_tokens: 8 }), STOP]),
    );
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason ?? null)).toEqual([null, 'stop', null]);
    expect(chunks.at(-1)?.usage?.completion_tokens).toBe(8);
  });

  it('yields the finish chunk at message_stop when no message_delta came, and no usage chunk without counts', async () => {
    const chunks = await replay(
      sse([['message_start', { type: 'message_start', message: { id: 'msg_n', model: 'claude-x' } }], textStart(0), textDelta(0, 'Hi'), STOP]),
    );
    expect(withoutCreated(chunks)).toEqual([
      {
        id: 'msg_n',
        object: 'chat.completion.chunk',
        model: 'claude-x',
        choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }],
      },
      { id: 'msg_n', object: 'chat.completion.chunk', model: 'claude-x', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    ]);
  });

  it('reads events by their data type when the server sends no event names, and skips unknown events and citations', async () => {
    const citation = { type: 'content_block_delta', index: 0, delta: { type: 'citations_delta', citation: { type: 'char_location', cited_text: 'x' } } };
    const serverTool = { type: 'content_block_start', index: 1, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } };
    const serverInput = { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' } };
    const events = [
      START[1],
      textStart(0)[1],
      { type: 'future_event', x: 1 },
      citation,
      textDelta(0, 'Hi')[1],
      serverTool,
      serverInput,
      { type: 'content_block_stop', index: 1 },
      messageDelta('end_turn')[1],
      STOP[1],
    ];
    const chunks = await replay(events.map((data) => `data: ${JSON.stringify(data)}\n\n`).join(''));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta ?? null)).toEqual([{ role: 'assistant', content: 'Hi' }, {}, null]);
  });

  it("yields a thinking block whose text display 'omitted' left empty, with its signature", async () => {
    const thinkingStart: [string, unknown] = [
      'content_block_start',
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
    ];
    const signature: [string, unknown] = [
      'content_block_delta',
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig-1' } },
    ];
    const chunks = await replay(
      sse([START, thinkingStart, signature, ['content_block_stop', { type: 'content_block_stop', index: 0 }], messageDelta('end_turn'), STOP]),
    );
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', thinking_blocks: [{ type: 'thinking', thinking: '', signature: 'sig-1' }] });
    expect(chunks).toHaveLength(3);
  });

  it('stops reading at message_stop', async () => {
    const chunks = await replay(sse([START, textStart(0), textDelta(0, 'Hi'), messageDelta('end_turn'), STOP, textDelta(0, 'after the end')]));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? null)).toEqual(['Hi', null, null]);
  });

  it('fails with invalid_response on data that is not JSON', async () => {
    const seen: ChatCompletionChunk[] = [];
    const error = await failure(
      replay(sse([START, textStart(0), textDelta(0, 'Hi')]) + 'event: content_block_delta\ndata: {"type":"content_block_del\n\n', 7, seen),
    );
    expect(seen).toHaveLength(1);
    expect(error).toMatchObject({ kind: 'invalid_response', retryable: false });
  });

  it('fails with invalid_response on a delta for a block that never started', async () => {
    const error = await failure(replay(sse([START, textDelta(3, 'Hi')])));
    expect(error).toMatchObject({ kind: 'invalid_response' });
    expect(error.message).toContain('content block 3');
  });

  it.each([
    ['rate_limit_error', 'rate_limited', 429],
    ['invalid_request_error', 'invalid_request', 400],
    ['authentication_error', 'server_error', null],
  ])('maps an error event of type %s to %s', async (type, kind, status) => {
    const error = await failure(replay(sse([START, ['error', { type: 'error', error: { type, message: 'nope' } }]])));
    expect(error).toMatchObject({ kind, status, code: type, upstreamMessage: 'nope' });
  });
});
