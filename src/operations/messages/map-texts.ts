/**
 * The texts of a Messages request that the PII policy reads and may mask: the system prompt, text
 * blocks, tool results and plain-text documents, each named by its path. Thinking blocks are not
 * touched: Anthropic checks their signatures when they come back.
 */
import type { ContentBlockParam, MessageParam, MessagesRequest, NestedBlock } from '../../wire/anthropic-messages.ts';
import type { TextReplacer } from '../operation.ts';

function mapBlock<B extends ContentBlockParam | NestedBlock>(block: B, at: string, replace: TextReplacer): B {
  if (typeof block.text === 'string') return { ...block, text: replace(block.text, `${at}.text`) };
  if (typeof block.source === 'object' && block.source.type === 'text' && typeof block.source.data === 'string') {
    return { ...block, source: { ...block.source, data: replace(block.source.data, `${at}.source.data`) } };
  }
  if (block.type !== 'tool_result' || !('content' in block)) return block;
  const { content } = block as ContentBlockParam;
  if (typeof content === 'string') return { ...block, content: replace(content, `${at}.content`) };
  if (!Array.isArray(content)) return block;
  return { ...block, content: content.map((nested, k) => mapBlock(nested, `${at}.content[${k}]`, replace)) };
}

function mapTurn(turn: MessageParam, at: string, replace: TextReplacer): MessageParam {
  if (typeof turn.content === 'string') return { ...turn, content: replace(turn.content, `${at}.content`) };
  return { ...turn, content: turn.content.map((block, j) => mapBlock(block, `${at}.content[${j}]`, replace)) };
}

/** The request with each of its texts through `replace`. */
export function mapMessagesTexts<R extends Pick<MessagesRequest, 'system' | 'messages'>>(request: R, replace: TextReplacer): R {
  const { system } = request;
  const mapped = { ...request, messages: request.messages.map((turn, i) => mapTurn(turn, `messages[${i}]`, replace)) };
  if (typeof system === 'string') mapped.system = replace(system, 'system');
  else if (system !== undefined) mapped.system = system.map((block, k) => ({ ...block, text: replace(block.text, `system[${k}].text`) }));
  return mapped;
}
