/**
 * Chat completions in the response cache. A non-streamed answer is kept as its completion, a
 * streamed one as its chunks (without the per-request `usage` field and usage chunk, which
 * `stream_options` decides): a hit of the same kind replays them exactly, and one of the other
 * kind is converted, a stream into one completion, a completion into one chunk per choice.
 */
import type { ChatCompletion, ChatCompletionChunk, ToolCall, Usage } from '../../wire/openai-chat.ts';
import type { CachedAnswer, KeptCacheAnswer } from '../../infra/cache/response-cache.ts';
import type { OperationCache, ReplayEvent } from '../operation-cache.ts';
import type { ChatPayload } from './payload.ts';

/** A chat answer as kept: exactly one of the two. */
type ChatAnswer = { completion: Omit<ChatCompletion, 'usage'> } | { chunks: ChatCompletionChunk[] };

// Not part of what decides the answer: who asked, and what they tagged it with.
const NOT_IN_KEY = new Set(['user', 'metadata']);

function keepCompletion(payload: string): KeptCacheAnswer {
  const { request_id: _requestId, usage, ...completion } = JSON.parse(payload) as ChatCompletion & { request_id?: string };
  return { model: completion.model, usage: usage as Usage, answer: { completion } satisfies ChatAnswer };
}

function keepChunks(done: string, emitted: readonly string[]): KeptCacheAnswer | null {
  const chunks: ChatCompletionChunk[] = [];
  for (const text of emitted) {
    const { usage: _usage, ...chunk } = JSON.parse(text) as ChatCompletionChunk;
    if (chunk.choices.length > 0) chunks.push(chunk);
  }
  const last = chunks.at(-1);
  if (!last) return null;
  const { usage } = JSON.parse(done) as { usage: Usage };
  return { model: last.model, usage, answer: { chunks } satisfies ChatAnswer };
}

/** A stream's chunks as one completion, as the SDKs accumulate them. */
function completionOf(chunks: readonly ChatCompletionChunk[]): Omit<ChatCompletion, 'usage'> {
  const first = chunks[0] as ChatCompletionChunk;
  const choices = new Map<number, { content: string | null; role: string; finish: string | null; calls: Map<number, ToolCall> }>();
  for (const chunk of chunks) {
    for (const { index, delta, finish_reason } of chunk.choices) {
      const choice = choices.get(index) ?? { content: null, role: 'assistant', finish: null, calls: new Map<number, ToolCall>() };
      choices.set(index, choice);
      if (delta.role) choice.role = delta.role;
      if (typeof delta.content === 'string') choice.content = (choice.content ?? '') + delta.content;
      for (const part of delta.tool_calls ?? []) {
        const call = choice.calls.get(part.index) ?? { id: '', type: 'function' as const, function: { name: '', arguments: '' } };
        choice.calls.set(part.index, call);
        if (part.id) call.id = part.id;
        if (part.function?.name) call.function.name += part.function.name;
        if (part.function?.arguments) call.function.arguments += part.function.arguments;
      }
      if (finish_reason !== null) choice.finish = finish_reason;
    }
  }
  return {
    id: first.id,
    object: 'chat.completion',
    created: first.created,
    model: first.model,
    choices: [...choices].map(([index, choice]) => ({
      index,
      message: { role: choice.role, content: choice.content, refusal: null, ...(choice.calls.size > 0 ? { tool_calls: [...choice.calls.values()] } : {}) },
      finish_reason: choice.finish,
      logprobs: null,
    })),
  };
}

/** A completion as a stream: one chunk per choice, carrying its whole message. */
function chunksOf(completion: Omit<ChatCompletion, 'usage'>): ChatCompletionChunk[] {
  return completion.choices.map(({ index, message, finish_reason }) => ({
    id: completion.id,
    object: 'chat.completion.chunk',
    created: completion.created,
    model: completion.model,
    choices: [
      {
        index,
        delta: {
          role: message.role,
          content: message.content,
          ...(message.tool_calls ? { tool_calls: message.tool_calls.map((call, i) => ({ index: i, ...call })) } : {}),
        },
        finish_reason,
        logprobs: null,
      },
    ],
  }));
}

/** The stream's events as runStream (run.ts) sends them: `usage: null` on each chunk and a usage chunk when the client asked for usage. */
function streamEvents(chunks: readonly ChatCompletionChunk[], usage: Usage, includeUsage: boolean): ReplayEvent[] {
  const events: ReplayEvent[] = chunks.map((chunk) => ({ type: 'chunk', payload: JSON.stringify(includeUsage ? { ...chunk, usage: null } : chunk) }));
  const last = chunks.at(-1);
  if (includeUsage && last) {
    const usageChunk = { id: last.id, object: 'chat.completion.chunk', created: last.created, model: last.model, choices: [], usage };
    events.push({ type: 'chunk', payload: JSON.stringify(usageChunk) });
  }
  events.push({ type: 'done', payload: JSON.stringify({ usage, usage_source: 'provider' }) });
  return events;
}

/** The chat completion's response cache. */
export const chatCache: OperationCache<ChatPayload> = {
  request: (payload) => Object.fromEntries(Object.entries(payload.body).filter(([name]) => !NOT_IN_KEY.has(name))),
  // Absent or null, the temperature is the provider's default, which is 1 for OpenAI, Anthropic and Gemini alike.
  samples: (payload) => payload.body.temperature === undefined || payload.body.temperature === null || payload.body.temperature > 0,
  keep: (final, emitted) => (final.type === 'result' ? keepCompletion(final.payload) : keepChunks(final.payload, emitted)),
  replay(cached: CachedAnswer, payload, job) {
    const answer = cached.answer as ChatAnswer;
    if (job.stream) {
      const chunks = 'chunks' in answer ? answer.chunks : chunksOf(answer.completion);
      return streamEvents(chunks, cached.usage, payload.includeUsage);
    }
    const completion = 'completion' in answer ? answer.completion : completionOf(answer.chunks);
    return [{ type: 'result', payload: JSON.stringify({ ...completion, usage: cached.usage, request_id: job.requestId }) }];
  },
};
