/**
 * An OpenAI chat answer → Anthropic's Message: whole (chatToMessage), or as the stream events
 * Anthropic sends (MessageStreamTranslator). The mappings of stop reason and usage are shared.
 */
import { randomUUID } from 'node:crypto';
import { isRecord } from '../../wire/json.ts';
import { invalidResponse } from '../../providers/shared/upstream-error.ts';
import { signedCallId, signedIdOf } from '../signed-call-ids.ts';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChunkDelta,
  ResponseMessage,
  ThinkingBlock as ChatThinkingBlock,
  ToolCall,
  ToolCallDelta,
  Usage as ChatUsage,
} from '../../wire/openai-chat.ts';
import type {
  BlockDelta,
  ContentBlock,
  Message,
  MessageDeltaUsage,
  MessageStreamEvent,
  RedactedThinkingBlock,
  StopReason,
  ThinkingBlock,
  ToolUseBlock,
  Usage,
} from '../../wire/anthropic-messages.ts';

/** A message id: the completion's, with Anthropic's `msg_` prefix when it has none. */
export function messageIdOf(id: string): string {
  return id.startsWith('msg_') ? id : `msg_${id}`;
}

/** Anthropic's stop reason of a chat finish reason; `calledTools`: the answer holds tool calls. */
export function stopReasonOf(finishReason: string | null, calledTools: boolean): StopReason {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      // Some chat servers end a turn of tool calls with 'stop'; Anthropic clients run the calls on tool_use.
      return calledTools ? 'tool_use' : 'end_turn';
  }
}

/** The counts message_delta carries, and Usage shares. */
type TokenCounts = Omit<MessageDeltaUsage, 'server_tool_use'> & { input_tokens: number };

// Anthropic's input_tokens leaves out the prompt tokens read from and written to the cache, which
// OpenAI's prompt_tokens include; the three together are the prompt.
function tokenCounts(usage: ChatUsage | null | undefined): TokenCounts {
  const cacheRead = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = usage?.prompt_tokens_details?.cache_write_tokens ?? 0;
  const thinking = usage?.completion_tokens_details?.reasoning_tokens;
  return {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cacheRead - cacheWrite),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    output_tokens_details: thinking === undefined ? null : { thinking_tokens: thinking },
  };
}

// Anthropic's SDK takes the input and cache counts of message_delta over message_start's where
// they are not null: the real counts replace the estimate, and without them it stands.
function deltaUsageOf(usage: ChatUsage | null): MessageDeltaUsage {
  if (usage === null) {
    return {
      input_tokens: null,
      output_tokens: 0,
      cache_creation_input_tokens: null,
      cache_read_input_tokens: null,
      output_tokens_details: null,
      server_tool_use: null,
    };
  }
  return { ...tokenCounts(usage), server_tool_use: null };
}

/** Anthropic's usage of a chat usage (zero counts when the upstream reported none). */
export function usageOf(usage: ChatUsage | null | undefined): Usage {
  return { ...tokenCounts(usage), cache_creation: null, server_tool_use: null, service_tier: null, inference_geo: null, speed: null };
}

/** A non-streamed chat completion as Anthropic's Message; `model` is the name the client asked for. */
export function chatToMessage(completion: ChatCompletion, model: string): Message {
  const choice = completion.choices[0];
  const content = choice === undefined ? [] : contentOf(choice.message);
  return {
    id: messageIdOf(completion.id),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReasonOf(
      choice?.finish_reason ?? null,
      content.some((block) => block.type === 'tool_use'),
    ),
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: usageOf(completion.usage),
  };
}

// Anthropic's order: thinking, then text, then tool calls. A refusal is what the model said.
function contentOf(message: ResponseMessage): ContentBlock[] {
  const texts = [message.content, message.refusal].filter((text): text is string => typeof text === 'string' && text !== '');
  return [...thinkingOf(message), ...texts.map(textBlock), ...(message.tool_calls ?? []).map(toolUseOf)];
}

// Signed blocks come back whole; reasoning text alone (DeepSeek, vLLM…) is a block signed by no one.
function thinkingOf(message: ResponseMessage): Array<ThinkingBlock | RedactedThinkingBlock> {
  if (message.thinking_blocks !== undefined && message.thinking_blocks.length > 0) return message.thinking_blocks.map(thinkingBlockOf);
  const reasoning = message.reasoning_content;
  return typeof reasoning === 'string' && reasoning !== '' ? [{ type: 'thinking', thinking: reasoning, signature: '' }] : [];
}

function thinkingBlockOf(block: ChatThinkingBlock): ThinkingBlock | RedactedThinkingBlock {
  if (block.type === 'redacted_thinking') return { type: 'redacted_thinking', data: block.data ?? '' };
  return { type: 'thinking', thinking: block.thinking ?? '', signature: block.signature ?? '' };
}

function textBlock(text: string): ContentBlock {
  return { type: 'text', text, citations: null };
}

function toolUseOf(call: ToolCall): ToolUseBlock {
  return { type: 'tool_use', id: signedIdOf(call), name: call.function.name, input: inputOf(call.function.arguments), caller: { type: 'direct' } };
}

// Anthropic's tool input is always an object. Arguments that are not one (cut off at max_tokens,
// or a model's malformed call) become {}: the client still sees the call and answers it, and the
// tool's own check of its input tells the model what was missing.
function inputOf(json: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(json);
    return isRecord(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

/** The block a stream has open: the kind of output that it gathers. */
type OpenBlock =
  | { kind: 'text'; index: number }
  /** `whole`: its thinking_blocks entry (with the signature) arrived; more reasoning starts a new block. */
  | { kind: 'thinking'; index: number; whole: boolean }
  | { kind: 'tool_use'; index: number; call: number }
  | { kind: 'redacted_thinking'; index: number };

/** What one stream remembers between chunks. */
interface StreamState {
  started: boolean;
  finished: boolean;
  /** The index of the next block: 0, 1, 2… */
  nextIndex: number;
  open: OpenBlock | null;
  /** Tool-call indexes whose blocks are closed. */
  closedCalls: Set<number>;
  /** How many entries of the chunks' thinking_blocks have become blocks. */
  thinkingBlocks: number;
  calledTools: boolean;
  finishReason: string | null;
}

/**
 * Chat chunks → Anthropic's stream events: message_start first, then each block's start, deltas
 * and stop (one block open at a time: output of another kind closes it), then message_delta with
 * the stop reason and the usage, then message_stop. Every event has `type` as its first key.
 */
export class MessageStreamTranslator {
  readonly #id: string;
  readonly #model: string;
  readonly #inputTokens: number;
  readonly #state: StreamState = {
    started: false,
    finished: false,
    nextIndex: 0,
    open: null,
    closedCalls: new Set(),
    thinkingBlocks: 0,
    calledTools: false,
    finishReason: null,
  };

  /** `id` as for chatToMessage, `model` the name the client asked for, `inputTokens` the estimate message_start reports. */
  constructor(options: { id: string; model: string; inputTokens: number }) {
    this.#id = messageIdOf(options.id);
    this.#model = options.model;
    this.#inputTokens = options.inputTokens;
  }

  /** The events of one chunk (the first chunk's begin with message_start); nothing after finish. */
  push(chunk: ChatCompletionChunk): MessageStreamEvent[] {
    if (this.#state.finished) return [];
    const out = this.#start();
    for (const choice of chunk.choices) {
      this.#delta(choice.delta, out);
      if (choice.finish_reason !== null) this.#state.finishReason = choice.finish_reason;
    }
    return out;
  }

  /**
   * The closing events, once the usage is known (a chat stream sends it after the finish reason,
   * in a chunk of its own): the open block's stop, message_delta, message_stop. `usage` null: the
   * upstream reported none, and message_start's estimate stands.
   */
  finish(usage: ChatUsage | null): MessageStreamEvent[] {
    if (this.#state.finished) return [];
    const out = this.#start();
    this.#close(out);
    const state = this.#state;
    state.finished = true;
    out.push({
      type: 'message_delta',
      delta: { stop_reason: stopReasonOf(state.finishReason, state.calledTools), stop_sequence: null, stop_details: null, container: null },
      usage: deltaUsageOf(usage),
    });
    out.push({ type: 'message_stop' });
    return out;
  }

  #start(): MessageStreamEvent[] {
    if (this.#state.started) return [];
    this.#state.started = true;
    const message: Message = {
      id: this.#id,
      type: 'message',
      role: 'assistant',
      model: this.#model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: { ...usageOf(null), input_tokens: this.#inputTokens },
    };
    return [{ type: 'message_start', message }];
  }

  // Anthropic's order within a turn: thinking, text, tool calls.
  #delta(delta: ChunkDelta, out: MessageStreamEvent[]): void {
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') this.#reasoning(delta.reasoning_content, out);
    if (delta.thinking_blocks !== undefined) this.#thinkingBlocks(delta.thinking_blocks, out);
    for (const text of [delta.content, delta.refusal]) if (typeof text === 'string' && text !== '') this.#text(text, out);
    for (const call of delta.tool_calls ?? []) this.#toolCall(call, out);
  }

  #text(text: string, out: MessageStreamEvent[]): void {
    const open =
      this.#state.open?.kind === 'text'
        ? this.#state.open
        : this.#begin({ type: 'text', text: '', citations: null }, (index) => ({ kind: 'text', index }), out);
    out.push(deltaEvent(open.index, { type: 'text_delta', text }));
  }

  #reasoning(text: string, out: MessageStreamEvent[]): void {
    const open = this.#openThinking() ?? this.#beginThinking(out);
    out.push(deltaEvent(open.index, { type: 'thinking_delta', thinking: text }));
  }

  // Each chunk's thinking_blocks holds all of the message's blocks so far (the convention of
  // src/providers/anthropic/stream.ts): only the entries past those seen are new. A thinking
  // block whose text came as reasoning_content gets just its signature.
  #thinkingBlocks(blocks: ChatThinkingBlock[], out: MessageStreamEvent[]): void {
    for (const block of blocks.slice(this.#state.thinkingBlocks)) {
      if (block.type === 'redacted_thinking') {
        this.#begin({ type: 'redacted_thinking', data: block.data ?? '' }, (index) => ({ kind: 'redacted_thinking', index }), out);
        this.#close(out);
        continue;
      }
      let open = this.#openThinking();
      if (open === null) {
        open = this.#beginThinking(out);
        if (block.thinking) out.push(deltaEvent(open.index, { type: 'thinking_delta', thinking: block.thinking }));
      }
      if (block.signature) out.push(deltaEvent(open.index, { type: 'signature_delta', signature: block.signature }));
      open.whole = true;
    }
    this.#state.thinkingBlocks = Math.max(this.#state.thinkingBlocks, blocks.length);
  }

  #openThinking(): Extract<OpenBlock, { kind: 'thinking' }> | null {
    const open = this.#state.open;
    return open?.kind === 'thinking' && !open.whole ? open : null;
  }

  // A call's id and name come in its first piece, its arguments in pieces after.
  #toolCall(call: ToolCallDelta, out: MessageStreamEvent[]): void {
    const state = this.#state;
    let open = state.open?.kind === 'tool_use' && state.open.call === call.index ? state.open : null;
    if (open === null) {
      // An Anthropic block cannot reopen; chat streams finish one call before the next begins.
      if (state.closedCalls.has(call.index)) throw invalidResponse(`tool call ${call.index} continued after its block closed`);
      state.calledTools = true;
      const signature = (call.extra_content as ToolCall['extra_content'] | undefined)?.google?.thought_signature;
      const block: ToolUseBlock = {
        type: 'tool_use',
        id: signedCallId(call.id ?? `toolu_${randomUUID()}`, signature),
        name: call.function?.name ?? '',
        input: {},
        caller: { type: 'direct' },
      };
      open = this.#begin(block, (index) => ({ kind: 'tool_use', index, call: call.index }), out);
    }
    const json = call.function?.arguments;
    if (json !== undefined && json !== '') out.push(deltaEvent(open.index, { type: 'input_json_delta', partial_json: json }));
  }

  #beginThinking(out: MessageStreamEvent[]): Extract<OpenBlock, { kind: 'thinking' }> {
    return this.#begin({ type: 'thinking', thinking: '', signature: '' }, (index) => ({ kind: 'thinking', index, whole: false }), out);
  }

  /** Closes the open block, starts `block` at the next index, and makes `open(index)` the open block. */
  #begin<T extends OpenBlock>(block: ContentBlock, open: (index: number) => T, out: MessageStreamEvent[]): T {
    this.#close(out);
    const index = this.#state.nextIndex++;
    out.push({ type: 'content_block_start', index, content_block: block });
    const opened = open(index);
    this.#state.open = opened;
    return opened;
  }

  #close(out: MessageStreamEvent[]): void {
    const open = this.#state.open;
    if (open === null) return;
    out.push({ type: 'content_block_stop', index: open.index });
    if (open.kind === 'tool_use') this.#state.closedCalls.add(open.call);
    this.#state.open = null;
  }
}

function deltaEvent(index: number, delta: BlockDelta): MessageStreamEvent {
  return { type: 'content_block_delta', index, delta };
}
