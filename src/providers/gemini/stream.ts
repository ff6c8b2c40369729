/**
 * `streamGenerateContent?alt=sse` → ChatCompletionChunks. Each SSE event is a whole GenerateContentResponse
 * carrying the next parts; there is no terminator event, so a stream is complete only once a
 * candidate's finishReason arrived.
 */
import type { ChatCompletionChunk, ChunkDelta, FinishReason } from '../../wire/openai-chat.ts';
import { iterSseEvents } from '../shared/sse.ts';
import { UpstreamError, excerpt, invalidResponse } from '../shared/upstream-error.ts';
import type { ProviderTarget } from '../types.ts';
import { errorFromPayload, geminiErrorOf } from './errors.ts';
import {
  asGeminiResponse,
  blockedRefusal,
  finishReasonOf,
  isAnswerText,
  isFunctionCall,
  isThought,
  partsOf,
  stoppedRefusal,
  toolCallOf,
  usageMetadataOf,
  usageOf,
} from './output.ts';
import type { GeminiCandidate, GeminiPart, GeminiUsageMetadata } from './wire.ts';

/** What one stream remembers between its events. */
export interface StreamState {
  /** The first event's responseId (else a fresh id), for every chunk. */
  id: string;
  /** The first event's modelVersion, else the upstream model. */
  model: string;
  created: number;
  /** Events read so far. */
  events: number;
  /** Whether a chunk was yielded; the first one carries `role`. */
  started: boolean;
  /** The OpenAI index of the next tool call. */
  nextToolIndex: number;
  /** Whether a function call came, in any event: a later STOP then means 'tool_calls'. */
  sawFunctionCall: boolean;
  /** Set once a candidate's finishReason (or a prompt block) arrived. */
  finishReason: FinishReason | null;
  /** The last usage metadata with completion counts; events with only the prompt count are not kept. */
  usage: GeminiUsageMetadata | null;
}

/** A fresh state for one upstream stream. */
export function createStreamState(target: ProviderTarget): StreamState {
  return {
    id: `chatcmpl-${crypto.randomUUID()}`,
    model: target.upstreamModel,
    created: Math.floor(Date.now() / 1000),
    events: 0,
    started: false,
    nextToolIndex: 0,
    sawFunctionCall: false,
    finishReason: null,
    usage: null,
  };
}

/** Translates an SSE body; throws UpstreamError `broken_stream` when it ends before a finishReason. */
export async function* translateGeminiStream(source: AsyncIterable<Uint8Array | string>, target: ProviderTarget): AsyncGenerator<ChatCompletionChunk> {
  const state = createStreamState(target);
  for await (const sse of iterSseEvents(source)) yield* translateEvent(parseEvent(sse.data), state);
  if (state.finishReason === null) {
    throw new UpstreamError('broken_stream', `Upstream stream ended without a finishReason after ${state.events} events`);
  }
  if (state.usage !== null) yield { ...base(state), choices: [], usage: usageOf(state.usage) };
}

/** The chunks for one parsed event; an `{error}` object throws its UpstreamError. */
export function* translateEvent(data: unknown, state: StreamState): Generator<ChatCompletionChunk> {
  const error = geminiErrorOf(data);
  if (error !== null) throw errorFromPayload(error);
  const response = asGeminiResponse(data);
  if (state.events === 0) {
    if (typeof response.responseId === 'string') state.id = response.responseId;
    if (typeof response.modelVersion === 'string') state.model = response.modelVersion;
  }
  state.events += 1;
  const usage = usageMetadataOf(response);
  if (usage !== null && (usage.candidatesTokenCount !== undefined || usage.totalTokenCount !== undefined)) state.usage = usage;
  // Past the finish, an event can only add counts.
  if (state.finishReason !== null) return;
  const candidates = response.candidates ?? [];
  const blockReason = response.promptFeedback?.blockReason;
  if (candidates.length === 0 && typeof blockReason === 'string') {
    state.finishReason = 'content_filter';
    yield chunk(state, 0, { refusal: blockedRefusal(blockReason) }, 'content_filter');
  }
  for (const [position, candidate] of candidates.entries()) yield* candidateChunks(candidate, position, state);
}

function* candidateChunks(candidate: GeminiCandidate, position: number, state: StreamState): Generator<ChatCompletionChunk> {
  const index = typeof candidate.index === 'number' ? candidate.index : position;
  for (const part of partsOf(candidate)) {
    const delta = deltaOf(part, state);
    if (delta !== null) yield chunk(state, index, delta, null);
  }
  if (typeof candidate.finishReason !== 'string') return;
  const reason = finishReasonOf(candidate.finishReason, state.sawFunctionCall);
  state.finishReason = reason;
  yield chunk(state, index, reason === 'content_filter' ? { refusal: stoppedRefusal(candidate.finishReason) } : {}, reason);
}

// Gemini sends a function call whole, so its one delta carries the id, the name and all the arguments.
function deltaOf(part: GeminiPart, state: StreamState): ChunkDelta | null {
  if (isFunctionCall(part)) {
    state.sawFunctionCall = true;
    const { id, type, function: fn, extra_content } = toolCallOf(part);
    const call = { index: state.nextToolIndex, id, type, function: fn, ...(extra_content === undefined ? {} : { extra_content }) };
    state.nextToolIndex += 1;
    return { tool_calls: [call] };
  }
  // An empty text would be an empty chunk, and an empty first chunk forbids a retry.
  if (isThought(part)) return part.text === '' ? null : { reasoning_content: part.text };
  if (isAnswerText(part)) return part.text === '' ? null : { content: part.text };
  return null;
}

function chunk(state: StreamState, index: number, delta: ChunkDelta, finishReason: FinishReason | null): ChatCompletionChunk {
  const first = !state.started;
  state.started = true;
  return { ...base(state), choices: [{ index, delta: first ? { role: 'assistant', ...delta } : delta, finish_reason: finishReason, logprobs: null }] };
}

function base(state: StreamState): Omit<ChatCompletionChunk, 'choices'> {
  return { id: state.id, object: 'chat.completion.chunk', created: state.created, model: state.model };
}

function parseEvent(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch (err) {
    throw invalidResponse(`an SSE event is not JSON: ${excerpt(data)}`, err);
  }
}
