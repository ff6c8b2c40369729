/** Anthropic's Messages API untranslated (clients of the gateway's /v1/messages), against a loopback upstream. */
import { describe, it, expect, beforeAll, beforeEach, afterAll } from 'vitest';
import type { ModelOf } from '../../../src/providers/model.ts';
import type { anthropicDescriptor } from '../../../src/providers/anthropic/descriptor.ts';
import { createAnthropicAdapter } from '../../../src/providers/anthropic/index.ts';
import { createUpstreamHttp, type UpstreamHttp } from '../../../src/providers/shared/http.ts';
import type { MessagesBody, NativeEvent, NativeMessagesAdapter, NativeMessagesRequest } from '../../../src/providers/types.ts';
import { ANTHROPIC_FIXTURE_MODEL, readAnthropicFixture, startAnthropicUpstream, type FakeAnthropic } from '../../helpers/fake-anthropic.ts';
import { collect, connectionsOfThreeStreams, failure, targetFor } from '../../helpers/provider-calls.ts';

type Model = ModelOf<typeof anthropicDescriptor>;

let fake: FakeAnthropic;
const HTTP_OPTIONS = { connectTimeoutMs: 1000, headersTimeoutMs: 2000, bodyTimeoutMs: 2000, connections: 4 };
const http = createUpstreamHttp(HTTP_OPTIONS);
const native = nativeOf(http);

function nativeOf(pool: UpstreamHttp): NativeMessagesAdapter<Model> {
  const adapter = createAnthropicAdapter(pool).messages;
  if (!adapter) throw new Error('the Anthropic adapter speaks the Messages API natively');
  return adapter;
}

// What Claude Code sends: a cached system prompt, thinking, a server tool and a client tool, a signed thinking block.
const BODY = {
  max_tokens: 2048,
  system: [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } }],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Fix the bug', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Look first.', signature: 'sig-abc' },
        { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a.ts' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'const a = 1;' }] },
  ],
  thinking: { type: 'enabled', budget_tokens: 1024 },
  tools: [
    { name: 'read', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
    { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
  ],
  metadata: { user_id: 'user-1' },
  context_management: { edits: [] },
} as unknown as MessagesBody;

function call(options: { betas?: string[]; model?: Partial<Model>; signal?: AbortSignal } = {}): NativeMessagesRequest<Model> {
  const model: Model = { ...ANTHROPIC_FIXTURE_MODEL, base_url: fake.url, ...options.model };
  return {
    target: targetFor(model, 'sk-ant-test', 'claude-test'),
    body: BODY,
    betas: options.betas ?? [],
    signal: options.signal ?? new AbortController().signal,
    timeoutMs: 60_000,
  };
}

beforeAll(async () => {
  fake = await startAnthropicUpstream();
});

beforeEach(() => {
  fake.reset();
});

afterAll(async () => {
  await http.close();
  await fake.close();
});

describe('native Messages calls', () => {
  it('sends the body as the client sent it, with the upstream model name, the key and both sets of beta flags', async () => {
    fake.script([{ kind: 'ok', text: 'Done.' }]);
    await native.complete(call({ betas: ['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07'], model: { anthropic_beta: ['context-1m-2025-08-07'] } }));
    const recorded = fake.requests[0];
    expect(recorded?.body).toEqual({ ...BODY, model: 'claude-sonnet-test' });
    expect(recorded?.headers).toMatchObject({
      'x-api-key': 'sk-ant-test',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'context-1m-2025-08-07,interleaved-thinking-2025-05-14',
    });
  });

  it('answers the message as the upstream sent it', async () => {
    fake.script([{ kind: 'fixture', name: 'thinking-tool-use' }]);
    const message = await native.complete(call());
    expect(message).toEqual((JSON.parse(readAnthropicFixture('responses/thinking-tool-use.json')) as { upstream: unknown }).upstream);
  });

  it('streams the events as sent, with `type` first and without pings', async () => {
    fake.script([{ kind: 'fixture', name: 'thinking-tool-use', pieceBytes: 7 }]);
    const events = await collect<NativeEvent>(native.stream(call()));
    const sent = readAnthropicFixture('streams/thinking-tool-use.sse')
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)) as NativeEvent)
      .filter((event) => event.type !== 'ping');
    expect(events).toEqual(sent);
    expect(events.every((event) => Object.keys(event)[0] === 'type')).toBe(true);
    expect(fake.requests[0]?.body).toMatchObject({ stream: true });
  });

  it('reads each stream to the end of its body, so that the next call reuses the kept-alive connection', async () => {
    // A pool of its own: the other tests' idle connections would take turns.
    const pool = createUpstreamHttp(HTTP_OPTIONS);
    const adapter = nativeOf(pool);
    fake.script([
      { kind: 'ok', text: 'one' },
      { kind: 'ok', text: 'two' },
      { kind: 'ok', text: 'three' },
    ]);
    expect(await connectionsOfThreeStreams(() => adapter.stream(call()), pool, fake)).toBe(1);
    await pool.close();
  });

  it('throws an `event: error` as the failure it reports (overloaded: retryable)', async () => {
    fake.script([{ kind: 'error-event', afterText: 'Partial', error: { type: 'overloaded_error', message: 'Overloaded' } }]);
    const seen: NativeEvent[] = [];
    const error = await failure(collect(native.stream(call()), seen));
    expect(error).toMatchObject({ kind: 'server_error', retryable: true, status: 529, code: 'overloaded_error' });
    expect(seen.map((event) => event.type)).toEqual(['message_start', 'content_block_start', 'content_block_delta']);
  });

  it('throws a stream cut before message_stop as broken, and an upstream 4xx as the request’s fault', async () => {
    fake.script([
      { kind: 'cut', afterText: 'Half' },
      { kind: 'status', status: 400 },
    ]);
    expect(await failure(collect(native.stream(call())))).toMatchObject({ kind: 'broken_stream' });
    expect(await failure(native.complete(call()))).toMatchObject({ kind: 'invalid_request', status: 400, retryable: false });
  });
});
