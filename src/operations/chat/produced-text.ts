import type { ChunkDelta, ResponseMessage } from '../../wire/openai-chat.ts';

/**
 * What a model produced, as text to count when the provider reports no usage: the answer, its
 * reasoning and its tool calls' names and arguments. A tool-call-only answer is not free.
 */
export function producedText(output: ChunkDelta | ResponseMessage | undefined): string {
  if (!output) return '';
  let text = (output.reasoning_content ?? '') + (output.content ?? '');
  for (const call of output.tool_calls ?? []) text += (call.function?.name ?? '') + (call.function?.arguments ?? '');
  return text;
}
