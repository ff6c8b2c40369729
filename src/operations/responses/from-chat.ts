/**
 * A chat answer → a Responses API answer: a ChatCompletion → a Response object, and a stream of
 * ChatCompletionChunks → the Responses streaming events. Both build the same output items, in the
 * order a chat answer holds them: the reasoning, the message (its text, then a refusal), then one
 * function_call per tool call; a stream that sends them in that order ends with the very Response
 * that chatToResponse makes of the same answer.
 *
 * Item ids are made from the response id and the item's place in `output`, so that both
 * translations name an item alike. What a provider needs back on the next turn rides where a
 * Responses client sends it back: Anthropic's signed thinking blocks in the reasoning item's
 * `encrypted_content`, Gemini's thought signatures in the function call's `call_id`. A call of a
 * namespace's function is named as OpenAI names it, by the function's own `name` and its
 * `namespace`. Not translated: log probabilities and annotations.
 */
import type { ChatCompletion, ChatCompletionChunk, ThinkingBlock, ToolCall, ToolCallDelta, Usage } from '../../wire/openai-chat.ts';
import { signedCallId, signedIdOf } from '../signed-call-ids.ts';
import { carriedThinking, carryThinking } from './carried-thinking.ts';
import { callNameOf, namespacedNames, type CallName, type NamespacedNames } from './namespaced-names.ts';
import type {
  FunctionCallItem,
  FunctionTool,
  IncompleteReason,
  ItemStatus,
  NamespaceMember,
  OutputItem,
  OutputMessage,
  OutputRefusal,
  OutputText,
  ReasoningItem,
  ReasoningText,
  RequestTool,
  Response,
  ResponseError,
  ResponseStatus,
  ResponseStreamEvent,
  ResponseUsage,
  ResponsesRequest,
  TextFormat,
} from '../../wire/openai-responses.ts';

/**
 * What a translation of one request's answer is told: the response's id (`resp_<request id>`), the
 * model to report, its creation time in seconds, the request it answers, and how the gateway runs
 * it: in the background or not, stored or not (the caller's decision, which the response states),
 * and the response it continues.
 */
export interface ResponseContext {
  id: string;
  model: string;
  createdAt: number;
  request: ResponsesRequest;
  background: boolean;
  store: boolean;
  previousResponseId: string | null;
  /** The first event's `sequence_number` (0 unless given): a background stream begins at 1, after its response.queued. */
  firstSequenceNumber?: number;
}

/** Where a response stands: its status, why it is incomplete, and why it failed. */
interface State {
  status: ResponseStatus;
  reason: IncompleteReason | null;
  error: ResponseError | null;
}

/** How an answer ended: completed, or cut short by the token limit or a content filter. */
interface Ending extends State {
  status: 'completed' | 'incomplete';
}

function endingOf(finishReason: string | null | undefined): Ending {
  if (finishReason === 'length') return { status: 'incomplete', reason: 'max_output_tokens', error: null };
  if (finishReason === 'content_filter') return { status: 'incomplete', reason: 'content_filter', error: null };
  return { status: 'completed', reason: null, error: null };
}

/** Translates a completion; an answer cut short leaves its last item `incomplete`. */
export function chatToResponse(completion: ChatCompletion, context: ResponseContext): Response {
  const choice = completion.choices.find((candidate) => candidate.index === 0);
  const message = choice?.message;
  const output: OutputItem[] = [];
  const thinking = message?.thinking_blocks ?? [];
  if (message?.reasoning_content || thinking.length > 0) {
    const item: ReasoningItem = {
      ...reasoningItem(context, output.length),
      content: message?.reasoning_content ? [reasoningText(message.reasoning_content)] : [],
    };
    if (thinking.length > 0) item.encrypted_content = carryThinking(thinking);
    output.push(item);
  }
  const content: OutputMessage['content'] = [];
  if (message?.content) content.push(outputText(message.content));
  if (message?.refusal) content.push(outputRefusal(message.refusal));
  if (content.length > 0) output.push({ ...messageItem(context, output.length), content });
  const names = namespacedNames(context.request.tools);
  for (const call of message?.tool_calls ?? []) {
    output.push({ ...functionCallItem(context, output.length, signedIdOf(call), callNameOf(call.function.name, names)), arguments: call.function.arguments });
  }
  const ending = endingOf(choice?.finish_reason);
  output.forEach((item, i) => (item.status = i === output.length - 1 ? ending.status : 'completed'));
  return responseOf(context, ending, output, completion.usage == null ? null : usageOf(completion.usage));
}

/** The response in a state other than its answer's end: no output (unless given), no usage (unless given), and the error of a failed one. */
export function responseSnapshot(
  context: ResponseContext,
  status: 'queued' | 'in_progress' | 'cancelled' | 'failed',
  extra: { error?: ResponseError | null; output?: OutputItem[]; usage?: ResponseUsage } = {},
): Response {
  return responseOf(context, { status, reason: null, error: extra.error ?? null }, extra.output ?? [], extra.usage ?? null);
}

/** The first event of a background stream: the response, queued. */
export function queuedEvent(context: ResponseContext): ResponseStreamEvent {
  return { type: 'response.queued', sequence_number: 0, response: responseSnapshot(context, 'queued') };
}

// Chat's `prompt_tokens` already include the cached ones, as `input_tokens` do.
function usageOf(usage: Usage): ResponseUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: {
      cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
      cache_write_tokens: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens,
  };
}

function itemId(context: ResponseContext, prefix: 'rs' | 'msg' | 'fc' | 'call', outputIndex: number): string {
  const base = context.id.startsWith('resp_') ? context.id.slice('resp_'.length) : context.id;
  return `${prefix}_${base}_${outputIndex}`;
}

const reasoningItem = (context: ResponseContext, outputIndex: number): ReasoningItem => ({
  type: 'reasoning',
  id: itemId(context, 'rs', outputIndex),
  status: 'in_progress',
  summary: [],
  content: [],
});
const messageItem = (context: ResponseContext, outputIndex: number): OutputMessage => ({
  type: 'message',
  id: itemId(context, 'msg', outputIndex),
  status: 'in_progress',
  role: 'assistant',
  content: [],
});
const functionCallItem = (context: ResponseContext, outputIndex: number, callId: string, name: CallName): FunctionCallItem => ({
  type: 'function_call',
  id: itemId(context, 'fc', outputIndex),
  status: 'in_progress',
  call_id: callId,
  ...name,
  arguments: '',
});
const reasoningText = (text: string): ReasoningText => ({ type: 'reasoning_text', text });
const outputText = (text: string): OutputText => ({ type: 'output_text', text, annotations: [], logprobs: [] });
const outputRefusal = (refusal: string): OutputRefusal => ({ type: 'refusal', refusal });

/**
 * The Response object: the output with the request's settings echoed, as OpenAI echoes them, and
 * OpenAI's defaults for those the request left out. Chat takes no penalties, log probabilities or
 * service tier from a Responses request (responsesToChat forwards none), so the neutral values
 * applied.
 */
function responseOf(context: ResponseContext, state: State, output: OutputItem[], usage: ResponseUsage | null): Response {
  const { request } = context;
  const response: Response = {
    id: context.id,
    object: 'response',
    created_at: context.createdAt,
    status: state.status,
    background: context.background,
    completed_at: state.status === 'completed' ? Math.floor(Date.now() / 1000) : null,
    conversation: null,
    error: state.error,
    incomplete_details: state.reason === null ? null : { reason: state.reason },
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    max_tool_calls: request.max_tool_calls ?? null,
    model: context.model,
    moderation: null,
    output,
    output_text: output
      .flatMap((item) => (item.type === 'message' ? item.content : []))
      .map((part) => (part.type === 'output_text' ? part.text : ''))
      .join(''),
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    presence_penalty: 0,
    frequency_penalty: 0,
    previous_response_id: context.previousResponseId,
    prompt: null,
    prompt_cache_key: request.prompt_cache_key ?? null,
    prompt_cache_retention: null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    safety_identifier: request.safety_identifier ?? null,
    service_tier: 'default',
    store: context.store,
    temperature: request.temperature ?? 1,
    text: { format: textFormatOf(request), verbosity: request.text?.verbosity ?? 'medium' },
    tool_choice: toolChoiceOf(request),
    tools: toolsOf(request),
    top_logprobs: request.top_logprobs ?? 0,
    top_p: request.top_p ?? 1,
    truncation: request.truncation ?? 'disabled',
    usage,
    metadata: request.metadata ?? {},
  };
  if (request.user !== undefined) response.user = request.user;
  return response;
}

function textFormatOf(request: ResponsesRequest): TextFormat {
  const format = request.text?.format;
  if (format?.type === 'json_object') return { type: 'json_object' };
  if (format?.type !== 'json_schema' || format.name === undefined || format.schema === undefined) return { type: 'text' };
  const echoed: TextFormat = { type: 'json_schema', name: format.name, schema: format.schema, strict: format.strict ?? null };
  if (format.description !== undefined) echoed.description = format.description;
  return echoed;
}

// responsesToChat dropped hosted tools and refused every other tool and tool choice but functions
// and namespaces; these echo what it served.
function toolsOf(request: ResponsesRequest): Response['tools'] {
  return (request.tools ?? []).flatMap((tool): Response['tools'] => {
    if (tool.name === undefined) return [];
    if (tool.type === 'function') return [functionToolOf(tool, tool.name)];
    if (tool.type !== 'namespace') return [];
    return [
      {
        type: 'namespace',
        name: tool.name,
        description: tool.description ?? '',
        tools: (tool.tools ?? []).map((member) => functionToolOf(member, member.name)),
      },
    ];
  });
}

function functionToolOf(tool: RequestTool | NamespaceMember, name: string): FunctionTool {
  return { type: 'function', name, description: tool.description ?? null, parameters: tool.parameters ?? null, strict: tool.strict ?? null };
}

function toolChoiceOf(request: ResponsesRequest): Response['tool_choice'] {
  const choice = request.tool_choice;
  if (choice === undefined) return 'auto';
  if (typeof choice === 'string') return choice;
  return { type: 'function', name: choice.name ?? '' };
}

/** A tool call being streamed, by its index in the chunks. */
interface StreamedCall {
  item: FunctionCallItem;
  outputIndex: number;
}

/** What one stream's translation remembers between chunks. */
interface StreamState {
  /** The next event's `sequence_number`. */
  sequence: number;
  /** The output so far, in order; while `open`, the last item is still being streamed. */
  output: OutputItem[];
  open: boolean;
  calls: Map<number, StreamedCall>;
  /** How many of the chunks' thinking_blocks are on reasoning items already. */
  thinkingCarried: number;
  finishReason: string | null;
}

/**
 * Turns one stream of chunks into Responses events: `start()` before the first chunk, `push()`
 * for each, `finish()` with the usage at the end. Items are never interleaved: content for
 * another item closes the open one. A tool call whose pieces come back after another item began
 * (no chat provider sends them so) gets them in the final Response only.
 */
export class ResponseStreamTranslator {
  readonly #context: ResponseContext;
  readonly #names: NamespacedNames;
  readonly #state: StreamState;

  constructor(context: ResponseContext) {
    this.#context = context;
    this.#names = namespacedNames(context.request.tools);
    this.#state = { sequence: context.firstSequenceNumber ?? 0, output: [], open: false, calls: new Map(), thinkingCarried: 0, finishReason: null };
  }

  /** `response.created` and `response.in_progress`, with the empty response. */
  start(): ResponseStreamEvent[] {
    return [
      { type: 'response.created', sequence_number: this.#next(), response: responseSnapshot(this.#context, 'in_progress') },
      { type: 'response.in_progress', sequence_number: this.#next(), response: responseSnapshot(this.#context, 'in_progress') },
    ];
  }

  /** The events of one chunk; a usage-only chunk has none. */
  push(chunk: ChatCompletionChunk): ResponseStreamEvent[] {
    const events: ResponseStreamEvent[] = [];
    const choice = chunk.choices.find((candidate) => candidate.index === 0);
    if (choice === undefined) return events;
    const { delta } = choice;
    if (delta.reasoning_content) this.#reasoningDelta(delta.reasoning_content, events);
    if (delta.thinking_blocks) this.#thinkingBlocks(delta.thinking_blocks, events);
    if (delta.content) this.#messageDelta('output_text', delta.content, events);
    if (delta.refusal) this.#messageDelta('refusal', delta.refusal, events);
    for (const call of delta.tool_calls ?? []) this.#toolCallDelta(call, events);
    if (choice.finish_reason) this.#state.finishReason = choice.finish_reason;
    return events;
  }

  /** Closes the open item and ends with `response.completed`, or `response.incomplete` when the answer was cut short. */
  finish(usage: Usage): ResponseStreamEvent[] {
    const events: ResponseStreamEvent[] = [];
    const ending = endingOf(this.#state.finishReason);
    this.#closeItem(ending.status, events);
    const response = responseOf(this.#context, ending, structuredClone(this.#state.output), usageOf(usage));
    const sequence_number = this.#next();
    events.push(
      ending.status === 'completed' ? { type: 'response.completed', sequence_number, response } : { type: 'response.incomplete', sequence_number, response },
    );
    return events;
  }

  #next(): number {
    return this.#state.sequence++;
  }

  #current(): OutputItem | undefined {
    return this.#state.open ? this.#state.output.at(-1) : undefined;
  }

  #openItem<T extends OutputItem>(item: T, events: ResponseStreamEvent[]): T {
    this.#closeItem('completed', events);
    this.#state.output.push(item);
    this.#state.open = true;
    events.push({
      type: 'response.output_item.added',
      sequence_number: this.#next(),
      output_index: this.#state.output.length - 1,
      item: structuredClone(item),
    });
    return item;
  }

  #closeItem(status: ItemStatus, events: ResponseStreamEvent[]): void {
    const item = this.#current();
    if (item === undefined) return;
    const outputIndex = this.#state.output.length - 1;
    if (item.type === 'function_call') {
      events.push({
        type: 'response.function_call_arguments.done',
        sequence_number: this.#next(),
        item_id: item.id,
        output_index: outputIndex,
        name: item.name,
        arguments: item.arguments,
      });
    } else if (item.content.length > 0) {
      this.#closePart(item, item.content.length - 1, events);
    }
    item.status = status;
    this.#state.open = false;
    events.push({ type: 'response.output_item.done', sequence_number: this.#next(), output_index: outputIndex, item: structuredClone(item) });
  }

  /** Announces the part just added to the open item. */
  #partAdded(item: OutputMessage | ReasoningItem, events: ResponseStreamEvent[]): void {
    const contentIndex = item.content.length - 1;
    const part = item.content[contentIndex];
    if (part === undefined) return;
    events.push({
      type: 'response.content_part.added',
      sequence_number: this.#next(),
      item_id: item.id,
      output_index: this.#state.output.length - 1,
      content_index: contentIndex,
      part: structuredClone(part),
    });
  }

  #closePart(item: OutputMessage | ReasoningItem, contentIndex: number, events: ResponseStreamEvent[]): void {
    const part = item.content[contentIndex];
    if (part === undefined) return;
    const at = { item_id: item.id, output_index: this.#state.output.length - 1, content_index: contentIndex };
    if (part.type === 'output_text') events.push({ type: 'response.output_text.done', sequence_number: this.#next(), ...at, text: part.text, logprobs: [] });
    else if (part.type === 'refusal') events.push({ type: 'response.refusal.done', sequence_number: this.#next(), ...at, refusal: part.refusal });
    else events.push({ type: 'response.reasoning_text.done', sequence_number: this.#next(), ...at, text: part.text });
    events.push({ type: 'response.content_part.done', sequence_number: this.#next(), ...at, part: structuredClone(part) });
  }

  #reasoningDelta(delta: string, events: ResponseStreamEvent[]): void {
    let item = this.#current();
    if (item?.type !== 'reasoning') item = this.#openItem(reasoningItem(this.#context, this.#state.output.length), events);
    let part = item.content[0];
    if (part === undefined) {
      part = reasoningText('');
      item.content.push(part);
      this.#partAdded(item, events);
    }
    part.text += delta;
    events.push({
      type: 'response.reasoning_text.delta',
      sequence_number: this.#next(),
      item_id: item.id,
      output_index: this.#state.output.length - 1,
      content_index: 0,
      delta,
    });
  }

  // Each chunk's thinking_blocks holds every block so far (src/providers/anthropic/stream.ts): the
  // ones past those carried already go on the reasoning item being streamed, or on one of their own
  // (a redacted block comes with no text before it).
  #thinkingBlocks(blocks: ThinkingBlock[], events: ResponseStreamEvent[]): void {
    const fresh = blocks.slice(this.#state.thinkingCarried);
    if (fresh.length === 0) return;
    let item = this.#current();
    if (item?.type !== 'reasoning') item = this.#openItem(reasoningItem(this.#context, this.#state.output.length), events);
    item.encrypted_content = carryThinking([...(carriedThinking(item.encrypted_content) ?? []), ...fresh]);
    this.#state.thinkingCarried = blocks.length;
  }

  #messageDelta(type: 'output_text' | 'refusal', delta: string, events: ResponseStreamEvent[]): void {
    let item = this.#current();
    if (item?.type !== 'message') item = this.#openItem(messageItem(this.#context, this.#state.output.length), events);
    let part = item.content.at(-1);
    if (part?.type !== type) {
      if (part !== undefined) this.#closePart(item, item.content.length - 1, events);
      part = type === 'output_text' ? outputText('') : outputRefusal('');
      item.content.push(part);
      this.#partAdded(item, events);
    }
    const at = { item_id: item.id, output_index: this.#state.output.length - 1, content_index: item.content.length - 1 };
    if (part.type === 'output_text') {
      part.text += delta;
      events.push({ type: 'response.output_text.delta', sequence_number: this.#next(), ...at, delta, logprobs: [] });
    } else {
      part.refusal += delta;
      events.push({ type: 'response.refusal.delta', sequence_number: this.#next(), ...at, delta });
    }
  }

  #toolCallDelta(delta: ToolCallDelta, events: ResponseStreamEvent[]): void {
    let call = this.#state.calls.get(delta.index);
    if (call === undefined) {
      const outputIndex = this.#state.output.length;
      const signature = (delta.extra_content as ToolCall['extra_content'] | undefined)?.google?.thought_signature;
      const item = functionCallItem(
        this.#context,
        outputIndex,
        signedCallId(delta.id ?? itemId(this.#context, 'call', outputIndex), signature),
        callNameOf(delta.function?.name ?? '', this.#names),
      );
      call = { item: this.#openItem(item, events), outputIndex };
      this.#state.calls.set(delta.index, call);
    }
    if (call.item.name === '' && delta.function?.name) Object.assign(call.item, callNameOf(delta.function.name, this.#names));
    const piece = delta.function?.arguments ?? '';
    if (piece === '') return;
    call.item.arguments += piece;
    if (this.#current() !== call.item) return;
    events.push({
      type: 'response.function_call_arguments.delta',
      sequence_number: this.#next(),
      item_id: call.item.id,
      output_index: call.outputIndex,
      delta: piece,
    });
  }
}
