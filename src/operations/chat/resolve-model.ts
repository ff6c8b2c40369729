import {
  AutoModelUnavailableError,
  ContextLengthExceededError,
  ModelNotFoundError,
  UnsupportedParameterError,
  WrongModelModeError,
  type GatewayError,
} from '../../errors/gateway-error.ts';
import { candidatesOf, type CatalogEntry } from '../../domain/catalog/load-catalog.ts';
import type { CatalogFile } from '../../domain/catalog/schema.ts';
import { countPromptTokens, promptTokensUpperBound } from '../../providers/shared/tokens.ts';
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

/** A parameter the catalog or the model's provider refuses. */
export function unsupported(body: ChatCompletionRequest, model: CatalogEntry): GatewayError | undefined {
  const param = rejectedParam(body, model);
  if (param) return new UnsupportedParameterError(param, model.alias);
  return providerCannotServe(body, descriptorOf(model.provider), model.alias);
}

/** A prompt's tokens: bounded without the tokenizer, counted once, and only when a window needs it. */
export class PromptTokens {
  readonly #bound: number;
  readonly #count: () => number;
  #counted: number | undefined;

  /** `bound`: an upper bound (the UTF-8 bytes: a token covers at least one); `count`: the tokenizer's count. */
  constructor(bound: number, count: () => number) {
    this.#bound = bound;
    this.#count = count;
  }

  /** The count, when a window needed it. */
  get counted(): number | undefined {
    return this.#counted;
  }

  /** The count, made now unless a window already needed it. */
  count(): number {
    this.#counted ??= this.#count();
    return this.#counted;
  }

  /** The prompt's tokens when they and `output` do not fit `window`; null when they fit. */
  exceeding(window: number, output: number): number | null {
    if (this.#bound + output <= window) return null;
    const counted = this.count();
    return counted + output > window ? counted : null;
  }
}

/** The chat models an alias stands for; `route` names the endpoint in the refusal of an embeddings model. */
export function chatCandidatesOf(catalog: CatalogFile, alias: string, route: string): CatalogEntry[] {
  if (alias === 'auto') throw new AutoModelUnavailableError();
  const candidates = candidatesOf(catalog, alias);
  if (!candidates) throw new ModelNotFoundError(alias);
  // Tiers are chat models only (the catalog loader sees to it): an embeddings model is an alias of its own.
  if (candidates[0]?.mode === 'embeddings') throw new WrongModelModeError(alias, 'embeddings', route);
  return candidates;
}

/**
 * Keeps the candidates `problemOf` finds nothing against; a candidate whose window the prompt
 * overflows gives way to the larger model its catalog entry names (`context_window_fallback`, in a
 * chain of ever larger windows), if that one can take it. When none is left, the first one's
 * problem is the answer.
 */
export function usableCandidates(
  catalog: Pick<CatalogFile, 'models'>,
  candidates: CatalogEntry[],
  problemOf: (model: CatalogEntry) => GatewayError | undefined,
): CatalogEntry[] {
  let firstProblem: GatewayError | undefined;
  const usable: CatalogEntry[] = [];
  for (const candidate of candidates) {
    let model = candidate;
    let problem = problemOf(model);
    firstProblem ??= problem;
    for (let fallback = model.context_window_fallback; problem instanceof ContextLengthExceededError && fallback !== undefined;) {
      model = { ...(catalog.models[fallback] as CatalogEntry), alias: fallback };
      problem = problemOf(model);
      fallback = model.context_window_fallback;
    }
    if (problem === undefined && !usable.some((kept) => kept.alias === model.alias)) usable.push(model);
  }
  if (usable.length === 0) throw firstProblem as GatewayError;
  return usable;
}

/** Why a chat model cannot take a chat request: a parameter the catalog or its provider rejects, or a window too small. */
export function chatProblem(body: ChatCompletionRequest, model: CatalogEntry, tokens: PromptTokens): GatewayError | undefined {
  const problem = unsupported(body, model);
  if (problem) return problem;
  // As OpenAI does, only an explicit max_tokens is counted against the window.
  const output = requestedOutput(body) ?? 0;
  const counted = tokens.exceeding(model.context_window, output);
  return counted === null ? undefined : new ContextLengthExceededError(model.alias, counted, output, model.context_window);
}

/** A chat request's prompt tokens (OpenAI's per-message accounting). */
export function chatPromptTokens(body: ChatCompletionRequest): PromptTokens {
  return new PromptTokens(promptTokensUpperBound(body.messages), () => countPromptTokens(body.messages));
}

/**
 * Resolves the alias to its candidates (chat models; `route` names the endpoint when it is not
 * one) and drops those that cannot take the request (a parameter the catalog or the provider
 * rejects, a context window too small). When none is left, the first candidate's reason is the
 * answer: 422 `unsupported_parameter` or `context_length_exceeded`.
 */
export function resolveModel(catalog: CatalogFile, body: ChatCompletionRequest, route: string): ResolvedModel {
  const tokens = chatPromptTokens(body);
  const candidates = usableCandidates(catalog, chatCandidatesOf(catalog, body.model, route), (model) => chatProblem(body, model, tokens));
  return { candidates, promptTokens: tokens.counted };
}
