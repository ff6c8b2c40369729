/**
 * A Responses API request → a chat request. The gateway stores nothing, so the translation is
 * stateless: the whole conversation comes in `input`, and what would need a stored response,
 * conversation or item is refused with a 400 that says what to send instead. Uploaded files, which
 * chat cannot express, are refused with a 422; tools are translated by tools.ts (hosted ones are
 * dropped). Errors name the parameter as the client sent it (`input[3].content[0].file_id`), not as
 * the chat request has it.
 *
 * Accepted and not forwarded, on purpose: `metadata` (the gateway's own, not the model's), `store`
 * (nothing is stored: the response says `store: false`), `include` (of what it names, only a
 * reasoning item's `encrypted_content` is ever made, and that is always sent), `truncation` (an
 * overlong input is refused, as with `disabled`), `max_tool_calls` (it bounds hosted tools, and
 * none are served), `reasoning.summary` (reasoning comes as text, not summarized),
 * `stream_options` (its one option pads events against side channels, which are not padded), and
 * `text.verbosity`, `prompt_cache_key` and `service_tier` (no chat provider but OpenAI takes them,
 * and the other providers' lists of parameters would refuse the request).
 */
import { InvalidValueError, MissingRequiredFieldError, UnsupportedParameterError } from '../../errors/gateway-error.ts';
import type { ChatMessage, ChatRequest, ContentPart, ResponseFormat, ThinkingBlock } from '../../wire/openai-chat.ts';
import { callWithSignature, splitCallId } from '../signed-call-ids.ts';
import { carriedThinking } from './carried-thinking.ts';
import { carriedSummary, FOREIGN_COMPACTION, SUMMARY_PREFIX } from './compaction-summary.ts';
import { chatToolName } from './namespaced-names.ts';
import { chatToolsOf } from './tools.ts';
import type { InputContentPart, InputItem, RequestTextFormat, ResponsesRequest } from '../../wire/openai-responses.ts';

const STATELESS = "This gateway keeps no conversations: continue one with 'previous_response_id', or send the whole of it in 'input'";

/** Translates a validated request; throws a GatewayError for what cannot be served. */
export function responsesToChat(request: ResponsesRequest): { model: string; stream: boolean; chat: ChatRequest } {
  refuseUnserved(request);
  const chat: ChatRequest = { messages: messagesOf(request), ...settingsOf(request) };
  // The route names the dropped hosted tools; the chat request only goes without them.
  const { dropped: _dropped, ...tools } = chatToolsOf(request);
  Object.assign(chat, tools);
  const format = responseFormatOf(request.text?.format);
  if (format !== undefined) chat.response_format = format;
  return { model: request.model, stream: request.stream === true, chat };
}

function refuseUnserved(request: ResponsesRequest): void {
  if (request.conversation != null) throw new InvalidValueError('conversation', `${STATELESS} instead of 'conversation'.`);
  if (request.prompt != null)
    throw new InvalidValueError(
      'prompt',
      "Prompt templates stored at OpenAI ('prompt') are not available on this gateway: send the prompt's text in 'instructions' and 'input'.",
    );
  if (request.top_logprobs != null && request.top_logprobs > 0)
    throw new UnsupportedParameterError('top_logprobs', request.model, 'log probabilities are not returned by /v1/responses');
}

/** The sampling and limit settings chat names differently or the same; absent and null ones are left out. */
function settingsOf(request: ResponsesRequest): Partial<ChatRequest> {
  const settings: Partial<ChatRequest> = {};
  if (request.max_output_tokens != null) settings.max_completion_tokens = request.max_output_tokens;
  if (request.temperature != null) settings.temperature = request.temperature;
  if (request.top_p != null) settings.top_p = request.top_p;
  if (request.parallel_tool_calls != null) settings.parallel_tool_calls = request.parallel_tool_calls;
  // safety_identifier is OpenAI's successor of `user`; chat providers know only `user`.
  const user = request.safety_identifier ?? request.user;
  if (user != null) settings.user = user;
  if (request.reasoning?.effort != null) settings.reasoning_effort = request.reasoning.effort;
  return settings;
}

function required<T>(value: T | null | undefined, param: string): T {
  if (value === undefined || value === null) throw new MissingRequiredFieldError(param);
  return value;
}

/** What translating the input remembers from one item to the next. */
interface InputState {
  readonly model: string;
  readonly messages: ChatMessage[];
  /** The assistant message the items just before made: a function_call joins it, as chat has one assistant turn hold its text and its calls. */
  assistant: ChatMessage | null;
  /** Reasoning texts waiting for the assistant message they came before. */
  reasoning: string[];
  /** Signed thinking blocks the reasoning items carried, waiting likewise. */
  thinking: ThinkingBlock[];
}

function messagesOf(request: ResponsesRequest): ChatMessage[] {
  const state: InputState = { model: request.model, messages: [], assistant: null, reasoning: [], thinking: [] };
  // As OpenAI does: the instructions come before everything in the input.
  if (request.instructions) state.messages.push({ role: 'system', content: request.instructions });
  const input = required(request.input, 'input');
  if (typeof input === 'string') state.messages.push({ role: 'user', content: input });
  else input.forEach((item, i) => appendItem(state, item, i));
  if (state.messages.length === 0) throw new InvalidValueError('input', 'The input holds no message to answer.');
  return state.messages;
}

function appendItem(state: InputState, item: InputItem, i: number): void {
  const param = `input[${i}]`;
  // An item without a type is a message, or a reference when all it has is an id.
  const type = item.type ?? (item.role === undefined && item.id != null ? 'item_reference' : 'message');
  switch (type) {
    case 'message': {
      const role = required(item.role, `${param}.role`);
      if (role === 'assistant') return appendAssistant(state, assistantMessageOf(item, param));
      return appendOther(state, { role, content: contentOf(required(item.content, `${param}.content`), `${param}.content`, state.model) });
    }
    case 'function_call':
      return appendFunctionCall(state, item, param);
    case 'function_call_output': {
      const output = required(item.output, `${param}.output`);
      return appendOther(state, {
        role: 'tool',
        tool_call_id: splitCallId(required(item.call_id, `${param}.call_id`)).id,
        content: contentOf(output, `${param}.output`, state.model),
      });
    }
    case 'reasoning':
      return appendReasoning(state, item);
    case 'compaction':
      return appendOther(state, { role: 'user', content: SUMMARY_PREFIX + compactionSummaryOf(item, param) });
    case 'item_reference':
      // The web tier replaces every reference with the stored item before the request is translated.
      throw new InvalidValueError(param, "The referenced item was not resolved: send the item itself in 'input'.");
    default:
      throw new UnsupportedParameterError(
        param,
        state.model,
        `items of type '${type}'; this gateway serves message, function_call, function_call_output, reasoning and compaction items`,
      );
  }
}

/**
 * A compaction item (POST /v1/responses/compact) stands for the conversation it summarized: its
 * summary goes on as a user message, which every provider reads in place (a system message would be
 * lifted to the top by Anthropic and Gemini). Only this gateway's own can be read.
 */
function compactionSummaryOf(item: InputItem, param: string): string {
  const content = required(item.encrypted_content, `${param}.encrypted_content`);
  const summary = carriedSummary(content);
  if (summary === null) throw new InvalidValueError(`${param}.encrypted_content`, FOREIGN_COMPACTION);
  return summary;
}

function appendOther(state: InputState, message: ChatMessage): void {
  state.messages.push(message);
  state.assistant = null;
  // Reasoning belongs to the assistant turn it preceded; with none after it, it has nothing to go with.
  state.reasoning = [];
  state.thinking = [];
}

function appendAssistant(state: InputState, message: ChatMessage): void {
  takeReasoning(state, message);
  state.messages.push(message);
  state.assistant = message;
}

function appendFunctionCall(state: InputState, item: InputItem, param: string): void {
  const name = required(item.name, `${param}.name`);
  const call = callWithSignature(required(item.call_id, `${param}.call_id`), {
    type: 'function',
    // A function of a namespace goes back under the name the upstream called it by.
    function: { name: item.namespace == null ? name : chatToolName(item.namespace, name), arguments: required(item.arguments, `${param}.arguments`) },
  });
  if (state.assistant === null) return appendAssistant(state, { role: 'assistant', content: null, tool_calls: [call] });
  takeReasoning(state, state.assistant);
  state.assistant.tool_calls = [...(state.assistant.tool_calls ?? []), call];
}

/**
 * Reasoning goes on as the next assistant message's `reasoning_content`, the chat extension that
 * providers which take reasoning back read, and the signed thinking blocks the gateway put in its
 * `encrypted_content` as that message's `thinking_blocks`. A summary is not the model's reasoning,
 * and another provider's `encrypted_content` is sealed by it: both are left out.
 */
function appendReasoning(state: InputState, item: InputItem): void {
  const parts = Array.isArray(item.content) ? item.content : [];
  const text = parts
    .filter((part) => part.type === 'reasoning_text')
    .map((part) => part.text ?? '')
    .join('');
  if (text !== '') state.reasoning.push(text);
  state.thinking.push(...(carriedThinking(item.encrypted_content) ?? []));
}

function takeReasoning(state: InputState, message: ChatMessage): void {
  if (state.thinking.length > 0) message.thinking_blocks = [...(message.thinking_blocks ?? []), ...state.thinking];
  state.thinking = [];
  if (state.reasoning.length === 0) return;
  message.reasoning_content = [message.reasoning_content, ...state.reasoning].filter((text) => text != null && text !== '').join('\n\n');
  state.reasoning = [];
}

/** An assistant's earlier answer: its texts become the content, its refusals the `refusal`. */
function assistantMessageOf(item: InputItem, param: string): ChatMessage {
  const content = required(item.content, `${param}.content`);
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const refusals: string[] = [];
  content.forEach((part, j) => {
    if (part.type === 'output_text' || part.type === 'input_text') texts.push(required(part.text, `${param}.content[${j}].text`));
    else if (part.type === 'refusal') refusals.push(required(part.refusal, `${param}.content[${j}].refusal`));
    else throw new InvalidValueError(`${param}.content[${j}].type`, `An assistant message holds output_text and refusal parts, not '${part.type}'.`);
  });
  const message: ChatMessage = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (refusals.length > 0) message.refusal = refusals.join('');
  return message;
}

function contentOf(content: string | InputContentPart[], param: string, model: string): string | ContentPart[] {
  return typeof content === 'string' ? content : content.map((part, j) => partOf(part, `${param}[${j}]`, model));
}

function partOf(part: InputContentPart, param: string, model: string): ContentPart {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: required(part.text, `${param}.text`) };
    case 'input_image':
      return imagePartOf(part, param, model);
    case 'input_file':
      return filePartOf(part, param, model);
    default:
      throw new InvalidValueError(`${param}.type`, `Content of type '${part.type}' cannot be sent here; use input_text, input_image or input_file.`);
  }
}

const NO_FILES_API = 'this gateway has no files API';

function imagePartOf(part: InputContentPart, param: string, model: string): ContentPart {
  if (part.image_url == null || part.image_url === '') {
    if (part.file_id != null)
      throw new UnsupportedParameterError(`${param}.file_id`, model, `${NO_FILES_API}; send the image in image_url, as an https or data: URL`);
    throw new MissingRequiredFieldError(`${param}.image_url`);
  }
  const image: { url: string; detail?: string } = { url: part.image_url };
  // Chat has no 'original' detail; 'high' is the closest it has.
  if (part.detail != null) image.detail = part.detail === 'original' ? 'high' : part.detail;
  return { type: 'image_url', image_url: image };
}

function filePartOf(part: InputContentPart, param: string, model: string): ContentPart {
  if (part.file_data != null) {
    const file: { file_data: string; filename?: string } = { file_data: part.file_data };
    if (part.filename != null) file.filename = part.filename;
    return { type: 'file', file };
  }
  if (part.file_url != null)
    throw new UnsupportedParameterError(`${param}.file_url`, model, 'files are not fetched by URL; send the file in file_data, as a data: URL');
  if (part.file_id != null) throw new UnsupportedParameterError(`${param}.file_id`, model, `${NO_FILES_API}; send the file in file_data, as a data: URL`);
  throw new MissingRequiredFieldError(`${param}.file_data`);
}

function responseFormatOf(format: RequestTextFormat | undefined): ResponseFormat | undefined {
  if (format === undefined || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const jsonSchema: NonNullable<ResponseFormat['json_schema']> = {
    name: required(format.name, 'text.format.name'),
    schema: required(format.schema, 'text.format.schema'),
  };
  if (format.description !== undefined) jsonSchema.description = format.description;
  if (format.strict != null) jsonSchema.strict = format.strict;
  return { type: 'json_schema', json_schema: jsonSchema };
}
