/** Upstream SSE → ChatCompletionChunk, with a typed state across the events of one stream. */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ChatCompletionChunkSchema, type ChatCompletionChunk } from '../../wire/openai-chat.ts';
import type { ProviderTarget } from '../types.ts';
import { iterSseJson } from '../shared/sse.ts';
import { isRecord } from '../../wire/json.ts';
import { UpstreamError, invalidResponse } from '../shared/upstream-error.ts';
import { errorFromPayload, isErrorPayload } from './errors.ts';

/** What one stream remembers between its events. */
export interface StreamState {
  /** The first chunk's id, reused when a lenient server omits it later. */
  id: string;
  created: number;
  model: string;
  /** Chunks translated so far. */
  chunks: number;
  /** Whether `data: [DONE]` arrived. */
  done: boolean;
}

const chunkChecker = TypeCompiler.Compile(ChatCompletionChunkSchema);

/** A fresh state for one upstream stream. */
export function createStreamState(target: ProviderTarget): StreamState {
  return {
    id: `chatcmpl-${crypto.randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    model: target.upstreamModel,
    chunks: 0,
    done: false,
  };
}

/** Validates one upstream event into a chunk, filling omitted fields from the state; extra fields pass through. */
export function toChunk(data: unknown, state: StreamState): ChatCompletionChunk {
  if (!isRecord(data) || !Array.isArray(data.choices)) throw invalidResponse('stream event without a choices array');
  if (state.chunks === 0) {
    if (typeof data.id === 'string') state.id = data.id;
    if (typeof data.created === 'number') state.created = Math.trunc(data.created);
    if (typeof data.model === 'string') state.model = data.model;
  }
  const chunk: unknown = {
    ...data,
    id: typeof data.id === 'string' ? data.id : state.id,
    object: 'chat.completion.chunk',
    created: typeof data.created === 'number' ? Math.trunc(data.created) : state.created,
    model: typeof data.model === 'string' ? data.model : state.model,
    choices: data.choices.map((choice, position) => normaliseChoice(choice, position)),
  };
  if (!chunkChecker.Check(chunk)) {
    const first = chunkChecker.Errors(chunk).First();
    throw invalidResponse(first === undefined ? 'chunk schema mismatch' : `chunk ${first.path} ${first.message}`);
  }
  state.chunks += 1;
  return chunk;
}

/** Translates an upstream SSE body; throws UpstreamError `broken_stream` if it ends without `[DONE]`. */
export async function* translateStream(source: AsyncIterable<Uint8Array | string>, target: ProviderTarget): AsyncGenerator<ChatCompletionChunk> {
  const state = createStreamState(target);
  for await (const event of iterSseJson(source)) {
    if (event.type === 'done') {
      state.done = true;
      continue;
    }
    if (isErrorPayload(event.data)) {
      throw errorFromPayload(event.data, state.chunks === 0 ? 'server_error' : 'broken_stream');
    }
    yield toChunk(event.data, state);
  }
  if (!state.done) {
    throw new UpstreamError('broken_stream', `Upstream stream ended without [DONE] after ${state.chunks} chunks`);
  }
}

function normaliseChoice(choice: unknown, position: number): unknown {
  if (!isRecord(choice)) return choice;
  const delta = isRecord(choice.delta) ? choice.delta : {};
  return {
    ...choice,
    index: typeof choice.index === 'number' ? choice.index : position,
    delta: Array.isArray(delta.tool_calls) ? { ...delta, tool_calls: delta.tool_calls.map(normaliseToolCallDelta) } : delta,
    finish_reason: choice.finish_reason ?? null,
  };
}

// Some servers (older Ollama, llama.cpp) omit a tool call's `index`; its position in the list stands for it.
function normaliseToolCallDelta(call: unknown, position: number): unknown {
  return isRecord(call) && typeof call.index !== 'number' ? { ...call, index: position } : call;
}
