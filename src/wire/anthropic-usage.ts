/**
 * Anthropic's token counts, as its messages and stream events report them, and their OpenAI
 * reading: the Anthropic adapter, the native Messages runner and tracing all read them.
 */
import type { Usage as ChatUsage } from './openai-chat.ts';
import type { Usage } from './anthropic-messages.ts';
import { isRecord } from './json.ts';

/** The counts of an Anthropic usage object that the gateway reads. */
export type AnthropicUsage = Partial<Pick<Usage, 'input_tokens' | 'output_tokens' | 'cache_creation_input_tokens' | 'cache_read_input_tokens'>>;

/** OpenAI usage from Anthropic's counts: cache reads and writes are prompt tokens too. */
export function usageOf(usage: AnthropicUsage): ChatUsage {
  const cacheRead = count(usage.cache_read_input_tokens);
  const cacheWrite = count(usage.cache_creation_input_tokens);
  const promptTokens = count(usage.input_tokens) + cacheRead + cacheWrite;
  const completionTokens = count(usage.output_tokens);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cacheRead, cache_write_tokens: cacheWrite },
  };
}

const USAGE_FIELDS = ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const;

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.trunc(value) : 0;
}

/** The numeric counts of a `usage` object (absent or non-numeric fields left out); null when it is not an object. */
export function readUsage(value: unknown): AnthropicUsage | null {
  if (!isRecord(value)) return null;
  const usage: AnthropicUsage = {};
  for (const field of USAGE_FIELDS) {
    const fieldValue = value[field];
    if (typeof fieldValue === 'number') usage[field] = fieldValue;
  }
  return usage;
}
