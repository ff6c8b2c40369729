import { createRequire } from 'node:module';

// The tokenizer's tables cost about 70 MB and 130 ms to load; most requests never need them
// (the byte bound decides, and providers report their own counts), so load on first use.
type CountTokens = (text: string, options: { disallowedSpecial: Set<string> }) => number;
let countTokens: CountTokens | null = null;
function tokenizer(): CountTokens {
  countTokens ??= (createRequire(import.meta.url)('gpt-tokenizer') as { countTokens: CountTokens }).countTokens;
  return countTokens;
}

// OpenAI's chat format costs about 3 tokens per message plus 3 to prime the reply
// (openai-cookbook, "How to count tokens with tiktoken").
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_REPLY = 3;

/** A message as far as token counting cares. */
export interface CountableMessage {
  role: string;
  content?: unknown;
  name?: unknown;
}

/** The text of a message's content: a string, or the text parts of an array. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') text += (part as { text: string }).text;
  }
  return text;
}

// User text such as '<|endoftext|>' is text: counted as ordinary tokens, never rejected.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** Tokens of a text with the o200k tokenizer. */
export function countTextTokens(text: string): number {
  return text.length === 0 ? 0 : tokenizer()(text, PLAIN_TEXT);
}

/** Prompt tokens of a chat request, counted with the tokenizer. */
export function countPromptTokens(messages: readonly CountableMessage[]): number {
  let total = TOKENS_PER_REPLY;
  for (const message of messages) {
    total += TOKENS_PER_MESSAGE + countTextTokens(message.role) + countTextTokens(contentText(message.content));
    if (typeof message.name === 'string') total += countTextTokens(message.name) + 1;
  }
  return total;
}

/**
 * An upper bound on the prompt tokens without running the tokenizer: a BPE token covers
 * at least one byte, so the UTF-8 length bounds the count. Used to skip counting when
 * even the bound fits the context window.
 */
export function promptTokensUpperBound(messages: readonly CountableMessage[]): number {
  let total = TOKENS_PER_REPLY;
  for (const message of messages) {
    total += TOKENS_PER_MESSAGE + Buffer.byteLength(message.role) + Buffer.byteLength(contentText(message.content));
    if (typeof message.name === 'string') total += Buffer.byteLength(message.name) + 1;
  }
  return total;
}

/**
 * What a budget reserves for a prompt: at most this many tokens, whatever the provider's tokenizer. The messages'
 * text is bounded by its bytes (promptTokensUpperBound), and what else the provider turns into prompt tokens
 * (tools, an output schema, the calls an assistant message made) by the bytes of its JSON, which holds every
 * character of it. Images are not in it: their tokens follow their size, not their bytes.
 */
export function promptTokensBound(messages: readonly CountableMessage[], ...structured: unknown[]): number {
  let total = promptTokensUpperBound(messages);
  for (const value of structured) if (value !== undefined && value !== null) total += Buffer.byteLength(JSON.stringify(value));
  return total;
}

// The usual ratio of English text.
const BYTES_PER_TOKEN = 4;

/** Tokens as estimated from UTF-8 bytes without the tokenizer (for rate limits and reservations). */
export function estimateTokens(bytes: number): number {
  return Math.ceil(bytes / BYTES_PER_TOKEN);
}
