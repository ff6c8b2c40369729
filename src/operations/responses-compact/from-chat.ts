/**
 * The summary call's answer → the compacted response, as OpenAI's compaction answers: every user
 * message of the input as it was (masked where the PII policy masked it), then one compaction
 * item carrying the summary (compaction-summary.ts). Sent back in the input of a later
 * /v1/responses request, with the next user message after it, they are the conversation: the
 * compaction item becomes the summary, as a user message, for whichever provider serves it.
 */
import { ProviderFailedError } from '../../errors/gateway-error.ts';
import type { ChatCompletion, Usage } from '../../wire/openai-chat.ts';
import type { InputItem, ResponseUsage } from '../../wire/openai-responses.ts';
import type { CompactedResponse, KeptMessage, ResponsesCompactRequest } from '../../wire/openai-responses-compact.ts';
import { carrySummary } from '../responses/compaction-summary.ts';

/** What names the compacted response: `resp_<request id>` (its items' ids are made from it), and its creation time in seconds. */
export interface CompactionContext {
  id: string;
  createdAt: number;
}

/** The summary the model wrote; an answer without text is the provider's failure, not a summary. */
export function summaryOf(completion: ChatCompletion, alias: string): string {
  const text = completion.choices.find((choice) => choice.index === 0)?.message.content?.trim() ?? '';
  if (text === '') throw new ProviderFailedError(`The model '${alias}' answered the compaction without a summary.`);
  return text;
}

function isUserMessage(item: InputItem): boolean {
  return (item.type === undefined || item.type === 'message') && item.role === 'user' && item.content !== undefined;
}

/** The input's user messages, each with its own id or one made from the response's. */
export function keptMessages(input: string | InputItem[], idOf: (index: number) => string): KeptMessage[] {
  const messages: InputItem[] = typeof input === 'string' ? [{ role: 'user', content: input }] : input.filter(isUserMessage);
  return messages.map((item, i) => ({
    type: 'message',
    id: item.id ?? idOf(i),
    status: 'completed',
    role: 'user',
    content: typeof item.content === 'string' ? [{ type: 'input_text', text: item.content }] : (item.content ?? []),
  }));
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

/** The compacted response of `request` whose conversation `summary` sums up. */
export function compactedResponse(request: ResponsesCompactRequest, summary: string, usage: Usage, context: CompactionContext): CompactedResponse {
  const base = context.id.startsWith('resp_') ? context.id.slice('resp_'.length) : context.id;
  const kept = keptMessages(request.input ?? [], (i) => `msg_${base}_${i}`);
  return {
    id: context.id,
    object: 'response.compaction',
    created_at: context.createdAt,
    output: [...kept, { type: 'compaction', id: `cmp_${base}_${kept.length}`, encrypted_content: carrySummary(summary) }],
    usage: usageOf(usage),
  };
}
