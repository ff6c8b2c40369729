/** OpenAI chat request → the Gemini API call: `generateContent` or `streamGenerateContent?alt=sse`. */
import type { ModelOf } from '../model.ts';
import type { geminiDescriptor } from './descriptor.ts';
import type { ChatRequest, ResponseFormat, Tool, ToolChoice } from '../../wire/openai-chat.ts';
import type { UpstreamCall } from '../shared/send.ts';
import type { ProviderTarget } from '../types.ts';
import { toGeminiPrompt } from './contents.ts';
import { toGeminiSchema } from './schema.ts';
import type { GeminiFunctionDeclaration, GeminiGenerationConfig, GeminiRequest, GeminiSchema, GeminiThinkingConfig, GeminiToolConfig } from './wire.ts';
import { reasoningEffortOf, type ReasoningEffort } from '../descriptor.ts';
import { GEMINI_BASE_URL } from './descriptor.ts';

type Target = ProviderTarget<ModelOf<typeof geminiDescriptor>>;

/** `thinkingBudget` for each reasoning effort (models with `thinking: 'budget'`, Gemini 2.5). */
export const THINKING_BUDGETS: Readonly<Record<ReasoningEffort, number>> = { none: 0, minimal: 512, low: 1024, medium: 8192, high: 24576, xhigh: 32768 };

/** `thinkingLevel` for each reasoning effort (models with `thinking: 'level'`, Gemini 3). */
export const THINKING_LEVELS: Readonly<Record<ReasoningEffort, NonNullable<GeminiThinkingConfig['thinkingLevel']>>> = {
  none: 'minimal',
  minimal: 'minimal',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
};

const TOOL_CHOICE_MODES = { auto: 'AUTO', required: 'ANY', none: 'NONE' } as const;

/** The full HTTP call: URL, key header and body. */
export function buildGeminiCall(target: Target, body: ChatRequest, stream: boolean): UpstreamCall {
  const base = (target.model.base_url ?? GEMINI_BASE_URL).replace(/\/+$/, '');
  const model = `${base}/v1beta/models/${encodeURIComponent(target.upstreamModel)}`;
  const key: Record<string, string> = target.apiKey !== null && target.apiKey !== '' ? { 'x-goog-api-key': target.apiKey } : {};
  return {
    url: stream ? `${model}:streamGenerateContent?alt=sse` : `${model}:generateContent`,
    headers: { 'content-type': 'application/json', ...key },
    body: JSON.stringify(buildGeminiBody(target, body)),
  };
}

/** The request body (the same for both endpoints); throws a GatewayError for what Gemini cannot express. */
export function buildGeminiBody(target: Target, body: ChatRequest): GeminiRequest {
  const request: GeminiRequest = toGeminiPrompt(body.messages, target.alias);
  const tools = body.tools ?? [];
  if (tools.length > 0) {
    request.tools = [{ functionDeclarations: tools.map(declarationOf) }];
    // A tool_choice without tools says nothing; Gemini is not told.
    if (body.tool_choice !== undefined) request.toolConfig = toolConfigOf(body.tool_choice);
  }
  const generationConfig = generationConfigOf(target, body);
  if (Object.keys(generationConfig).length > 0) request.generationConfig = generationConfig;
  return request;
}

function declarationOf(tool: Tool): GeminiFunctionDeclaration {
  const declaration: GeminiFunctionDeclaration = { name: tool.function.name };
  if (tool.function.description !== undefined) declaration.description = tool.function.description;
  const parameters = tool.function.parameters === undefined ? undefined : parametersOf(tool.function.parameters);
  if (parameters !== undefined) declaration.parameters = parameters;
  return declaration;
}

// Gemini refuses an OBJECT schema without properties, and a top level that is not an OBJECT:
// a function without arguments is declared without `parameters`.
function parametersOf(schema: Record<string, unknown>): GeminiSchema | undefined {
  const converted = toGeminiSchema(schema);
  if (converted.properties === undefined && converted.anyOf === undefined) return undefined;
  return converted.type === undefined ? { type: 'object', ...converted } : converted;
}

function toolConfigOf(choice: ToolChoice): GeminiToolConfig {
  if (typeof choice === 'string') return { functionCallingConfig: { mode: TOOL_CHOICE_MODES[choice] } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
}

function generationConfigOf(target: Target, body: ChatRequest): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  if (body.temperature != null) config.temperature = body.temperature;
  if (body.top_p != null) config.topP = body.top_p;
  if (body.top_k != null) config.topK = body.top_k;
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxTokens != null) config.maxOutputTokens = maxTokens;
  if (body.stop != null) config.stopSequences = typeof body.stop === 'string' ? [body.stop] : body.stop;
  if (body.seed != null) config.seed = body.seed;
  if (body.presence_penalty != null) config.presencePenalty = body.presence_penalty;
  if (body.frequency_penalty != null) config.frequencyPenalty = body.frequency_penalty;
  Object.assign(config, responseFormatOf(body.response_format));
  const thinkingConfig = thinkingConfigOf(target, body);
  if (thinkingConfig !== undefined) config.thinkingConfig = thinkingConfig;
  return config;
}

function responseFormatOf(format: ResponseFormat | undefined): GeminiGenerationConfig {
  if (format?.type === 'json_object') return { responseMimeType: 'application/json' };
  if (format?.type !== 'json_schema') return {};
  const schema = format.json_schema?.schema;
  // responseJsonSchema takes JSON Schema as it is, unlike function parameters.
  return schema === undefined ? { responseMimeType: 'application/json' } : { responseMimeType: 'application/json', responseJsonSchema: schema };
}

function thinkingConfigOf(target: Target, body: ChatRequest): GeminiThinkingConfig | undefined {
  const effort = reasoningEffortOf(body.reasoning_effort ?? target.model.reasoning_effort);
  if (effort === null) return undefined;
  if (target.model.thinking === 'level') return { thinkingLevel: THINKING_LEVELS[effort], includeThoughts: true };
  const thinkingBudget = THINKING_BUDGETS[effort];
  return thinkingBudget > 0 ? { thinkingBudget, includeThoughts: true } : { thinkingBudget: 0 };
}
