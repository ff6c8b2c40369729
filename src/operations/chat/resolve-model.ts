import {
  AutoModelUnavailableError,
  ContextLengthExceededError,
  ModelNotFoundError,
  UnsupportedParameterError,
  WrongModelModeError,
  type GatewayError,
} from '../../errors/gateway-error.ts';
import { candidatesOf, type CatalogEntry } from '../../catalog/load-catalog.ts';
import type { CatalogFile } from '../../catalog/schema.ts';
import { countPromptTokens, promptTokensUpperBound } from '../../catalog/tokens.ts';
import type { ChatCompletionRequest } from './request-schema.ts';
import type { ChatRequest } from '../../wire/openai-chat.ts';
import { descriptorOf } from '../../providers/descriptors.ts';
import { providerCannotServe } from './provider-support.ts';

/** The models that may serve a request, in order, and the prompt tokens if they had to be counted. */
export interface ResolvedModel {
  candidates: CatalogEntry[];
  promptTokens: number | undefined;
}

/** The output the client allows (max_completion_tokens, or the older max_tokens); null when it sets none. */
export function requestedOutput(body: ChatRequest): number | null {
  return body.max_completion_tokens ?? body.max_tokens ?? null;
}

function rejectedParam(body: ChatCompletionRequest, model: CatalogEntry): string | undefined {
  return model.rejected_params?.find((param) => (body as Record<string, unknown>)[param] !== undefined);
}

function unsupported(body: ChatCompletionRequest, model: CatalogEntry): GatewayError | undefined {
  const param = rejectedParam(body, model);
  if (param) return new UnsupportedParameterError(param, model.alias);
  return providerCannotServe(body, descriptorOf(model.provider), model.alias);
}

/**
 * Resolves the alias to its candidates (chat models; `route` names the endpoint when it is not
 * one) and drops those that cannot take the request (a
 * parameter the catalog or the provider rejects, a context window too small). When none is
 * left, the first candidate's reason is the answer: 422 `unsupported_parameter` or
 * `context_length_exceeded`.
 */
export function resolveModel(catalog: CatalogFile, body: ChatCompletionRequest, route: string): ResolvedModel {
  if (body.model === 'auto') throw new AutoModelUnavailableError();
  const candidates = candidatesOf(catalog, body.model);
  if (!candidates) throw new ModelNotFoundError(body.model);
  // Tiers are chat models only (the catalog loader sees to it): an embeddings model is an alias of its own.
  if (candidates[0]?.mode === 'embeddings') throw new WrongModelModeError(body.model, 'embeddings', route);
  const bound = promptTokensUpperBound(body.messages);
  let promptTokens: number | undefined;
  let firstProblem: GatewayError | undefined;
  const usable = candidates.filter((model) => {
    // As OpenAI does, only an explicit max_tokens is counted against the window.
    const output = requestedOutput(body) ?? 0;
    let problem = unsupported(body, model);
    if (!problem && bound + output > model.context_window) {
      promptTokens ??= countPromptTokens(body.messages);
      if (promptTokens + output > model.context_window) problem = new ContextLengthExceededError(model.alias, promptTokens, output, model.context_window);
    }
    firstProblem ??= problem;
    return problem === undefined;
  });
  if (usable.length === 0) throw firstProblem as GatewayError;
  return { candidates: usable, promptTokens };
}
