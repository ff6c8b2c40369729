/**
 * Anthropic's `system` and `messages` turns → OpenAI chat messages. A user turn's tool_result
 * blocks become `tool` messages, an assistant turn's tool_use blocks `tool_calls`, its thinking
 * blocks `thinking_blocks`. Errors name the parameter as the client sent it
 * (`messages[2].content[1].source`).
 */
import { InvalidValueError, UnsupportedParameterError } from '../../errors/gateway-error.ts';
import type { ChatMessage, ContentPart, ThinkingBlock, ToolCall } from '../../wire/openai-chat.ts';
import type { ContentBlockParam, MessageParam, MessagesRequest, NestedBlock, Source } from '../../wire/anthropic-messages.ts';
import { callWithSignature, splitCallId } from '../signed-call-ids.ts';

/** The chat messages of a request's system prompt and turns; `model` names the model in UnsupportedParameterError. */
export function turnsToChat(request: Pick<MessagesRequest, 'system' | 'messages'>, model: string): ChatMessage[] {
  return [...systemMessages(request.system), ...request.messages.flatMap((turn, i) => turnMessages(turn, `messages[${i}]`, model))];
}

function systemMessages(system: MessagesRequest['system']): ChatMessage[] {
  if (system === undefined || system.length === 0) return [];
  return [{ role: 'system', content: typeof system === 'string' ? system : system.map(textPart) }];
}

function turnMessages(turn: MessageParam, at: string, model: string): ChatMessage[] {
  switch (turn.role) {
    case 'user':
      return userMessages(turn.content, at, model);
    case 'assistant':
      return [assistantMessage(turn.content, at, model)];
    case 'system':
      return [
        { role: 'system', content: typeof turn.content === 'string' ? turn.content : turn.content.map((block, j) => systemPart(block, `${at}.content[${j}]`)) },
      ];
  }
}

function systemPart(block: ContentBlockParam, at: string): ContentPart {
  if (block.type !== 'text') throw new InvalidValueError(`${at}.type`, `A system turn takes text blocks only; got '${block.type}'.`);
  return textPart(block);
}

// Chat wants each tool answer right after the assistant message that made the call, so a user
// turn's tool results go first, as `tool` messages, and the rest of the turn follows them.
function userMessages(content: MessageParam['content'], at: string, model: string): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const answers: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  for (const [j, block] of content.entries()) {
    const where = `${at}.content[${j}]`;
    if (block.type !== 'tool_result') {
      parts.push(...userParts(block, where, model));
      continue;
    }
    const { message, media } = toolMessage(block, where, model);
    answers.push(message);
    parts.push(...media);
  }
  return parts.length > 0 || answers.length === 0 ? [...answers, { role: 'user', content: parts }] : answers;
}

/** The chat parts of a block a user may send: text, image, document. */
function userParts(block: ContentBlockParam | NestedBlock, at: string, model: string): ContentPart[] {
  switch (block.type) {
    case 'text':
      return [textPart(block)];
    case 'image':
      return [imagePart(block, at, model)];
    case 'document':
      return documentParts(block, at, model);
    default:
      throw new UnsupportedParameterError(at, model, `a '${block.type}' block`);
  }
}

function textPart(block: Pick<NestedBlock, 'text' | 'cache_control'>): ContentPart {
  return withCacheControl({ type: 'text', text: block.text ?? '' }, block);
}

function withCacheControl(part: ContentPart, block: Pick<NestedBlock, 'cache_control'>): ContentPart {
  return block.cache_control == null ? part : { ...part, cache_control: block.cache_control };
}

function sourceOf(block: NestedBlock, at: string): Source {
  if (typeof block.source !== 'object') throw new InvalidValueError(`${at}.source`, `A ${block.type} block needs a source object.`);
  return block.source;
}

function imagePart(block: NestedBlock, at: string, model: string): ContentPart {
  const source = sourceOf(block, at);
  switch (source.type) {
    case 'base64':
      return withCacheControl({ type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } }, block);
    case 'url':
      return withCacheControl({ type: 'image_url', image_url: { url: source.url ?? '' } }, block);
    case 'file':
      // A Files API id names a file in the client's Anthropic account, which no chat upstream can read.
      throw new UnsupportedParameterError(`${at}.source`, model, 'an image by Files API id; send it as base64 or a URL');
    default:
      throw new InvalidValueError(`${at}.source.type`, `An image source is base64, url or file; got '${source.type}'.`);
  }
}

function documentParts(block: NestedBlock, at: string, model: string): ContentPart[] {
  const source = sourceOf(block, at);
  switch (source.type) {
    case 'base64': {
      const file = { file_data: `data:${source.media_type};base64,${source.data}`, filename: pdfName(block.title) };
      return [withCacheControl({ type: 'file', file }, block)];
    }
    case 'text':
      return [withCacheControl({ type: 'text', text: source.data ?? '' }, block)];
    case 'content':
      if (typeof source.content === 'string') return [withCacheControl({ type: 'text', text: source.content }, block)];
      return (source.content ?? []).flatMap((inner, k) => userParts(inner, `${at}.source.content[${k}]`, model));
    case 'url':
      // A chat file part carries its data inline; chat has no way to name a document by URL.
      throw new UnsupportedParameterError(`${at}.source`, model, 'a document by URL; send it as base64');
    case 'file':
      throw new UnsupportedParameterError(`${at}.source`, model, 'a document by Files API id; send it as base64');
    default:
      throw new InvalidValueError(`${at}.source.type`, `A document source is base64, text, content, url or file; got '${source.type}'.`);
  }
}

// OpenAI wants a filename beside file_data; Anthropic's base64 documents are PDFs, and the name says so.
function pdfName(title: string | null | undefined): string {
  if (title == null || title === '') return 'document.pdf';
  return title.toLowerCase().endsWith('.pdf') ? title : `${title}.pdf`;
}

// A chat tool message carries text only, so images and PDFs a tool returned go into the user
// message that follows the answers, where the model still sees them after the call.
function toolMessage(block: ContentBlockParam, at: string, model: string): { message: ChatMessage; media: ContentPart[] } {
  const parts = toolResultParts(block.content, at, model);
  const texts = parts.flatMap((part) => (part.type === 'text' ? [part.text ?? ''] : []));
  // The chat format has no error flag on a tool answer: the model reads it in the text.
  const text = (block.is_error === true ? 'Error: ' : '') + texts.join('\n');
  // A cache marker on the result (where Claude Code puts its last breakpoint) rides on a text part.
  const content = block.cache_control == null ? text : [{ type: 'text', text, cache_control: block.cache_control }];
  return { message: { role: 'tool', tool_call_id: splitCallId(block.tool_use_id ?? '').id, content }, media: parts.filter((part) => part.type !== 'text') };
}

function toolResultParts(content: ContentBlockParam['content'], at: string, model: string): ContentPart[] {
  if (content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw new InvalidValueError(`${at}.content`, 'A tool result holds a string or an array of blocks.');
  return content.flatMap((inner, k) => userParts(inner, `${at}.content[${k}]`, model));
}

function assistantMessage(content: MessageParam['content'], at: string, model: string): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const parts: ContentPart[] = [];
  const calls: ToolCall[] = [];
  const thinking: ThinkingBlock[] = [];
  for (const [j, block] of content.entries()) {
    switch (block.type) {
      case 'text':
        parts.push(textPart(block));
        break;
      case 'tool_use':
        calls.push(callWithSignature(block.id ?? '', { type: 'function', function: { name: block.name ?? '', arguments: JSON.stringify(block.input ?? {}) } }));
        break;
      case 'thinking':
        thinking.push({ type: 'thinking', thinking: block.thinking ?? '', signature: block.signature ?? '' });
        break;
      case 'redacted_thinking':
        thinking.push({ type: 'redacted_thinking', data: block.data ?? '' });
        break;
      default:
        throw new UnsupportedParameterError(`${at}.content[${j}]`, model, `a '${block.type}' block`);
    }
  }
  // An assistant message that only calls tools has null content; one with neither text nor calls still needs a string.
  const message: ChatMessage = { role: 'assistant', content: parts.length > 0 ? parts : calls.length > 0 ? null : '' };
  if (calls.length > 0) message.tool_calls = calls;
  if (thinking.length > 0) Object.assign(message, thinkingFields(thinking));
  return message;
}

// Signed thinking goes back whole in thinking_blocks (an Anthropic upstream checks the signatures);
// upstreams that know only reasoning_content read the text.
function thinkingFields(blocks: ThinkingBlock[]): Pick<ChatMessage, 'thinking_blocks' | 'reasoning_content'> {
  const reasoning = blocks.flatMap((block) => (block.thinking ? [block.thinking] : [])).join('\n\n');
  return reasoning === '' ? { thinking_blocks: blocks } : { thinking_blocks: blocks, reasoning_content: reasoning };
}
