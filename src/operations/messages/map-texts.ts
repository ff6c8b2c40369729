/**
 * The texts of a Messages request that the PII policy reads and may mask, each named by its path:
 * the system prompt, text and thinking blocks, every string of a tool call's input, tool results
 * and the blocks nested in them (search results, documents), documents made of text.
 *
 * A signed thinking block is never rewritten: Anthropic checks its signature when it comes back
 * and refuses a changed one. When `replace` would change its text, the block is left out, as
 * Anthropic lets a client leave out the thinking of earlier turns. The same conversation always
 * loses the same blocks, so what a provider sees of it still only grows at its end.
 */
import { isRecord } from '../../wire/json.ts';
import type { ContentBlockParam, MessageParam, MessagesRequest, NestedBlock, Source } from '../../wire/anthropic-messages.ts';
import type { TextReplacer } from '../../domain/pii/apply-policy.ts';

// The blocks whose `content` a client writes; a server tool's result is the provider's own.
const CONTENT_HOLDERS = new Set(['tool_result', 'search_result']);
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** A key's path as a client writes it: `input.command`, `input["file-path"]`. */
function keyPath(at: string, key: string): string {
  return IDENTIFIER.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`;
}

/** Every string inside a JSON value through `replace`; numbers, booleans and null stay. */
function mapJson(value: unknown, at: string, replace: TextReplacer): unknown {
  if (typeof value === 'string') return replace(value, at);
  if (Array.isArray(value)) return value.map((item, k) => mapJson(item, `${at}[${k}]`, replace));
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapJson(item, keyPath(at, key), replace)]));
}

/** A block's `content`: a text, or blocks. */
function mapContent<C>(content: C, at: string, replace: TextReplacer): C {
  if (typeof content === 'string') return replace(content, at) as C;
  if (!Array.isArray(content)) return content;
  return content.map((nested: NestedBlock, k) => mapBlock(nested, `${at}[${k}]`, replace)) as C;
}

/** A document's source when it is text: `data` of a plain-text one, `content` of one made of blocks. */
function mapSource(source: Source, at: string, replace: TextReplacer): Source {
  if (source.type === 'text' && typeof source.data === 'string') return { ...source, data: replace(source.data, `${at}.data`) };
  if (source.type === 'content') return { ...source, content: mapContent(source.content, `${at}.content`, replace) };
  return source;
}

function mapBlock<B extends ContentBlockParam | NestedBlock>(block: B, at: string, replace: TextReplacer): B {
  let mapped = block;
  if (typeof block.text === 'string') mapped = { ...mapped, text: replace(block.text, `${at}.text`) };
  if (typeof block.source === 'object') mapped = { ...mapped, source: mapSource(block.source, `${at}.source`, replace) };
  if ('input' in block && isRecord(block.input)) mapped = { ...mapped, input: mapJson(block.input, `${at}.input`, replace) };
  if ('content' in block && CONTENT_HOLDERS.has(block.type)) mapped = { ...mapped, content: mapContent(block.content, `${at}.content`, replace) };
  return mapped;
}

/** A block of a turn through `replace`; null for a signed thinking block whose text would change. */
function mapTurnBlock(block: ContentBlockParam, at: string, replace: TextReplacer): ContentBlockParam | null {
  if (block.type !== 'thinking' || typeof block.thinking !== 'string') return mapBlock(block, at, replace);
  const thinking = replace(block.thinking, `${at}.thinking`);
  if (thinking === block.thinking) return block;
  // Unsigned thinking is a chat model's reasoning as the gateway translated it: nobody checks it.
  return block.signature ? null : { ...block, thinking };
}

function mapTurn(turn: MessageParam, at: string, replace: TextReplacer): MessageParam {
  if (typeof turn.content === 'string') return { ...turn, content: replace(turn.content, `${at}.content`) };
  return { ...turn, content: turn.content.flatMap((block, j) => mapTurnBlock(block, `${at}.content[${j}]`, replace) ?? []) };
}

/**
 * The request with each of its texts through `replace`, in the prompt's order (the system prompt
 * first): a masker numbers placeholders as it meets values, and a conversation growing at its end
 * then keeps the ones it had, as prompt caching and Anthropic's checks of thinking want.
 */
export function mapMessagesTexts<R extends Pick<MessagesRequest, 'system' | 'messages'>>(request: R, replace: TextReplacer): R {
  const { system } = request;
  const mapped = { ...request };
  if (typeof system === 'string') mapped.system = replace(system, 'system');
  else if (system !== undefined) mapped.system = system.map((block, k) => ({ ...block, text: replace(block.text, `system[${k}].text`) }));
  mapped.messages = request.messages.map((turn, i) => mapTurn(turn, `messages[${i}]`, replace));
  return mapped;
}
