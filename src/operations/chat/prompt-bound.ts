import { promptTokensBound } from '../../providers/shared/tokens.ts';
import type { ChatRequest } from '../../wire/openai-chat.ts';

/** A chat request's prompt tokens at most (promptTokensBound): its messages, the calls its assistant turns made, its tools and output schema. */
export function chatPromptBound(request: Pick<ChatRequest, 'messages' | 'tools' | 'response_format'>): number {
  const calls = request.messages.flatMap((message) => ('tool_calls' in message && message.tool_calls ? message.tool_calls : []));
  return promptTokensBound(request.messages, calls.length > 0 ? calls : undefined, request.tools, request.response_format);
}
