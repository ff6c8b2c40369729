/** A `generateContent` answer → ChatCompletion: one choice per candidate, or a refusal when the prompt was blocked. */
import type { ChatCompletion, ResponseMessage } from '../../wire/openai-chat.ts';
import type { ProviderTarget } from '../types.ts';
import { invalidResponse } from '../shared/upstream-error.ts';
import { errorFromPayload, geminiErrorOf } from './errors.ts';
import {
  asGeminiResponse,
  blockedRefusal,
  finishReasonOf,
  isAnswerText,
  isFunctionCall,
  isThought,
  partsOf,
  stoppedRefusal,
  toolCallOf,
  usageMetadataOf,
  usageOf,
} from './output.ts';
import type { GeminiCandidate, GeminiResponse } from './wire.ts';

type Choice = ChatCompletion['choices'][number];

/** Translates a parsed answer; throws UpstreamError for an error object or a shape Gemini does not document. */
export function parseGeminiCompletion(parsed: unknown, target: ProviderTarget): ChatCompletion {
  const error = geminiErrorOf(parsed);
  // An error object in a 2xx answer is classified by its own code.
  if (error !== null) throw errorFromPayload(error);
  const response = asGeminiResponse(parsed);
  const usage = usageMetadataOf(response);
  const completion: ChatCompletion = {
    id: typeof response.responseId === 'string' ? response.responseId : `chatcmpl-${crypto.randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof response.modelVersion === 'string' ? response.modelVersion : target.upstreamModel,
    choices: choicesOf(response),
  };
  if (usage !== null) completion.usage = usageOf(usage);
  return completion;
}

function choicesOf(response: GeminiResponse): Choice[] {
  const candidates = response.candidates ?? [];
  if (candidates.length > 0) return candidates.map(choiceOf);
  const blockReason = response.promptFeedback?.blockReason;
  if (typeof blockReason !== 'string') throw invalidResponse('no candidates and no promptFeedback.blockReason');
  return [{ index: 0, message: { role: 'assistant', content: null, refusal: blockedRefusal(blockReason) }, finish_reason: 'content_filter', logprobs: null }];
}

function choiceOf(candidate: GeminiCandidate, position: number): Choice {
  const parts = partsOf(candidate);
  const content = parts
    .filter(isAnswerText)
    .map((part) => part.text)
    .join('');
  const reasoning = parts
    .filter(isThought)
    .map((part) => part.text)
    .join('');
  const toolCalls = parts.filter(isFunctionCall).map(toolCallOf);
  const finishReason = finishReasonOf(candidate.finishReason, toolCalls.length > 0);
  const message: ResponseMessage = { role: 'assistant', content: content === '' ? null : content };
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (finishReason === 'content_filter') message.refusal = stoppedRefusal(candidate.finishReason ?? '');
  return { index: typeof candidate.index === 'number' ? candidate.index : position, message, finish_reason: finishReason, logprobs: null };
}
