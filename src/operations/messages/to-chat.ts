/**
 * A request of Anthropic's Messages API → the OpenAI chat request a chat upstream takes: sampling,
 * tools, tool choice, thinking and structured output here, the turns in to-chat-turns.ts. Fields
 * chat has no counterpart for (top-level cache_control, container, context_management…) are not
 * carried; they matter only to an Anthropic upstream, which gets the body as sent.
 *
 * Cheap: one pass, no tokenizer and no I/O. For a token estimate without translating (a request
 * routed natively may use server tools, which do not translate) see prompt-text.ts.
 */
import { UnsupportedParameterError } from '../../errors/gateway-error.ts';
import type { ChatRequest, Tool, ToolChoice } from '../../wire/openai-chat.ts';
import type { Effort, MessagesRequest, ToolChoiceParam, ToolParam } from '../../wire/anthropic-messages.ts';
import { turnsToChat } from './to-chat-turns.ts';

/** A Messages request as a chat upstream takes it; `model` and `stream` are the delivery's, as for a chat request. */
export interface TranslatedRequest {
  model: string;
  stream: boolean;
  chat: ChatRequest;
}

/** Translates a request validated at the door; throws a GatewayError naming what chat cannot express, by its Anthropic path. */
export function messagesToChat(request: MessagesRequest): TranslatedRequest {
  const { model } = request;
  const chat: ChatRequest = { messages: turnsToChat(request, model), max_tokens: request.max_tokens };
  if (request.temperature !== undefined) chat.temperature = request.temperature;
  if (request.top_p !== undefined) chat.top_p = request.top_p;
  if (request.top_k !== undefined) chat.top_k = request.top_k;
  if (request.stop_sequences !== undefined && request.stop_sequences.length > 0) chat.stop = request.stop_sequences;
  const user = request.metadata?.user_id;
  if (typeof user === 'string') chat.user = user;
  Object.assign(chat, toolFields(request, model));
  const effort = reasoningEffortOf(request);
  if (effort !== undefined) chat.reasoning_effort = effort;
  const format = request.output_config?.format;
  // Chat's json_schema needs a name, which Anthropic's format does not have.
  if (format != null) chat.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema, strict: true } };
  return { model, stream: request.stream === true, chat };
}

// Without tools there is nothing to choose from, and chat upstreams refuse a tool_choice alone.
function toolFields(request: MessagesRequest, model: string): Pick<ChatRequest, 'tools' | 'tool_choice' | 'parallel_tool_calls'> {
  const tools = request.tools ?? [];
  if (tools.length === 0) return {};
  const fields: Pick<ChatRequest, 'tools' | 'tool_choice' | 'parallel_tool_calls'> = { tools: tools.map((tool, i) => functionTool(tool, i, model)) };
  const choice = request.tool_choice;
  if (choice === undefined) return fields;
  fields.tool_choice = toolChoiceOf(choice);
  if (choice.disable_parallel_tool_use === true) fields.parallel_tool_calls = false;
  return fields;
}

// A server tool (web search, code execution…) runs on Anthropic's side; a chat upstream has only
// functions that the client runs.
function functionTool(tool: ToolParam, i: number, model: string): Tool {
  if (tool.type != null && tool.type !== 'custom') {
    throw new UnsupportedParameterError(
      `tools[${i}]`,
      model,
      `a server tool ('${tool.type}'); only client tools, with an input_schema, translate to chat functions`,
    );
  }
  const fn: Tool['function'] = { name: tool.name, parameters: tool.input_schema ?? { type: 'object', properties: {} } };
  if (tool.description !== undefined) fn.description = tool.description;
  if (tool.strict !== undefined) fn.strict = tool.strict;
  const translated: Tool = { type: 'function', function: fn };
  if (tool.cache_control != null) translated.cache_control = tool.cache_control;
  return translated;
}

function toolChoiceOf(choice: ToolChoiceParam): ToolChoice {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name ?? '' } };
  }
}

// Chat's efforts stop at xhigh.
const CHAT_EFFORT: Readonly<Record<Effort, string>> = { low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'xhigh' };

// The Anthropic adapter gives low, medium and high budgets of 2048, 8192 and 24576 tokens
// (src/providers/anthropic/request.ts); these thresholds lie between them, so that a budget the
// adapter chose comes back as the effort it came from.
const LOW_BELOW = 4096;
const MEDIUM_BELOW = 16384;

/** Chat's reasoning_effort: from a thinking budget, else from output_config.effort (adaptive thinking, or effort alone). */
function reasoningEffortOf(request: MessagesRequest): string | undefined {
  const { thinking } = request;
  if (thinking?.type === 'disabled') return undefined;
  if (thinking?.type === 'enabled') {
    const budget = thinking.budget_tokens ?? 0;
    return budget < LOW_BELOW ? 'low' : budget < MEDIUM_BELOW ? 'medium' : 'high';
  }
  const effort = request.output_config?.effort;
  return effort == null ? undefined : CHAT_EFFORT[effort];
}
