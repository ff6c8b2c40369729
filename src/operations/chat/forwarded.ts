import type { ChatRequest } from '../../wire/openai-chat.ts';
import type { ChatCompletionRequest } from './request-schema.ts';

// Set per upstream call by the worker, or the gateway's own; never forwarded as sent.
const NOT_FORWARDED = new Set(['model', 'stream', 'stream_options']);

/** The chat request a worker forwards: what the client sent but the fields each upstream call sets. */
export function forwardedChat(request: ChatCompletionRequest): ChatRequest {
  const forwarded: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(request)) if (!NOT_FORWARDED.has(key) && value !== undefined) forwarded[key] = value;
  // The door validated the request against the same wire schemas (src/operations/chat/request-schema.ts).
  return forwarded as ChatRequest;
}
