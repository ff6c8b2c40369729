import { describe, expect, it } from 'vitest';
import { chatCache } from '../../../../src/operations/chat/cache.ts';
import type { CachedAnswer } from '../../../../src/infra/cache/response-cache.ts';
import type { ChatPayload } from '../../../../src/operations/chat/payload.ts';

const USAGE = { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 };
const base = { id: 'chatcmpl-1', created: 1_700_000_000, model: 'fast' };
const chunk = (delta: object, finish: string | null = null) => ({
  ...base,
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
});
const COMPLETION = {
  ...base,
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there', refusal: null }, finish_reason: 'stop', logprobs: null }],
};
const payload = (includeUsage: boolean, extra: object = {}): ChatPayload => ({ body: { messages: [{ role: 'user', content: 'hi' }], ...extra }, includeUsage });
const cached = (answer: unknown): CachedAnswer => ({ model: 'fast', usage: USAGE, answer, storedAt: 0, deployment: null });
const parsed = (events: Array<{ payload: string }>) => events.map((event) => JSON.parse(event.payload) as Record<string, unknown>);

describe('the chat cache', () => {
  it('keys on the request without user and metadata', () => {
    expect(chatCache.request(payload(false, { temperature: 0, user: 'u', metadata: { a: 1 } }))).toEqual({
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0,
    });
  });

  it('reads a temperature above zero, or none, as sampling', () => {
    expect(chatCache.samples(payload(false))).toBe(true);
    expect(chatCache.samples(payload(false, { temperature: null }))).toBe(true);
    expect(chatCache.samples(payload(false, { temperature: 0.2 }))).toBe(true);
    expect(chatCache.samples(payload(false, { temperature: 0 }))).toBe(false);
  });

  it('keeps a completion without its request id, and replays it for a JSON request with the new one', () => {
    const kept = chatCache.keep({ type: 'result', payload: JSON.stringify({ ...COMPLETION, usage: USAGE, request_id: 'req_old' }) }, []);
    expect(kept).toEqual({ model: 'fast', usage: USAGE, answer: { completion: COMPLETION } });
    const [result] = parsed(chatCache.replay(cached(kept?.answer), payload(false), { requestId: 'req_new', stream: false }));
    expect(result).toEqual({ ...COMPLETION, usage: USAGE, request_id: 'req_new' });
  });

  it('keeps a stream without the usage fields, and replays it as sent, with or without include_usage', () => {
    const emitted = [chunk({ role: 'assistant', content: 'Hi' }), chunk({ content: ' there' }, 'stop')];
    const withUsage = [...emitted.map((c) => ({ ...c, usage: null })), { ...base, object: 'chat.completion.chunk', choices: [], usage: USAGE }];
    const kept = chatCache.keep(
      { type: 'done', payload: JSON.stringify({ usage: USAGE, usage_source: 'provider' }) },
      withUsage.map((c) => JSON.stringify(c)),
    );
    expect(kept?.answer).toEqual({ chunks: emitted });
    const replayed = chatCache.replay(cached(kept?.answer), payload(true), { requestId: 'r', stream: true });
    expect(replayed.map((event) => event.type)).toEqual(['chunk', 'chunk', 'chunk', 'done']);
    expect(parsed(replayed.slice(0, 3))).toEqual(withUsage);
    expect(parsed(chatCache.replay(cached(kept?.answer), payload(false), { requestId: 'r', stream: true }).slice(0, 2))).toEqual(emitted);
  });

  it('turns a stream into one completion, tool calls included', () => {
    const chunks = [
      chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"a"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, 'tool_calls'),
    ];
    const [result] = parsed(chatCache.replay(cached({ chunks }), payload(false), { requestId: 'r', stream: false }));
    expect(result).toMatchObject({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"a":1}' } }] },
          finish_reason: 'tool_calls',
        },
      ],
      usage: USAGE,
      request_id: 'r',
    });
  });

  it('turns a completion into a stream of one chunk per choice', () => {
    const events = chatCache.replay(cached({ completion: COMPLETION }), payload(true), { requestId: 'r', stream: true });
    const [first, usage] = parsed(events);
    expect(first).toMatchObject({
      object: 'chat.completion.chunk',
      choices: [{ delta: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }],
      usage: null,
    });
    expect(usage).toMatchObject({ choices: [], usage: USAGE });
  });
});
