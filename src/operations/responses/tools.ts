/**
 * A Responses request's `tools` and `tool_choice` → chat's. A function passes as it is; a namespace
 * becomes its functions, each under the name namespaced-names.ts gives it.
 *
 * A hosted tool, one OpenAI runs on its side, is dropped: every provider is reached through chat,
 * which has no hosted tools, and none of them runs one, while clients such as Codex send web search
 * with every request, so that refusing it would refuse them all. The route names what was dropped
 * (`x-gateway-dropped-tools`). A `tool_choice` that requires a dropped tool is refused, since no
 * answer could honour it. Tools the client runs but chat cannot express (computer use, custom,
 * local shell, apply_patch…) are refused: the client expects the model to call them.
 */
import { InvalidValueError, MissingRequiredFieldError, UnsupportedParameterError } from '../../errors/gateway-error.ts';
import type { ChatRequest, Tool, ToolChoice } from '../../wire/openai-chat.ts';
import type { NamespaceMember, RequestTool, RequestToolChoice, ResponsesRequest } from '../../wire/openai-responses.ts';
import { chatToolName } from './namespaced-names.ts';

/** The tools OpenAI runs itself, as the SDK's `Tool` union names them (dated versions included). */
const HOSTED_TOOL_TYPES: ReadonlySet<string> = new Set([
  'web_search',
  'web_search_2025_08_26',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'file_search',
  'code_interpreter',
  'image_generation',
  'mcp',
]);

const NOT_RUN = 'which no provider behind this gateway runs';

/** The chat request's `tools` and `tool_choice`, and the hosted tool types left out, each once, in the order of the tools. */
export type ChatTools = Pick<ChatRequest, 'tools' | 'tool_choice'> & { dropped: string[] };

/** Translates the tools of a validated request; throws a GatewayError for what cannot be served. */
export function chatToolsOf(request: ResponsesRequest): ChatTools {
  const tools: Tool[] = [];
  const dropped: string[] = [];
  // Each chat name and the parameter of the tool that took it.
  const taken = new Map<string, string>();
  const add = (tool: Tool, param: string) => {
    const earlier = taken.get(tool.function.name);
    if (earlier !== undefined)
      throw new InvalidValueError(
        `${param}.name`,
        `The tools ${earlier} and ${param} would both reach the model as '${tool.function.name}'; rename one of them.`,
      );
    taken.set(tool.function.name, param);
    tools.push(tool);
  };
  for (const [i, tool] of (request.tools ?? []).entries()) {
    const param = `tools[${i}]`;
    if (HOSTED_TOOL_TYPES.has(tool.type)) {
      if (!dropped.includes(tool.type)) dropped.push(tool.type);
    } else if (tool.type === 'namespace') {
      if (tool.name === undefined) throw new MissingRequiredFieldError(`${param}.name`);
      for (const [j, member] of (tool.tools ?? []).entries()) add(functionOf(member, `${param}.tools[${j}]`, request.model, tool.name), `${param}.tools[${j}]`);
    } else {
      add(functionOf(tool, param, request.model), param);
    }
  }
  const translated: ChatTools = { dropped };
  if (tools.length > 0) translated.tools = tools;
  const choice = request.tool_choice === undefined ? undefined : toolChoiceOf(request.tool_choice, request.model, tools.length, dropped);
  if (choice !== undefined) translated.tool_choice = choice;
  return translated;
}

/** A function tool, named under its namespace when it is in one. */
function functionOf(tool: RequestTool | NamespaceMember, param: string, model: string, namespace?: string): Tool {
  if (tool.type !== 'function')
    throw new UnsupportedParameterError(param, model, `tools of type '${tool.type}'; this gateway serves function and namespace tools`);
  if (tool.name === undefined) throw new MissingRequiredFieldError(`${param}.name`);
  const fn: Tool['function'] = { name: namespace === undefined ? tool.name : chatToolName(namespace, tool.name) };
  if (tool.description != null) fn.description = tool.description;
  if (tool.parameters != null) fn.parameters = tool.parameters;
  if (tool.strict != null) fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

function toolChoiceOf(choice: RequestToolChoice, model: string, served: number, dropped: readonly string[]): ToolChoice | undefined {
  if (typeof choice === 'string') {
    if (served > 0 || dropped.length === 0) return choice;
    // Only hosted tools were asked for: chat takes no tool_choice without tools, and `required` cannot be met.
    if (choice === 'required')
      throw new UnsupportedParameterError('tool_choice', model, `'required' with only hosted tools (${dropped.join(', ')}), ${NOT_RUN}`);
    return undefined;
  }
  if (choice.type === 'function') {
    if (choice.name === undefined) throw new MissingRequiredFieldError('tool_choice.name');
    return { type: 'function', function: { name: choice.name } };
  }
  if (HOSTED_TOOL_TYPES.has(choice.type)) throw new UnsupportedParameterError('tool_choice', model, `type '${choice.type}', a hosted tool ${NOT_RUN}`);
  throw new UnsupportedParameterError('tool_choice', model, `type '${choice.type}'; use none, auto, required or a function`);
}
