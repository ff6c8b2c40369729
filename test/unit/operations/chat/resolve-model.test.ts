import { describe, expect, it } from 'vitest';
import { resolveModel } from '../../../../src/operations/chat/resolve-model.ts';
import type { ChatCompletionRequest } from '../../../../src/operations/chat/request-schema.ts';
import type { CatalogFile, CatalogModel } from '../../../../src/domain/catalog/schema.ts';
import { countPromptTokens, promptTokensUpperBound } from '../../../../src/providers/shared/tokens.ts';
import { AutoModelUnavailableError, ContextLengthExceededError, ModelNotFoundError, UnsupportedParameterError } from '../../../../src/errors/gateway-error.ts';
import { gatewayError as thrown } from '../../../helpers/gateway-errors.ts';

function model(context_window: number, overrides: Record<string, unknown> = {}): CatalogModel {
  return {
    provider: 'simulator',
    upstream_model: 'sim',
    context_window,
    max_output_tokens: 1024,
    input_price_per_mtok: 1,
    output_price_per_mtok: 1,
    ...overrides,
  };
}

const catalog: CatalogFile = {
  models: {
    big: model(100_000),
    mid: model(8_192),
    tiny: model(100),
    reasoning: model(100_000, { rejected_params: ['temperature', 'top_p'] }),
  },
  tiers: {
    'svc-flash': ['tiny'],
    'svc-standard': ['tiny', 'big', 'mid'],
    'svc-pro': ['reasoning', 'tiny', 'mid', 'big'],
  },
  pools: {},
};

function resolve(request: ChatCompletionRequest) {
  return resolveModel(catalog, request, '/v1/chat/completions');
}

function body(model: string, fields: Record<string, unknown> = {}, content = 'hi'): ChatCompletionRequest {
  return { model, messages: [{ role: 'user', content }], ...fields };
}

// About 1 token per 'hello ' but 6 bytes: the byte bound overshoots, the count does not.
const LONG = 'hello '.repeat(200);

describe('resolveModel: aliases', () => {
  it('resolves a model alias to itself', () => {
    const resolved = resolve(body('big'));
    expect(resolved.candidates.map((c) => c.alias)).toEqual(['big']);
    expect(resolved.candidates[0]?.context_window).toBe(100_000);
  });

  it('answers an unknown alias with 404 model_not_found on param model', () => {
    const error = thrown(() => resolve(body('gpt-7')));
    expect(error).toBeInstanceOf(ModelNotFoundError);
    expect([error.status, error.type, error.code, error.param]).toEqual([404, 'invalid_request_error', 'model_not_found', 'model']);
    expect(error.message).toContain("'gpt-7'");
  });

  it.each(['toString', 'constructor', '__proto__'])('answers the inherited property name %s with 404, not a crash', (alias) => {
    expect(thrown(() => resolve(body(alias)))).toBeInstanceOf(ModelNotFoundError);
  });

  it("answers 'auto' with AutoModelUnavailableError", () => {
    const error = thrown(() => resolve(body('auto')));
    expect(error).toBeInstanceOf(AutoModelUnavailableError);
    expect([error.status, error.code, error.param]).toEqual([400, 'model_selection_unavailable', 'model']);
  });
});

describe('resolveModel: rejected parameters', () => {
  it('answers 422 unsupported_parameter naming the parameter', () => {
    const error = thrown(() => resolve(body('reasoning', { top_p: 0.5 })));
    expect(error).toBeInstanceOf(UnsupportedParameterError);
    expect([error.status, error.code, error.param]).toEqual([422, 'unsupported_parameter', 'top_p']);
    expect(error.message).toBe("The model 'reasoning' does not support the parameter 'top_p'.");
  });

  it('accepts the request when the rejected parameters are absent', () => {
    expect(resolve(body('reasoning', { max_tokens: 10 })).candidates.map((c) => c.alias)).toEqual(['reasoning']);
  });
});

describe('resolveModel: context-window fallback', () => {
  const chained: CatalogFile = {
    models: {
      small: model(100, { context_window_fallback: 'medium' }),
      medium: model(300, { context_window_fallback: 'large' }),
      large: model(100_000),
      other: model(100, { context_window_fallback: 'large' }),
    },
    tiers: { 'svc-flash': ['small'], 'svc-standard': ['small', 'other', 'large'], 'svc-pro': ['small'] },
    pools: {},
  };
  const resolveIn = (request: ChatCompletionRequest) => resolveModel(chained, request, '/v1/chat/completions');
  // About 400 tokens: more than small's and medium's windows.
  const HUGE = 'hello '.repeat(400);

  it('sends a prompt too long for a model to the larger one it names, following the chain as far as needed', () => {
    expect(resolveIn(body('small')).candidates.map((c) => c.alias)).toEqual(['small']);
    expect(resolveIn(body('small', { max_tokens: 150 })).candidates.map((c) => c.alias)).toEqual(['medium']);
    expect(resolveIn(body('small', {}, LONG)).candidates.map((c) => c.alias)).toEqual(['medium']);
    expect(resolveIn(body('small', {}, HUGE)).candidates).toEqual([expect.objectContaining({ alias: 'large', context_window: 100_000 })]);
  });

  it('keeps each model once in a tier whose candidates fall back to the same one', () => {
    expect(resolveIn(body('svc-standard', {}, HUGE)).candidates.map((c) => c.alias)).toEqual(['large']);
  });

  it("answers with the first model's 422 when no fallback fits either", () => {
    const error = thrown(() => resolveIn(body('small', { max_tokens: 200_000 })));
    expect(error).toBeInstanceOf(ContextLengthExceededError);
    expect(error.message).toContain("context window of 'small'");
  });
});

describe('resolveModel: context window', () => {
  it('answers 422 context_length_exceeded when the prompt alone does not fit', () => {
    const tokens = countPromptTokens(body('tiny', {}, LONG).messages);
    expect(tokens).toBeGreaterThan(100);
    const error = thrown(() => resolve(body('tiny', {}, LONG)));
    expect(error).toBeInstanceOf(ContextLengthExceededError);
    expect([error.status, error.code, error.param]).toEqual([422, 'context_length_exceeded', 'messages']);
    expect(error.message).toBe(`The prompt (${tokens} tokens) plus max_tokens (0) exceeds the context window of 'tiny' (100 tokens).`);
  });

  it('counts max_tokens against the window', () => {
    const tokens = countPromptTokens(body('tiny').messages);
    expect(resolve(body('tiny', { max_tokens: 100 - tokens })).candidates).toHaveLength(1);
    const error = thrown(() => resolve(body('tiny', { max_tokens: 101 - tokens })));
    expect(error.code).toBe('context_length_exceeded');
    expect(error.message).toContain(`plus max_tokens (${101 - tokens})`);
  });

  it('counts max_completion_tokens against the window, ahead of max_tokens', () => {
    const tokens = countPromptTokens(body('tiny').messages);
    const error = thrown(() => resolve(body('tiny', { max_completion_tokens: 101 - tokens })));
    expect(error.code).toBe('context_length_exceeded');
    expect(thrown(() => resolve(body('tiny', { max_tokens: 1, max_completion_tokens: 101 - tokens }))).code).toBe('context_length_exceeded');
    expect(resolve(body('tiny', { max_tokens: 500, max_completion_tokens: 1 })).candidates).toHaveLength(1);
  });

  it('skips the tokenizer when the byte bound fits', () => {
    const resolved = resolve(body('tiny', {}, 'short question?'));
    expect(resolved.promptTokens).toBeUndefined();
  });

  it('counts the tokens when the byte bound does not fit but the prompt does', () => {
    const request = body('mid', { max_tokens: 7_900 }, LONG);
    expect(promptTokensUpperBound(request.messages) + 7_900).toBeGreaterThan(8_192);
    const resolved = resolve(request);
    expect(resolved.promptTokens).toBe(countPromptTokens(request.messages));
    expect(resolved.candidates.map((c) => c.alias)).toEqual(['mid']);
  });

  it('counts a prompt holding special-token text as plain text instead of throwing', () => {
    const request = body('tiny', {}, `${LONG} <|endoftext|>`);
    const error = thrown(() => resolve(request));
    expect(error.code).toBe('context_length_exceeded');
  });
});

describe('resolveModel: tiers', () => {
  it('keeps every candidate, in order, when all can serve', () => {
    expect(resolve(body('svc-pro')).candidates.map((c) => c.alias)).toEqual(['reasoning', 'tiny', 'mid', 'big']);
  });

  it('drops the candidates that cannot serve and keeps the order of the rest', () => {
    const resolved = resolve(body('svc-pro', { temperature: 0.2 }, LONG));
    expect(resolved.candidates.map((c) => c.alias)).toEqual(['mid', 'big']);
    expect(resolved.promptTokens).toBe(countPromptTokens(body('x', {}, LONG).messages));
    expect(resolve(body('svc-standard', {}, LONG)).candidates.map((c) => c.alias)).toEqual(['big', 'mid']);
  });

  it("answers with the first candidate's reason when none is left", () => {
    const tokens = countPromptTokens(body('x', {}, LONG).messages);
    expect(thrown(() => resolve(body('svc-flash', {}, LONG))).code).toBe('context_length_exceeded');
    const error = thrown(() => resolve(body('svc-pro', { temperature: 1, max_tokens: 100_000 - tokens + 1 }, LONG)));
    expect([error.code, error.param]).toEqual(['unsupported_parameter', 'temperature']);
  });
});

describe('resolveModel: what each provider can serve', () => {
  const mixed: CatalogFile = {
    models: {
      claude: {
        provider: 'anthropic',
        upstream_model: 'claude-x',
        context_window: 200_000,
        max_output_tokens: 8192,
        input_price_per_mtok: 3,
        output_price_per_mtok: 15,
      },
      gemini: {
        provider: 'gemini',
        upstream_model: 'gemini-x',
        context_window: 1_000_000,
        max_output_tokens: 8192,
        input_price_per_mtok: 1,
        output_price_per_mtok: 2,
      },
      gpt: model(100_000, { provider: 'openai-compatible', base_url: 'http://127.0.0.1:1/v1' }),
    },
    tiers: { 'svc-flash': ['claude', 'gemini', 'gpt'], 'svc-standard': ['claude'], 'svc-pro': ['gemini'] },
    pools: {},
  };

  it('drops a candidate whose provider does not take a parameter, before anything is queued', () => {
    expect(resolveModel(mixed, body('svc-flash', { seed: 3 }), '/v1/chat/completions').candidates.map((c) => c.alias)).toEqual(['gemini', 'gpt']);
    expect(resolveModel(mixed, body('svc-flash', { logprobs: true }), '/v1/chat/completions').candidates.map((c) => c.alias)).toEqual(['gpt']);
  });

  it('answers 422 unsupported_parameter naming the parameter when no candidate takes it', () => {
    const error = thrown(() => resolveModel(mixed, body('claude', { seed: 3 }), '/v1/chat/completions'));
    expect(error).toBeInstanceOf(UnsupportedParameterError);
    expect([error.status, error.code, error.param]).toEqual([422, 'unsupported_parameter', 'seed']);
  });

  it('names the part of a message a provider cannot take', () => {
    const audio = {
      model: 'claude',
      messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }],
    } as ChatCompletionRequest;
    expect(thrown(() => resolveModel(mixed, audio, '/v1/chat/completions')).param).toBe('messages[0].content[0]');
  });
});
