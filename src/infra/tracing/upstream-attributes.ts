/**
 * The GenAI semantic conventions' attributes of an upstream call: who was called (per target,
 * computed once) and what the response said (model, id, finish reasons, token counts). Only
 * these are read from a response; its content never is.
 */
import type { Attributes, Span } from '@opentelemetry/api';
import { ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';
import { descriptorOf } from '../../providers/descriptors.ts';
import type { NativeEvent, NativeMessage, ProviderTarget } from '../../providers/types.ts';
import type { ChatCompletion, ChatCompletionChunk, Usage } from '../../wire/openai-chat.ts';
import type { EmbeddingsResponse } from '../../wire/openai-embeddings.ts';
import { readUsage, usageOf as anthropicUsageOf, type AnthropicUsage } from '../../wire/anthropic-usage.ts';
import { isRecord } from '../../wire/json.ts';
import {
  ATTR_GATEWAY_MODEL_ALIAS,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from './gateway-attributes.ts';

/** Who an upstream call goes to: provider, upstream model, catalog alias, server address and port. */
export function targetAttributes(target: ProviderTarget): Attributes {
  const { telemetry } = descriptorOf(target.provider);
  const model: Readonly<Record<string, unknown>> = target.model;
  const provider = telemetry.system(model);
  const baseUrl = typeof model.base_url === 'string' ? model.base_url : telemetry.defaultBaseUrl;
  const attributes: Attributes = {
    [ATTR_GEN_AI_PROVIDER_NAME]: provider,
    [ATTR_GEN_AI_REQUEST_MODEL]: target.upstreamModel,
    [ATTR_GATEWAY_MODEL_ALIAS]: target.alias,
  };
  if (baseUrl) {
    const url = new URL(baseUrl);
    attributes[ATTR_SERVER_ADDRESS] = url.hostname;
    attributes[ATTR_SERVER_PORT] = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  }
  return attributes;
}

/** What a response said about itself, gathered from a whole answer or chunk by chunk. */
export interface ResponseFacts {
  id?: string;
  model?: string;
  finishReasons: string[];
  usage?: Usage;
}

/** Sets the facts on an attempt's span. */
export function recordResponse(span: Span, facts: ResponseFacts): void {
  if (facts.id !== undefined) span.setAttribute(ATTR_GEN_AI_RESPONSE_ID, facts.id);
  if (facts.model !== undefined) span.setAttribute(ATTR_GEN_AI_RESPONSE_MODEL, facts.model);
  if (facts.finishReasons.length > 0) span.setAttribute(ATTR_GEN_AI_RESPONSE_FINISH_REASONS, facts.finishReasons);
  if (facts.usage) {
    // OpenAI's prompt_tokens include cached ones, as the conventions' input_tokens do.
    span.setAttribute(ATTR_GEN_AI_USAGE_INPUT_TOKENS, facts.usage.prompt_tokens);
    span.setAttribute(ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, facts.usage.completion_tokens);
  }
}

function addReason(facts: ResponseFacts, reason: unknown): void {
  if (typeof reason === 'string' && !facts.finishReasons.includes(reason)) facts.finishReasons.push(reason);
}

/** A non-streamed chat completion. */
export function completionFacts(completion: ChatCompletion): ResponseFacts {
  const facts: ResponseFacts = { id: completion.id, model: completion.model, finishReasons: [] };
  for (const choice of completion.choices) addReason(facts, choice.finish_reason);
  if (completion.usage) facts.usage = completion.usage;
  return facts;
}

/** One chunk of a streamed chat completion. */
export function addChunk(facts: ResponseFacts, chunk: ChatCompletionChunk): void {
  facts.id ??= chunk.id;
  facts.model ??= chunk.model;
  for (const choice of chunk.choices) addReason(facts, choice.finish_reason);
  if (chunk.usage) facts.usage = chunk.usage;
}

/** An embeddings response (input tokens only). */
export function embeddingsFacts(response: EmbeddingsResponse): ResponseFacts {
  const facts: ResponseFacts = { model: response.model, finishReasons: [] };
  if (response.usage) facts.usage = { prompt_tokens: response.usage.prompt_tokens, completion_tokens: 0, total_tokens: response.usage.prompt_tokens };
  return facts;
}

/** A message of Anthropic's Messages API, its cache reads and writes counted as input. */
export function messageFacts(message: NativeMessage): ResponseFacts {
  const facts: ResponseFacts = { finishReasons: [] };
  if (typeof message.id === 'string') facts.id = message.id;
  if (typeof message.model === 'string') facts.model = message.model;
  addReason(facts, message.stop_reason);
  const usage = readUsage(message.usage);
  if (usage) facts.usage = anthropicUsageOf(usage);
  return facts;
}

/**
 * A reader of one Messages API stream's events: message_start names the message and counts its
 * input, message_delta ends it with the stop reason and the (cumulative) output count.
 */
export function messageEventReader(): (facts: ResponseFacts, event: NativeEvent) => void {
  let start: AnthropicUsage | null = null;
  let delta: AnthropicUsage | null = null;
  return (facts, event) => {
    if (event.type === 'message_start' && isRecord(event.message)) {
      if (typeof event.message.id === 'string') facts.id = event.message.id;
      if (typeof event.message.model === 'string') facts.model = event.message.model;
      start = readUsage(event.message.usage);
    } else if (event.type === 'message_delta') {
      if (isRecord(event.delta)) addReason(facts, event.delta.stop_reason);
      delta = readUsage(event.usage) ?? delta;
    } else {
      return;
    }
    if (start !== null || delta !== null) facts.usage = anthropicUsageOf({ ...start, ...delta });
  };
}
