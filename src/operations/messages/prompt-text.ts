/**
 * The text of a Messages request's prompt, for what the gateway reckons before it knows where a
 * request goes (or without any upstream): token bounds and estimates at the door, a count by the
 * tokenizer when a window or a translated stream's message_start needs it, and POST
 * /v1/messages/count_tokens. It needs no translation: a request routed natively may hold blocks
 * chat cannot express.
 */
import { countTextTokens } from '../../providers/shared/tokens.ts';
import type { ContentBlockParam, MessagesRequest } from '../../wire/anthropic-messages.ts';

/** What of a request the prompt is made of. */
export type PromptParts = Pick<MessagesRequest, 'system' | 'messages' | 'tools'>;

/**
 * The texts a request carries: system prompt, text and thinking blocks, tool calls and results,
 * plain-text documents, tool definitions. Images and PDFs are left out: what they cost does not
 * follow their size (as promptTokensUpperBound leaves out a chat request's images).
 */
export function promptTexts(request: PromptParts): string[] {
  const texts: string[] = [];
  const add = (text: string | null | undefined) => {
    if (text != null && text !== '') texts.push(text);
  };
  if (typeof request.system === 'string') add(request.system);
  else for (const block of request.system ?? []) add(block.text);
  for (const turn of request.messages) addContent(turn.content, add);
  for (const tool of request.tools ?? []) {
    add(tool.name);
    add(tool.description);
    if (tool.input_schema !== undefined) add(JSON.stringify(tool.input_schema));
  }
  return texts;
}

function addContent(content: ContentBlockParam['content'], add: (text: string | null | undefined) => void): void {
  if (typeof content === 'string') return add(content);
  if (!Array.isArray(content)) return;
  for (const block of content as ContentBlockParam[]) {
    add(block.text);
    if (typeof block.source === 'object' && block.source.type === 'text') add(block.source.data);
    add(block.thinking);
    if (block.input !== undefined) {
      add(block.name);
      add(JSON.stringify(block.input));
    }
    addContent(block.content, add);
  }
}

/** The UTF-8 bytes of the prompt's texts: a BPE token covers at least one byte, so this bounds their tokens. */
export function promptTextBytes(request: PromptParts): number {
  let bytes = 0;
  for (const text of promptTexts(request)) bytes += Buffer.byteLength(text);
  return bytes;
}

// As for a chat prompt (src/domain/catalog/tokens.ts): a few tokens frame each turn, a few prime the answer.
const TOKENS_PER_TURN = 3;
const TOKENS_PER_REPLY = 3;

/** The prompt's tokens at most, whatever the provider's tokenizer: its texts' bytes and each turn's framing (images are not in it). */
export function promptTokensBoundOf(request: PromptParts): number {
  return promptTextBytes(request) + TOKENS_PER_REPLY + TOKENS_PER_TURN * request.messages.length;
}

/**
 * The prompt's tokens by the gateway's tokenizer (o200k), not Anthropic's, which is not public:
 * an estimate, close for English text, that needs no upstream call.
 */
export function countPromptTokens(request: PromptParts): number {
  let tokens = TOKENS_PER_REPLY + TOKENS_PER_TURN * request.messages.length;
  for (const text of promptTexts(request)) tokens += countTextTokens(text);
  return tokens;
}
