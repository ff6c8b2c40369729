import { UnknownPromptError } from '../../errors/gateway-error.ts';
import type { PromptCache } from '../../domain/prompts/prompt-cache.ts';
import { renderTemplates } from '../../domain/prompts/template.ts';
import type { ChatCompletionBody, ChatCompletionRequest } from './request-schema.ts';
import type { RequestShape } from './request-shape.ts';

/** The request to run, and the prompt version it came from (null for a plain request). */
export interface ResolvedPrompt {
  request: ChatCompletionRequest;
  prompt: { name: string; version: number } | null;
}

/**
 * For a named-prompt request: the tenant's active version, its templates filled with the
 * variables, its model and parameters, and the client's delivery fields (stream, user).
 */
export async function resolvePrompt(prompts: PromptCache, tenantId: string, body: ChatCompletionBody, shape: RequestShape): Promise<ResolvedPrompt> {
  if (shape.kind === 'messages') return { request: body as ChatCompletionRequest, prompt: null };
  const active = await prompts.getActive(tenantId, shape.name);
  if (!active) throw new UnknownPromptError(shape.name);
  const { prompt: _prompt, variables: _variables, ...delivery } = body;
  const request = {
    ...active.parameters,
    ...delivery,
    model: active.model,
    messages: renderTemplates(active.messages, shape.variables),
  } as ChatCompletionRequest;
  return { request, prompt: { name: active.name, version: active.version } };
}
