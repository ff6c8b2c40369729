/**
 * Anthropic's streamed events → ChatCompletionChunks. Content arrives in indexed blocks
 * (content_block_start, _delta, _stop); the state remembers what each block is, so that tool calls
 * get stable OpenAI indexes and thinking blocks come out whole, with their signatures, at their stop.
 */
import type { ChatCompletionChunk, ChunkDelta, FinishReason, ThinkingBlock, ToolCallDelta, Usage } from '../../wire/openai-chat.ts';
import { iterSseJson } from '../shared/sse.ts';
import { isRecord } from '../../wire/json.ts';
import { UpstreamError, excerpt, invalidResponse } from '../shared/upstream-error.ts';
import type { ProviderTarget } from '../types.ts';
import { errorDetailOf, errorFromEvent } from './errors.ts';
import { REFUSAL_MESSAGE, finishReasonOf } from './response.ts';
import { readUsage, usageOf, type AnthropicUsage } from '../../wire/anthropic-usage.ts';

/** What the stream remembers of one content block, by its Anthropic index. */
export type BlockState =
  | { kind: 'text' }
  | { kind: 'tool_use'; toolIndex: number; argumentsSent: boolean }
  | { kind: 'thinking'; thinking: string; signature: string }
  | { kind: 'redacted_thinking'; data: string }
  /** A block type the adapter does not translate (server tools, citations…): its events are skipped. */
  | { kind: 'ignored' };

/** What one stream remembers between its events. */
export interface StreamState {
  /** The message id from message_start; every chunk carries it. */
  id: string;
  model: string;
  created: number;
  /** The usage of message_start: the input side (with cache counts) and the output so far. */
  startUsage: AnthropicUsage | null;
  /** The last usage of message_delta: cumulative, so it replaces what came before, never adds to it. */
  deltaUsage: AnthropicUsage | null;
  blocks: Map<number, BlockState>;
  /** The thinking blocks completed so far, in order: each one's stop sends them all. */
  thinkingBlocks: ThinkingBlock[];
  /** Tool calls seen so far: the next tool_use block gets this OpenAI index. */
  toolCalls: number;
  /** Whether a chunk was yielded (the first carries the role). */
  yielded: boolean;
  stopReason: string | null;
  /** Whether the finish chunk was yielded. */
  finished: boolean;
  /** Whether message_stop arrived. */
  stopped: boolean;
}

type Json = Record<string, unknown>;

/** A fresh state for one upstream stream. */
export function createStreamState(target: ProviderTarget): StreamState {
  return {
    id: `chatcmpl-${crypto.randomUUID()}`,
    model: target.upstreamModel,
    created: Math.floor(Date.now() / 1000),
    startUsage: null,
    deltaUsage: null,
    blocks: new Map(),
    thinkingBlocks: [],
    toolCalls: 0,
    yielded: false,
    stopReason: null,
    finished: false,
    stopped: false,
  };
}

/** Translates an Anthropic SSE body; throws UpstreamError `broken_stream` if it ends without message_stop. */
export async function* translateStream(source: AsyncIterable<Uint8Array | string>, target: ProviderTarget): AsyncGenerator<ChatCompletionChunk> {
  const state = createStreamState(target);
  for await (const event of iterSseJson(source)) {
    // What follows message_stop is read and ignored: a body read to its end lets its connection go back to the pool.
    if (event.type !== 'json' || state.stopped) continue;
    if (!isRecord(event.data)) throw invalidResponse('a stream event is not a JSON object');
    // The data's own `type` names the event (Anthropic repeats it in `event:`, some compatible servers send only this).
    const type = typeof event.data.type === 'string' ? event.data.type : event.event;
    yield* translateEvent(type, event.data, state);
  }
  if (state.stopped) return;
  throw new UpstreamError('broken_stream', `Upstream stream ended without message_stop ${state.yielded ? 'after' : 'before'} its first output`);
}

/** The chunks one event produces (often none), updating the state. */
export function* translateEvent(type: string | null, data: Json, state: StreamState): Generator<ChatCompletionChunk, void> {
  switch (type) {
    case 'message_start':
      return onMessageStart(data, state);
    case 'content_block_start':
      return yield* onBlockStart(data, state);
    case 'content_block_delta':
      return yield* onBlockDelta(data, state);
    case 'content_block_stop':
      return yield* onBlockStop(data, state);
    case 'message_delta': {
      const delta = isRecord(data.delta) ? data.delta : {};
      if (typeof delta.stop_reason === 'string') state.stopReason = delta.stop_reason;
      state.deltaUsage = readUsage(data.usage) ?? state.deltaUsage;
      return yield* finish(state);
    }
    case 'message_stop': {
      yield* finish(state);
      state.stopped = true;
      const usage = streamUsage(state);
      if (usage !== null) yield { ...chunkOf(state, []), usage };
      return;
    }
    case 'error':
      throw errorFromEvent(errorDetailOf(data) ?? { type: 'unknown_error', message: excerpt(JSON.stringify(data)) });
    default:
      // ping, and event types added after this adapter was written.
      return;
  }
}

function onMessageStart(data: Json, state: StreamState): void {
  const message = isRecord(data.message) ? data.message : {};
  if (typeof message.id === 'string') state.id = message.id;
  if (typeof message.model === 'string') state.model = message.model;
  state.startUsage = readUsage(message.usage);
}

function* onBlockStart(data: Json, state: StreamState): Generator<ChatCompletionChunk, void> {
  const index = blockIndex(data);
  const block = isRecord(data.content_block) ? data.content_block : {};
  switch (block.type) {
    case 'text':
      state.blocks.set(index, { kind: 'text' });
      if (typeof block.text === 'string' && block.text !== '') yield deltaChunk(state, { content: block.text });
      return;
    case 'thinking': {
      const thinking = typeof block.thinking === 'string' ? block.thinking : '';
      state.blocks.set(index, { kind: 'thinking', thinking, signature: typeof block.signature === 'string' ? block.signature : '' });
      if (thinking !== '') yield deltaChunk(state, { reasoning_content: thinking });
      return;
    }
    case 'redacted_thinking':
      state.blocks.set(index, { kind: 'redacted_thinking', data: typeof block.data === 'string' ? block.data : '' });
      return;
    case 'tool_use': {
      if (typeof block.id !== 'string' || typeof block.name !== 'string') throw invalidResponse('a tool_use block without id or name');
      const toolIndex = state.toolCalls;
      state.toolCalls += 1;
      state.blocks.set(index, { kind: 'tool_use', toolIndex, argumentsSent: false });
      yield toolChunk(state, { index: toolIndex, id: block.id, type: 'function', function: { name: block.name, arguments: '' } });
      return;
    }
    default:
      state.blocks.set(index, { kind: 'ignored' });
  }
}

function* onBlockDelta(data: Json, state: StreamState): Generator<ChatCompletionChunk, void> {
  const block = knownBlock(data, state);
  const delta = isRecord(data.delta) ? data.delta : {};
  if (block.kind === 'text' && delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text !== '') {
    yield deltaChunk(state, { content: delta.text });
  } else if (block.kind === 'thinking' && delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && delta.thinking !== '') {
    block.thinking += delta.thinking;
    yield deltaChunk(state, { reasoning_content: delta.thinking });
  } else if (block.kind === 'thinking' && delta.type === 'signature_delta' && typeof delta.signature === 'string') {
    block.signature += delta.signature;
  } else if (block.kind === 'tool_use' && delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && delta.partial_json !== '') {
    block.argumentsSent = true;
    yield toolChunk(state, { index: block.toolIndex, function: { arguments: delta.partial_json } });
  }
  // citations_delta, and deltas of ignored blocks, add nothing OpenAI's format carries.
}

// Every delta with `thinking_blocks` carries all of the message's blocks so far: a client that
// assembles the stream keeps the last value of a field it does not know (the openai SDK's stream
// helper does), and must end with every block and signature to send them back on the next turn.
function* onBlockStop(data: Json, state: StreamState): Generator<ChatCompletionChunk, void> {
  const block = knownBlock(data, state);
  if (block.kind === 'thinking' || block.kind === 'redacted_thinking') {
    state.thinkingBlocks.push(
      block.kind === 'thinking' ? { type: 'thinking', thinking: block.thinking, signature: block.signature } : { type: 'redacted_thinking', data: block.data },
    );
    yield deltaChunk(state, { thinking_blocks: [...state.thinkingBlocks] });
  } else if (block.kind === 'tool_use' && !block.argumentsSent) {
    // A call without input streams no JSON at all; '{}' keeps its arguments parseable, as the non-streamed answer is.
    yield toolChunk(state, { index: block.toolIndex, function: { arguments: '{}' } });
  }
}

function blockIndex(data: Json): number {
  if (typeof data.index !== 'number') throw invalidResponse('a content block event without an index');
  return data.index;
}

function knownBlock(data: Json, state: StreamState): BlockState {
  const index = blockIndex(data);
  const block = state.blocks.get(index);
  if (block === undefined) throw invalidResponse(`an event for content block ${index}, which never started`);
  return block;
}

function* finish(state: StreamState): Generator<ChatCompletionChunk, void> {
  if (state.finished) return;
  state.finished = true;
  const reason: FinishReason = finishReasonOf(state.stopReason);
  const delta: ChunkDelta = state.stopReason === 'refusal' ? { refusal: REFUSAL_MESSAGE } : {};
  yield chunkOf(state, [{ index: 0, delta: firstDelta(state, delta), finish_reason: reason }]);
}

// message_delta may repeat input and cache counts; where it does, its (cumulative) values win.
function streamUsage(state: StreamState): Usage | null {
  if (state.startUsage === null && state.deltaUsage === null) return null;
  return usageOf({ ...state.startUsage, ...state.deltaUsage });
}

function deltaChunk(state: StreamState, delta: ChunkDelta): ChatCompletionChunk {
  return chunkOf(state, [{ index: 0, delta: firstDelta(state, delta), finish_reason: null }]);
}

function toolChunk(state: StreamState, call: ToolCallDelta): ChatCompletionChunk {
  return deltaChunk(state, { tool_calls: [call] });
}

function firstDelta(state: StreamState, delta: ChunkDelta): ChunkDelta {
  const first = !state.yielded;
  state.yielded = true;
  return first ? { role: 'assistant', ...delta } : delta;
}

function chunkOf(state: StreamState, choices: ChatCompletionChunk['choices']): ChatCompletionChunk {
  return { id: state.id, object: 'chat.completion.chunk', created: state.created, model: state.model, choices };
}
