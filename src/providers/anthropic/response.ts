/** Anthropic's message JSON → ChatCompletion; the finish-reason and usage mappings the stream shares. */
import type { ChatCompletion, FinishReason, ResponseMessage, ThinkingBlock, ToolCall } from '../../wire/openai-chat.ts';
import type { ProviderTarget } from '../types.ts';
import { isRecord } from '../../wire/json.ts';
import { readUsage, usageOf } from '../../wire/anthropic-usage.ts';
import { invalidResponse } from '../shared/upstream-error.ts';
import { errorDetailOf, errorFromEvent } from './errors.ts';

/** The refusal text a `stop_reason: "refusal"` answer carries, non-streamed and streamed. */
export const REFUSAL_MESSAGE = 'The model declined to answer (Anthropic stop_reason "refusal").';

/** The OpenAI finish reason of an Anthropic stop_reason. */
export function finishReasonOf(stopReason: unknown): FinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
    case 'pause_turn': // The turn is unfinished (a server tool loop paused): a client must not take it as a complete answer.
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** Translates a parsed non-streamed Messages API body; throws UpstreamError on an error body or a shape that is not a message. */
export function parseMessage(parsed: unknown, target: ProviderTarget): ChatCompletion {
  const error = errorDetailOf(parsed);
  if (error !== null) throw errorFromEvent(error);
  if (!isRecord(parsed) || typeof parsed.id !== 'string' || !Array.isArray(parsed.content)) {
    throw invalidResponse('not a message (no id or content array)');
  }
  const completion: ChatCompletion = {
    id: parsed.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof parsed.model === 'string' ? parsed.model : target.upstreamModel,
    choices: [{ index: 0, message: messageOf(parsed.content, parsed.stop_reason), finish_reason: finishReasonOf(parsed.stop_reason) }],
  };
  const usage = readUsage(parsed.usage);
  if (usage !== null) completion.usage = usageOf(usage);
  return completion;
}

function messageOf(content: unknown[], stopReason: unknown): ResponseMessage {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const thinkingBlocks: ThinkingBlock[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of content) {
    if (!isRecord(block)) throw invalidResponse('a content block is not an object');
    switch (block.type) {
      case 'text':
        if (typeof block.text === 'string') texts.push(block.text);
        break;
      case 'tool_use':
        toolCalls.push(toolCallOf(block));
        break;
      case 'thinking': {
        const thinking = typeof block.thinking === 'string' ? block.thinking : '';
        // With display 'omitted' the text is empty and only the signature matters: no empty reasoning_content.
        if (thinking !== '') reasoning.push(thinking);
        thinkingBlocks.push({ type: 'thinking', thinking, signature: typeof block.signature === 'string' ? block.signature : '' });
        break;
      }
      case 'redacted_thinking':
        if (typeof block.data === 'string') thinkingBlocks.push({ type: 'redacted_thinking', data: block.data });
        break;
      // Server tool blocks, web search results and any later type carry nothing OpenAI's message has.
    }
  }
  const message: ResponseMessage = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('\n\n');
  if (thinkingBlocks.length > 0) message.thinking_blocks = thinkingBlocks;
  if (stopReason === 'refusal') message.refusal = REFUSAL_MESSAGE;
  return message;
}

function toolCallOf(block: Record<string, unknown>): ToolCall {
  if (typeof block.id !== 'string' || typeof block.name !== 'string') throw invalidResponse('a tool_use block without id or name');
  return { id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } };
}
