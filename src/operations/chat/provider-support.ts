import { UnsupportedParameterError } from '../../errors/gateway-error.ts';
import type { ProviderDescriptor } from '../../providers/descriptor.ts';
import type { ChatCompletionRequest } from './request-schema.ts';

// The door's own fields: every provider takes them, whatever its descriptor lists.
const DOOR_FIELDS = new Set(['model', 'messages', 'stream', 'stream_options']);

// Values that ask for nothing: clients (LangChain, older SDKs) send some parameters with their
// defaults, which a provider without the parameter serves as well as one with it.
const NEUTRAL: Readonly<Record<string, (value: unknown) => boolean>> = {
  frequency_penalty: (value) => value === 0,
  presence_penalty: (value) => value === 0,
  n: (value) => value === 1,
  logprobs: (value) => value === false,
  logit_bias: (value) => typeof value === 'object' && value !== null && Object.keys(value).length === 0,
  parallel_tool_calls: (value) => value === true,
};

function sent(key: string, value: unknown): boolean {
  return value !== undefined && value !== null && NEUTRAL[key]?.(value) !== true;
}

function unsupportedParam(request: ChatCompletionRequest, params: ReadonlySet<string>): string | undefined {
  return Object.entries(request).find(([key, value]) => !DOOR_FIELDS.has(key) && !params.has(key) && sent(key, value))?.[0];
}

function unsupportedPart(request: ChatCompletionRequest, parts: ReadonlySet<string>): { param: string; type: string } | undefined {
  for (const [i, message] of request.messages.entries()) {
    if (!Array.isArray(message.content)) continue;
    const j = message.content.findIndex((part) => !parts.has(part.type));
    if (j !== -1) return { param: `messages[${i}].content[${j}]`, type: (message.content[j] as { type: string }).type };
  }
  return undefined;
}

/**
 * Why a model's provider cannot serve the request, found at the door (before anything is queued or
 * reserved): a parameter its descriptor does not list (sent with a value that asks for something),
 * a content part type it cannot take, or a value it cannot express. Undefined when it can.
 */
export function providerCannotServe(request: ChatCompletionRequest, descriptor: ProviderDescriptor, alias: string): UnsupportedParameterError | undefined {
  const param = descriptor.params === null ? undefined : unsupportedParam(request, descriptor.params);
  if (param !== undefined) return new UnsupportedParameterError(param, alias);
  const part = descriptor.contentParts === null ? undefined : unsupportedPart(request, descriptor.contentParts);
  if (part !== undefined) return new UnsupportedParameterError(part.param, alias, `content of type '${part.type}'`);
  const use = descriptor.unsupported?.(request);
  return use ? new UnsupportedParameterError(use.param, alias, use.detail) : undefined;
}
