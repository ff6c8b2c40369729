/**
 * The names a namespace's functions go by upstream. Chat has no namespaces, so the function
 * `close_agent` of the namespace `multi_agent_v1` is offered as `multi_agent_v1__close_agent`: `__`
 * because providers take only `[a-zA-Z0-9_-]` in a tool name (OpenAI and Anthropic; Gemini a few
 * characters more), and because MCP clients (Codex, Claude Code) already qualify a server's tools so.
 *
 * No name is split back: the upstream's call is mapped back by the request's own tools
 * (`namespacedNames`), so a namespace or a function with `__` in its name is no ambiguity, and two
 * tools that would go by one name are refused (tools.ts).
 */
import { createHash } from 'node:crypto';
import type { RequestTool } from '../../wire/openai-responses.ts';

/** The least of the providers' tool name limits (OpenAI's and Anthropic's). */
const MAX_NAME_LENGTH = 64;
const HASH_LENGTH = 8;

/**
 * The upstream's name of a namespace's function. One past 64 characters is cut to 55 and ends with
 * `_` and 8 hex digits of the whole name's SHA-256, so that two long names sharing a start stay apart.
 */
export function chatToolName(namespace: string, name: string): string {
  const joined = `${namespace}__${name}`;
  if (joined.length <= MAX_NAME_LENGTH) return joined;
  const hash = createHash('sha256').update(joined).digest('hex').slice(0, HASH_LENGTH);
  return `${joined.slice(0, MAX_NAME_LENGTH - HASH_LENGTH - 1)}_${hash}`;
}

/** A function as a Responses client names it: its own name, and its namespace when it is in one. */
export interface CallName {
  name: string;
  namespace?: string;
}

/** A request's namespaced functions, by the name the upstream knows them by. */
export type NamespacedNames = ReadonlyMap<string, Required<CallName>>;

/** Reads them from the request's namespace tools. */
export function namespacedNames(tools: readonly RequestTool[] | undefined): NamespacedNames {
  const names = new Map<string, Required<CallName>>();
  for (const tool of tools ?? []) {
    if (tool.type !== 'namespace' || tool.name === undefined) continue;
    for (const member of tool.tools ?? []) {
      if (member.type === 'function') names.set(chatToolName(tool.name, member.name), { name: member.name, namespace: tool.name });
    }
  }
  return names;
}

/** How a client names the function the upstream called by `chatName`: an unknown name is left as it came. */
export function callNameOf(chatName: string, names: NamespacedNames): CallName {
  return names.get(chatName) ?? { name: chatName };
}
