/**
 * What Gemini's answers mean in OpenAI's terms, for whole responses and stream events alike:
 * parts read safely, finish reasons, refusals, tool calls and usage.
 */
import { randomBytes } from 'node:crypto';
import type { FinishReason, ToolCall, Usage } from '../../wire/openai-chat.ts';
import { isRecord } from '../../wire/json.ts';
import { invalidResponse } from '../shared/upstream-error.ts';
import type { GeminiCandidate, GeminiFunctionCallPart, GeminiPart, GeminiResponse, GeminiTextPart, GeminiUsageMetadata } from './wire.ts';

/** Gemini's finish reasons → OpenAI's; an unknown reason is 'stop' (STOP itself becomes 'tool_calls' after a call). */
export const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  IMAGE_PROHIBITED_CONTENT: 'content_filter',
  IMAGE_RECITATION: 'content_filter',
  MALFORMED_FUNCTION_CALL: 'stop',
  UNEXPECTED_TOOL_CALL: 'stop',
  LANGUAGE: 'stop',
  OTHER: 'stop',
  FINISH_REASON_UNSPECIFIED: 'stop',
};

/** A parsed answer (or stream event) checked to be an object; an error object is not one. */
export function asGeminiResponse(value: unknown): GeminiResponse {
  if (!isRecord(value)) throw invalidResponse('the answer is not a JSON object');
  if (value.candidates !== undefined && !Array.isArray(value.candidates)) throw invalidResponse('candidates is not an array');
  return value;
}

/** A candidate's parts, checked: each an object, a function call with a name. */
export function partsOf(candidate: unknown): GeminiPart[] {
  if (!isRecord(candidate)) throw invalidResponse('a candidate is not an object');
  const content = (candidate as GeminiCandidate).content;
  const parts: unknown = content?.parts ?? [];
  if (!Array.isArray(parts)) throw invalidResponse('candidate content parts is not an array');
  for (const part of parts) {
    if (!isRecord(part)) throw invalidResponse('a part is not an object');
    if (part.functionCall !== undefined && !(isRecord(part.functionCall) && typeof part.functionCall.name === 'string')) {
      throw invalidResponse('a functionCall part has no name');
    }
  }
  return parts as GeminiPart[];
}

/** True for a function call part. */
export function isFunctionCall(part: GeminiPart): part is GeminiFunctionCallPart {
  return 'functionCall' in part;
}

/** True for a text part of the answer (not a thought). */
export function isAnswerText(part: GeminiPart): part is GeminiTextPart {
  return 'text' in part && typeof part.text === 'string' && part.thought !== true;
}

/** True for a thought part (reasoning text, sent when `includeThoughts` was asked). */
export function isThought(part: GeminiPart): part is GeminiTextPart {
  return 'text' in part && typeof part.text === 'string' && part.thought === true;
}

/** OpenAI's finish reason for a Gemini one; `madeCall`: the candidate called a function. */
export function finishReasonOf(reason: string | undefined, madeCall: boolean): FinishReason {
  if (reason === 'STOP' && madeCall) return 'tool_calls';
  return FINISH_REASONS[reason ?? ''] ?? 'stop';
}

/** The refusal text for an answer the provider stopped. */
export function stoppedRefusal(reason: string): string {
  return `The provider stopped the answer (Gemini finishReason ${reason}).`;
}

/** The refusal text for a prompt the provider blocked. */
export function blockedRefusal(blockReason: string): string {
  return `The provider blocked the prompt (Gemini blockReason ${blockReason}).`;
}

/** The OpenAI tool call for a function call part; Gemini's call id when it sent one, else a fresh `call_…` id. */
export function toolCallOf(part: GeminiFunctionCallPart): ToolCall {
  const call: ToolCall = {
    id: part.functionCall.id ?? `call_${randomBytes(12).toString('hex')}`,
    type: 'function',
    function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
  };
  // Carried to the client so that it can send the call back with its signature (Gemini 3 requires it).
  if (part.thoughtSignature !== undefined) call.extra_content = { google: { thought_signature: part.thoughtSignature } };
  return call;
}

/** OpenAI usage for Gemini's counts: thought tokens are completion tokens, and reported as reasoning tokens. */
export function usageOf(metadata: GeminiUsageMetadata): Usage {
  const prompt = count(metadata.promptTokenCount);
  const thoughts = count(metadata.thoughtsTokenCount);
  const completion = count(metadata.candidatesTokenCount) + thoughts;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: count(metadata.cachedContentTokenCount) },
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
}

/** The usage metadata of an answer or event, when it has one. */
export function usageMetadataOf(response: GeminiResponse): GeminiUsageMetadata | null {
  return isRecord(response.usageMetadata) ? response.usageMetadata : null;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0;
}
