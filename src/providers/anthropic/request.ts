/** OpenAI chat request → the HTTP call to Anthropic's `POST {base_url}/v1/messages`. */
import type { ModelOf } from '../model.ts';
import type { anthropicDescriptor } from './descriptor.ts';
import { InvalidValueError, UnsupportedParameterError } from '../../errors/gateway-error.ts';
import type { ChatRequest, Tool, ToolChoice } from '../../wire/openai-chat.ts';
import type { UpstreamCall } from '../shared/send.ts';
import type { ProviderTarget } from '../types.ts';
import { translateMessages } from './messages.ts';
import type { AnthropicEffort, AnthropicOutputConfig, AnthropicRequest, AnthropicThinking, AnthropicTool, AnthropicToolChoice } from './wire.ts';
import { reasoningEffortOf, type ReasoningEffort } from '../descriptor.ts';
import { ANTHROPIC_BASE_URL } from './descriptor.ts';

type Target = ProviderTarget<ModelOf<typeof anthropicDescriptor>>;

/** The API version every call is made against. */
export const ANTHROPIC_VERSION = '2023-06-01';

type ActiveEffort = Exclude<ReasoningEffort, 'none'>;

// budget_tokens per effort; Anthropic's minimum budget is 1024.
const BUDGET_TOKENS: Readonly<Record<ActiveEffort, number>> = { minimal: 1024, low: 2048, medium: 8192, high: 24576, xhigh: 32768 };
const MIN_BUDGET_TOKENS = 1024;
const ADAPTIVE_EFFORT: Readonly<Record<ActiveEffort, AnthropicEffort>> = { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh' };

/** The Messages API body for a chat request. */
export function buildAnthropicBody(target: Target, body: ChatRequest, stream: boolean): AnthropicRequest {
  const { system, messages } = translateMessages(body.messages, target.alias);
  const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? target.model.max_output_tokens;
  const request: AnthropicRequest = { model: target.upstreamModel, max_tokens: maxTokens, messages };
  if (system.length > 0) request.system = system;
  Object.assign(request, samplingFields(body));
  Object.assign(request, toolFields(body, target.alias));
  const reasoning = reasoningFields(target, body, maxTokens);
  if (reasoning.thinking !== undefined) request.thinking = reasoning.thinking;
  const outputConfig: AnthropicOutputConfig = { ...reasoning.outputConfig, ...structuredOutput(body, target.alias) };
  if (Object.keys(outputConfig).length > 0) request.output_config = outputConfig;
  if (stream) request.stream = true;
  return request;
}

/**
 * The URL and headers of a Messages API call: key, version, and the beta flags of the catalog entry
 * with those the client asked for (`betas`, a client of our /v1/messages routed natively).
 */
export function messagesAddress(target: Target, stream: boolean, betas: readonly string[] = []): Omit<UpstreamCall, 'body'> {
  const base = (target.model.base_url ?? ANTHROPIC_BASE_URL).replace(/\/+$/, '');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
    'anthropic-version': ANTHROPIC_VERSION,
  };
  if (target.apiKey !== null && target.apiKey !== '') headers['x-api-key'] = target.apiKey;
  const beta = [...new Set([...(target.model.anthropic_beta ?? []), ...betas])];
  if (beta.length > 0) headers['anthropic-beta'] = beta.join(',');
  return { url: `${base}/v1/messages`, headers };
}

/** The full HTTP call: URL, headers and the serialised body. */
export function buildAnthropicRequest(target: Target, body: ChatRequest, stream: boolean): UpstreamCall {
  return { ...messagesAddress(target, stream), body: JSON.stringify(buildAnthropicBody(target, body, stream)) };
}

function samplingFields(body: ChatRequest): Partial<AnthropicRequest> {
  const fields: Partial<AnthropicRequest> = {};
  if (body.temperature !== undefined && body.temperature !== null) fields.temperature = body.temperature;
  if (body.top_p !== undefined && body.top_p !== null) fields.top_p = body.top_p;
  if (body.top_k !== undefined && body.top_k !== null) fields.top_k = body.top_k;
  const stop = body.stop === undefined || body.stop === null ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop;
  if (stop.length > 0) fields.stop_sequences = stop;
  if (body.user !== undefined) fields.metadata = { user_id: body.user };
  return fields;
}

function toolFields(body: ChatRequest, alias: string): Pick<AnthropicRequest, 'tools' | 'tool_choice'> {
  const tools = body.tools ?? [];
  if (tools.length === 0) return {};
  const choice = toolChoice(body.tool_choice, body.parallel_tool_calls === false, alias);
  return choice === undefined ? { tools: tools.map(toolOf) } : { tools: tools.map(toolOf), tool_choice: choice };
}

function toolOf(tool: Tool): AnthropicTool {
  const { name, description, parameters, strict } = tool.function;
  const translated: AnthropicTool = { name, input_schema: parameters ?? { type: 'object', properties: {} } };
  if (description !== undefined) translated.description = description;
  if (tool.cache_control !== undefined) translated.cache_control = { ...tool.cache_control };
  if (strict === true) translated.strict = true;
  return translated;
}

function toolChoice(choice: ToolChoice | undefined, serial: boolean, alias: string): AnthropicToolChoice | undefined {
  const parallel = serial ? { disable_parallel_tool_use: true as const } : {};
  if (choice === undefined) return serial ? { type: 'auto', ...parallel } : undefined;
  if (choice === 'none') return { type: 'none' };
  if (choice === 'auto') return { type: 'auto', ...parallel };
  if (choice === 'required') return { type: 'any', ...parallel };
  if (typeof choice === 'object' && choice.type === 'function') return { type: 'tool', name: choice.function.name, ...parallel };
  throw new UnsupportedParameterError('tool_choice', alias);
}

function structuredOutput(body: ChatRequest, alias: string): AnthropicOutputConfig {
  const format = body.response_format;
  if (format === undefined || format.type === 'text') return {};
  // Anthropic's structured outputs take a JSON schema only; there is no schema-less JSON mode.
  if (format.type === 'json_object') throw new UnsupportedParameterError('response_format', alias, "type 'json_object'; send type 'json_schema' with a schema");
  const schema = format.json_schema?.schema;
  if (schema === undefined) throw new InvalidValueError('response_format.json_schema.schema', 'Anthropic structured outputs need a JSON schema.');
  return { format: { type: 'json_schema', schema } };
}

function reasoningFields(target: Target, body: ChatRequest, maxTokens: number): { thinking?: AnthropicThinking; outputConfig?: AnthropicOutputConfig } {
  const effort = reasoningEffortOf(body.reasoning_effort ?? target.model.reasoning_effort);
  if (effort === null) return {};
  if (target.model.thinking === 'adaptive') {
    if (effort === 'none') return { thinking: { type: 'disabled' } };
    const display = target.model.thinking_display;
    return { thinking: display === undefined ? { type: 'adaptive' } : { type: 'adaptive', display }, outputConfig: { effort: ADAPTIVE_EFFORT[effort] } };
  }
  if (effort === 'none') return {};
  // budget_tokens must be at least 1024 and below max_tokens.
  const budget = Math.min(BUDGET_TOKENS[effort], maxTokens - 1);
  if (budget < MIN_BUDGET_TOKENS) {
    throw new InvalidValueError(
      'max_tokens',
      `With reasoning, Anthropic needs max_tokens above ${MIN_BUDGET_TOKENS} (the smallest thinking budget); got ${maxTokens}.`,
    );
  }
  return { thinking: { type: 'enabled', budget_tokens: budget } };
}
