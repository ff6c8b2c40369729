/**
 * OpenAI messages → Gemini's `systemInstruction` and `contents`: system and developer text goes to the
 * instruction; the rest becomes alternating `user` / `model` turns, tool results included.
 */
import { InvalidValueError, UnsupportedParameterError } from '../../errors/gateway-error.ts';
import type { ChatMessage, ContentPart } from '../../wire/openai-chat.ts';
import { isRecord } from '../../wire/json.ts';
import { toGeminiPart } from './parts.ts';
import type { GeminiContent, GeminiFunctionCallPart, GeminiPart, GeminiTextPart } from './wire.ts';

/** The conversation as Gemini takes it. */
export interface GeminiPrompt {
  systemInstruction?: { parts: GeminiTextPart[] };
  contents: GeminiContent[];
}

/** Translates the messages; throws a GatewayError for what Gemini cannot express. */
export function toGeminiPrompt(messages: ChatMessage[], alias: string): GeminiPrompt {
  const system: GeminiTextPart[] = [];
  const contents: GeminiContent[] = [];
  messages.forEach((message, i) => {
    const param = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...textParts(message.content, param).map((text) => ({ text })));
        return;
      case 'user':
        return addTurn(contents, 'user', contentParts(message.content, param, alias));
      case 'assistant':
        return addTurn(contents, 'model', [...contentParts(message.content, param, alias), ...functionCallParts(message, param)]);
      case 'tool':
        return addTurn(contents, 'user', [functionResponsePart(messages, i)]);
      default:
        throw new UnsupportedParameterError(`${param}.role`, alias, "the deprecated 'function' role; send a 'tool' message with its tool_call_id");
    }
  });
  return system.length > 0 ? { systemInstruction: { parts: system }, contents } : { contents };
}

// Gemini wants turns to alternate: a turn of the same role as the last one joins it (so parallel
// tool results land in one turn, as Gemini requires); a turn with nothing to say is left out.
function addTurn(contents: GeminiContent[], role: GeminiContent['role'], parts: GeminiPart[]): void {
  if (parts.length === 0) return;
  const last = contents.at(-1);
  if (last?.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

function contentParts(content: ChatMessage['content'], param: string, alias: string): GeminiPart[] {
  if (content === undefined || content === null || content === '') return [];
  if (typeof content === 'string') return [{ text: content }];
  return content.map((part, j) => toGeminiPart(part, `${param}.content[${j}]`, alias)).filter((part) => part !== null);
}

// The texts of a message that may hold text only (system, developer, tool); empty ones are dropped.
function textParts(content: ChatMessage['content'], param: string): string[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content === '' ? [] : [content];
  return content.map((part, j) => textOf(part, `${param}.content[${j}]`)).filter((text) => text !== '');
}

function textOf(part: ContentPart, param: string): string {
  if (part.type !== 'text') throw new InvalidValueError(`${param}.type`, `This message takes text parts only, not '${part.type}'.`);
  return part.text ?? '';
}

function functionCallParts(message: ChatMessage, param: string): GeminiFunctionCallPart[] {
  return (message.tool_calls ?? []).map((call, j) => {
    const args = parseArguments(call.function.arguments, `${param}.tool_calls[${j}].function.arguments`);
    const part: GeminiFunctionCallPart = { functionCall: { name: call.function.name, args } };
    // Gemini 3 refuses a function call of the current turn that comes back without its signature.
    const signature = call.extra_content?.google?.thought_signature;
    if (signature !== undefined) part.thoughtSignature = signature;
    return part;
  });
}

function parseArguments(text: string, param: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch {
    throw new InvalidValueError(param, 'The tool call arguments are not valid JSON.');
  }
  if (!isRecord(args)) throw new InvalidValueError(param, 'The tool call arguments must be a JSON object.');
  return args;
}

function functionResponsePart(messages: ChatMessage[], i: number): GeminiPart {
  const message = messages[i] as ChatMessage;
  const id = message.tool_call_id ?? '';
  const text = textParts(message.content, `messages[${i}]`).join('\n');
  return { functionResponse: { name: toolNameOf(messages, i, id), response: responseOf(text) } };
}

// Gemini matches a response to its call by function name, which OpenAI's tool message does not carry.
function toolNameOf(messages: ChatMessage[], i: number, id: string): string {
  for (let k = i - 1; k >= 0; k -= 1) {
    const message = messages[k];
    if (message?.role !== 'assistant') continue;
    const call = message.tool_calls?.find((candidate) => candidate.id === id);
    if (call !== undefined) return call.function.name;
  }
  throw new InvalidValueError(`messages[${i}].tool_call_id`, `No earlier assistant message has a tool call with id '${id}'.`);
}

function responseOf(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) return parsed;
  } catch {
    // Not JSON: sent as text below.
  }
  return { content: text };
}
