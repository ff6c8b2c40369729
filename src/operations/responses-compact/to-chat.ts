/**
 * A compaction request → the chat request that asks the model for the summary: the compaction
 * prompt as the system message, then one user message holding the client's instructions (for
 * context) and the conversation as a transcript (transcript.ts). Nothing else of the request is
 * forwarded: the summary is text, so the `tools`, `parallel_tool_calls`, `reasoning` and `text`
 * Codex sends along are accepted and left out, as are `prompt_cache_*` and `service_tier` (no chat
 * provider but OpenAI takes them).
 */
import { InvalidValueError, MissingRequiredFieldError } from '../../errors/gateway-error.ts';
import type { ChatRequest } from '../../wire/openai-chat.ts';
import type { ResponsesCompactRequest } from '../../wire/openai-responses-compact.ts';
import { COMPACTION_PROMPT, COMPACTION_REQUEST } from './prompt.ts';
import { transcriptOf } from './transcript.ts';

const STATELESS = "This gateway keeps no conversations to compact: send the whole conversation in 'input'";

// What would need a stored response or conversation is refused, saying what to send instead.
function refuseUnserved(request: ResponsesCompactRequest): void {
  if (request.previous_response_id != null) throw new InvalidValueError('previous_response_id', `${STATELESS} instead of 'previous_response_id'.`);
  if ((request as { conversation?: unknown }).conversation != null) throw new InvalidValueError('conversation', `${STATELESS} instead of 'conversation'.`);
}

/** The summary call's chat request; throws a GatewayError naming what cannot be compacted. */
export function compactionChat(request: ResponsesCompactRequest): ChatRequest {
  refuseUnserved(request);
  const input = request.input;
  if (input === undefined) throw new MissingRequiredFieldError('input');
  if (input.length === 0) throw new InvalidValueError('input', 'The input holds no conversation to compact.');
  const sections: string[] = [];
  if (request.instructions)
    sections.push(
      `The instructions the assistant follows, for context (they are sent again with every request: do not summarize them):\n<instructions>\n${request.instructions}\n</instructions>`,
    );
  sections.push(`The conversation:\n<conversation>\n${transcriptOf(input)}\n</conversation>`, COMPACTION_REQUEST);
  return {
    messages: [
      { role: 'system', content: COMPACTION_PROMPT },
      { role: 'user', content: sections.join('\n\n') },
    ],
  };
}
