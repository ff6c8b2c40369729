/** Chat answers, whole and in chunks, the context the Responses translations are given, and the SDK's types of what they make. */
import type OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionChunk, ChunkDelta, ToolCall, Usage } from '../../../../src/wire/openai-chat.ts';
import type { ResponseContext } from '../../../../src/operations/responses/from-chat.ts';
import type { ResponsesRequest } from '../../../../src/wire/openai-responses.ts';

export const CREATED_AT = 1_767_225_600;
/** The clock the tests stop, in seconds: a completed response's `completed_at`. */
export const COMPLETED_AT = CREATED_AT + 3;

/** The context the route would give for a request with id `01JREQ`, run in the foreground and not stored. */
export function contextFor(request: Partial<ResponsesRequest> = {}, run: Partial<ResponseContext> = {}): ResponseContext {
  return {
    id: 'resp_01JREQ',
    model: 'svc-standard',
    createdAt: CREATED_AT,
    request: { model: 'svc-standard', input: 'Hi', ...request },
    background: false,
    store: false,
    previousResponseId: null,
    ...run,
  };
}

/**
 * The SDK's Response as OpenAI sends it, which the SDK's types narrow: `usage` is null until the
 * answer ended, and a failed response's `error.code` may be any code (the SDK lists OpenAI's own).
 */
export type SdkResponse = Omit<OpenAI.Responses.Response, 'usage' | 'error'> & {
  usage: OpenAI.Responses.ResponseUsage | null;
  error: { code: string; message: string } | null;
};
type WithSdkResponse<E> = E extends { response: OpenAI.Responses.Response } ? Omit<E, 'response'> & { response: SdkResponse } : E;
/** The SDK's stream events, with such a Response in those that carry one. */
export type SdkStreamEvent = WithSdkResponse<OpenAI.Responses.ResponseStreamEvent>;
/** The last event of a stream that completed. */
export type SdkCompletedEvent = Extract<SdkStreamEvent, { type: 'response.completed' }>;

export const USAGE: Usage = {
  prompt_tokens: 120,
  completion_tokens: 40,
  total_tokens: 160,
  prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 8 },
  completion_tokens_details: { reasoning_tokens: 12 },
};

/** One chunk of choice 0. */
export function chunk(delta: ChunkDelta, finishReason: string | null = null): ChatCompletionChunk {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'upstream-model',
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
  };
}

/** The usage-only chunk that ends a stream with include_usage. */
export function usageChunk(usage: Usage = USAGE): ChatCompletionChunk {
  return { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'upstream-model', choices: [], usage };
}

/** The completion a client of chat would assemble from the chunks: what chatToResponse is given for the same answer. */
export function assemble(chunks: ChatCompletionChunk[], usage: Usage = USAGE): ChatCompletion {
  let reasoning = '';
  let content = '';
  let refusal = '';
  let finishReason: string | null = null;
  const calls = new Map<number, ToolCall>();
  for (const { choices } of chunks) {
    for (const { delta, finish_reason } of choices) {
      reasoning += delta.reasoning_content ?? '';
      content += delta.content ?? '';
      refusal += delta.refusal ?? '';
      for (const piece of delta.tool_calls ?? []) {
        const call = calls.get(piece.index) ?? { id: piece.id ?? '', type: 'function', function: { name: '', arguments: '' } };
        call.function.name ||= piece.function?.name ?? '';
        call.function.arguments += piece.function?.arguments ?? '';
        calls.set(piece.index, call);
      }
      finishReason = finish_reason ?? finishReason;
    }
  }
  const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content: content === '' ? null : content };
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (refusal !== '') message.refusal = refusal;
  if (calls.size > 0) message.tool_calls = [...calls.values()];
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'upstream-model',
    choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
    usage,
  };
}

/** A stream with reasoning, text, and two tool calls whose arguments come in pieces. */
export const FULL_STREAM: ChatCompletionChunk[] = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ reasoning_content: 'The user wants ' }),
  chunk({ reasoning_content: 'the weather.' }),
  chunk({ content: 'Let me ' }),
  chunk({ content: 'check.' }),
  chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
  chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } }] }),
  chunk({}, 'tool_calls'),
  usageChunk(),
];

/** The SSE body OpenAI would send for these events. */
export function sseBody(events: ReadonlyArray<{ type: string }>): string {
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}
