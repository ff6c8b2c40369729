/**
 * OpenAI chat messages → Anthropic's top-level `system` and its alternating `messages` turns:
 * system and developer messages are lifted out, tool messages become tool_result blocks of a user
 * turn, and consecutive turns of one role are merged.
 */
import { InvalidValueError, UnsupportedParameterError } from '../../errors/gateway-error.ts';
import type { ChatMessage, ContentPart, ThinkingBlock, ToolCall } from '../../wire/openai-chat.ts';
import type {
  AnthropicContentBlock,
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicMessageParam,
  AnthropicTextBlock,
  AnthropicToolUseBlock,
} from './wire.ts';

/** The translated conversation. */
export interface AnthropicConversation {
  system: AnthropicTextBlock[];
  messages: AnthropicMessageParam[];
}

/** A content part read from a data: URL. */
interface DataUrl {
  mediaType: string;
  base64: boolean;
  data: string;
}

/** Translates every message; `alias` names the model in UnsupportedParameterError. */
export function translateMessages(messages: ChatMessage[], alias: string): AnthropicConversation {
  const system: AnthropicTextBlock[] = [];
  const turns: AnthropicMessageParam[] = [];
  messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...systemBlocks(message.content, at));
        return;
      case 'user':
        return pushTurn(turns, 'user', userContent(message.content, at, alias));
      case 'assistant': {
        const blocks = assistantBlocks(message, at);
        if (blocks.length > 0) pushTurn(turns, 'assistant', blocks);
        return;
      }
      case 'tool':
        return pushTurn(turns, 'user', [{ type: 'tool_result', tool_use_id: message.tool_call_id ?? '', content: toolResultContent(message.content, at) }]);
      case 'function':
        // The deprecated function role names no call id, and Anthropic pairs every tool_result with its tool_use id.
        throw new UnsupportedParameterError(`${at}.role`, alias, "the deprecated 'function' role; send a 'tool' message with its tool_call_id");
    }
  });
  return { system, messages: turns };
}

// Anthropic needs strictly alternating roles, so consecutive turns of one role become one turn; in a user
// turn, tool results go first (the API requires them right after the assistant's tool_use turn).
function pushTurn(turns: AnthropicMessageParam[], role: 'user' | 'assistant', content: string | AnthropicContentBlock[]): void {
  const last = turns.at(-1);
  if (last === undefined || last.role !== role) {
    turns.push({ role, content });
    return;
  }
  const merged = [...asBlocks(last.content), ...asBlocks(content)];
  last.content = role === 'user' ? [...merged.filter(isToolResult), ...merged.filter((block) => !isToolResult(block))] : merged;
}

function asBlocks(content: string | AnthropicContentBlock[]): AnthropicContentBlock[] {
  if (typeof content !== 'string') return content;
  return content === '' ? [] : [{ type: 'text', text: content }];
}

function isToolResult(block: AnthropicContentBlock): boolean {
  return block.type === 'tool_result';
}

// Anthropic refuses empty text blocks; an empty system text says nothing, so it is left out.
function systemBlocks(content: ChatMessage['content'], at: string): AnthropicTextBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return (content ?? []).flatMap((part, j) => {
    if (part.type !== 'text')
      throw new InvalidValueError(`${at}.content[${j}].type`, `Anthropic takes text parts only in system and developer messages; got '${part.type}'.`);
    return part.text === '' ? [] : [textBlock(part)];
  });
}

function userContent(content: ChatMessage['content'], at: string, alias: string): string | AnthropicContentBlock[] {
  if (typeof content === 'string') return content;
  return (content ?? []).map((part, j) => userBlock(part, `${at}.content[${j}]`, alias));
}

function userBlock(part: ContentPart, at: string, alias: string): AnthropicContentBlock {
  switch (part.type) {
    case 'text':
      return textBlock(part);
    case 'image_url':
      return imageBlock(part, at);
    case 'file':
      return documentBlock(part, at, alias);
    default:
      throw new UnsupportedParameterError(`${at}.type`, alias, `content of type '${part.type}'`);
  }
}

function textBlock(part: ContentPart): AnthropicTextBlock {
  return withCacheControl({ type: 'text', text: part.text ?? '' }, part);
}

function withCacheControl<B extends AnthropicContentBlock>(block: B, part: ContentPart): B {
  return part.cache_control === undefined ? block : { ...block, cache_control: { ...part.cache_control } };
}

function imageBlock(part: ContentPart, at: string): AnthropicImageBlock {
  const url = part.image_url?.url ?? '';
  if (/^https?:\/\//i.test(url)) return withCacheControl({ type: 'image', source: { type: 'url', url } }, part);
  const parsed = parseDataUrl(url);
  if (parsed === null || !parsed.base64) {
    throw new InvalidValueError(`${at}.image_url.url`, 'An image must be an http(s) URL or a base64 data URL (data:image/png;base64,…).');
  }
  return withCacheControl({ type: 'image', source: { type: 'base64', media_type: parsed.mediaType, data: parsed.data } }, part);
}

function documentBlock(part: ContentPart, at: string, alias: string): AnthropicDocumentBlock {
  const fileData = part.file?.file_data;
  if (fileData === undefined) {
    // Anthropic's Files API ids are not OpenAI's: an OpenAI file id cannot be resolved upstream.
    if (part.file?.file_id !== undefined)
      throw new UnsupportedParameterError(`${at}.file.file_id`, alias, 'an uploaded file id; send the file inline as file_data');
    throw new InvalidValueError(`${at}.file.file_data`, 'A file part needs file_data (a data: URL).');
  }
  const parsed = parseDataUrl(fileData);
  if (parsed === null) throw new InvalidValueError(`${at}.file.file_data`, 'file_data must be a data URL (data:application/pdf;base64,…).');
  if (parsed.mediaType === 'application/pdf' && parsed.base64) {
    return withCacheControl({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: parsed.data } }, part);
  }
  if (parsed.mediaType === 'text/plain') {
    return withCacheControl({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: decodeText(parsed, at) } }, part);
  }
  throw new InvalidValueError(`${at}.file.file_data`, `Anthropic takes base64 PDF and plain-text files only; got '${parsed.mediaType}'.`);
}

// RFC 2397: data:[<mediatype>][;base64],<data>; the media type defaults to text/plain.
function parseDataUrl(url: string): DataUrl | null {
  if (!url.toLowerCase().startsWith('data:')) return null;
  const comma = url.indexOf(',');
  if (comma === -1) return null;
  const [mediaType = '', ...params] = url.slice('data:'.length, comma).split(';');
  return {
    mediaType: mediaType.trim().toLowerCase() || 'text/plain',
    base64: params.some((param) => param.trim().toLowerCase() === 'base64'),
    data: url.slice(comma + 1),
  };
}

function decodeText(parsed: DataUrl, at: string): string {
  if (parsed.base64) return Buffer.from(parsed.data, 'base64').toString('utf8');
  try {
    return decodeURIComponent(parsed.data);
  } catch {
    throw new InvalidValueError(`${at}.file.file_data`, 'file_data is not a valid percent-encoded data URL.');
  }
}

function assistantBlocks(message: ChatMessage, at: string): AnthropicContentBlock[] {
  return [
    ...(message.thinking_blocks ?? []).map((block, k) => thinkingBlock(block, `${at}.thinking_blocks[${k}]`)),
    ...assistantText(message.content, at),
    ...(message.tool_calls ?? []).map((call, j) => toolUseBlock(call, `${at}.tool_calls[${j}]`)),
  ];
}

// Signed thinking must come back exactly as the API produced it, or the API refuses the turn.
function thinkingBlock(block: ThinkingBlock, at: string): AnthropicContentBlock {
  if (block.type === 'thinking' && typeof block.thinking === 'string' && typeof block.signature === 'string') {
    return { type: 'thinking', thinking: block.thinking, signature: block.signature };
  }
  if (block.type === 'redacted_thinking' && typeof block.data === 'string') return { type: 'redacted_thinking', data: block.data };
  throw new InvalidValueError(at, 'A thinking block needs `thinking` and `signature`; a redacted_thinking block needs `data`.');
}

function assistantText(content: ChatMessage['content'], at: string): AnthropicTextBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return (content ?? []).flatMap((part, j) => {
    // What the assistant said when it refused is part of the conversation: it goes back as its text.
    if (part.type === 'refusal') return part.refusal === undefined || part.refusal === '' ? [] : [{ type: 'text' as const, text: part.refusal }];
    if (part.type !== 'text')
      throw new InvalidValueError(`${at}.content[${j}].type`, `Anthropic takes text parts only in assistant messages; got '${part.type}'.`);
    return part.text === '' ? [] : [textBlock(part)];
  });
}

function toolUseBlock(call: ToolCall, at: string): AnthropicToolUseBlock {
  return { type: 'tool_use', id: call.id, name: call.function.name, input: parseArguments(call.function.arguments, `${at}.function.arguments`) };
}

function parseArguments(text: string, at: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidValueError(at, 'Tool call arguments must be a JSON object; Anthropic takes tool input as an object.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidValueError(at, 'Tool call arguments must be a JSON object; Anthropic takes tool input as an object.');
  }
  return parsed as Record<string, unknown>;
}

function toolResultContent(content: ChatMessage['content'], at: string): string | Array<AnthropicTextBlock | AnthropicImageBlock> {
  if (typeof content === 'string') return content;
  return (content ?? []).map((part, j) => {
    if (part.type === 'text') return textBlock(part);
    if (part.type === 'image_url') return imageBlock(part, `${at}.content[${j}]`);
    throw new InvalidValueError(`${at}.content[${j}].type`, `Anthropic takes text and image parts only in tool results; got '${part.type}'.`);
  });
}
