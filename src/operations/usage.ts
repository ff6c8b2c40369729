import { countTextTokens } from '../providers/shared/tokens.ts';
import type { Usage } from '../wire/openai-chat.ts';

/** Where a request's token counts came from; recorded with every request. */
export type UsageSource = 'provider' | 'estimated';

/** A request's token counts and where they came from. */
export interface ResolvedUsage {
  usage: Usage;
  source: UsageSource;
}

/**
 * The provider's own counts when it reported them, with their details (cached, cache-write,
 * reasoning tokens…) as reported; otherwise the tokenizer's count of the prompt (done by the web
 * tier) and of the text actually produced. Never zero for a completion that produced text (the
 * costliest bug of the peers: streamed spend as 0).
 */
export function resolveUsage(reported: Usage | null | undefined, countPrompt: () => number, completionText: string): ResolvedUsage {
  if (reported && Number.isInteger(reported.prompt_tokens) && Number.isInteger(reported.completion_tokens)) {
    const usage: Usage = {
      prompt_tokens: reported.prompt_tokens,
      completion_tokens: reported.completion_tokens,
      total_tokens: reported.prompt_tokens + reported.completion_tokens,
    };
    if (reported.prompt_tokens_details) usage.prompt_tokens_details = reported.prompt_tokens_details;
    if (reported.completion_tokens_details) usage.completion_tokens_details = reported.completion_tokens_details;
    return { usage, source: 'provider' };
  }
  const promptTokens = countPrompt();
  const completionTokens = countTextTokens(completionText);
  return {
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    source: 'estimated',
  };
}
