/** The built-in simulator provider: deterministic answers, configurable latency, token rate and faults. */
import type { ModelOf } from '../model.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest, Usage } from '../../wire/openai-chat.ts';
import type { EmbedRequest, Provider, ProviderAdapter, ProviderRequest } from '../types.ts';
import type { EmbeddingsResponse } from '../../wire/openai-embeddings.ts';
import { type SimulatorOptions, simulatorDescriptor } from './descriptor.ts';
import { brokenStreamError, hang, pause, rollFault, statusFaultError, type FaultKind } from './faults.ts';
import { generatePieces, seedFrom } from './text.ts';
import { DEFAULT_DIMENSIONS, simulatedVector } from './embeddings.ts';
import { embeddingsResponse, inputItems, inputTokens } from '../shared/embeddings.ts';
import { countPromptTokens } from '../shared/tokens.ts';

type SimulatorRequest = ProviderRequest<ModelOf<typeof simulatorDescriptor>>;

/** Knobs for tests and for the registry. */
export interface SimulatorAdapterOptions {
  /** Source of randomness for fault rolls (default Math.random). */
  random?: () => number;
  /** How long the `timeout` fault hangs before failing as a timeout (default 60 s). */
  hangTimeoutMs?: number;
}

/** Everything one call will produce, decided before any waiting. */
interface Plan {
  id: string;
  created: number;
  model: string;
  pieces: string[];
  finishReason: 'stop' | 'length';
  usage: Usage;
  options: SimulatorOptions;
  fault: FaultKind | null;
}

const DEFAULT_COMPLETION_TOKENS = 64;
const DEFAULT_HANG_TIMEOUT_MS = 60_000;

/** Builds the simulator adapter; the same messages always give the same text, the same input the same vectors. */
export function createSimulatorAdapter(adapterOptions: SimulatorAdapterOptions = {}): ProviderAdapter<ModelOf<typeof simulatorDescriptor>> {
  const random = adapterOptions.random ?? Math.random;
  const hangTimeoutMs = adapterOptions.hangTimeoutMs ?? DEFAULT_HANG_TIMEOUT_MS;

  async function beforeFirstToken(
    plan: Pick<Plan, 'options' | 'fault'>,
    request: Pick<SimulatorRequest, 'signal' | 'timeoutMs'>,
    streaming: boolean,
  ): Promise<void> {
    const { signal } = request;
    await pause(plan.options.latency_ms ?? 0, signal);
    const fault = plan.fault;
    const faultConfig = plan.options.fault;
    if (fault === null || faultConfig === undefined) return;
    // As a real upstream's call would, the hang ends with the headers timeout or the retry budget left.
    if (fault === 'timeout') await hang(Math.min(hangTimeoutMs, request.timeoutMs), signal);
    if (fault === '429' || fault === '500') throw statusFaultError(fault, faultConfig);
    // A non-streamed answer cannot break half-way; it fails as the upstream 500 it would be.
    if (fault === 'broken_stream' && !streaming) throw statusFaultError('500', faultConfig);
  }

  async function complete(request: SimulatorRequest): Promise<ChatCompletion> {
    const plan = makePlan(request, rollFault(request.target.model.simulator?.fault, random));
    await beforeFirstToken(plan, request, false);
    await pause(tokenIntervalMs(plan.options) * Math.max(0, plan.pieces.length - 1), request.signal);
    return {
      id: plan.id,
      object: 'chat.completion',
      created: plan.created,
      model: plan.model,
      choices: [{ index: 0, message: { role: 'assistant', content: plan.pieces.join('') }, finish_reason: plan.finishReason }],
      usage: plan.usage,
    };
  }

  async function* stream(request: SimulatorRequest): AsyncGenerator<ChatCompletionChunk> {
    const plan = makePlan(request, rollFault(request.target.model.simulator?.fault, random));
    await beforeFirstToken(plan, request, true);
    const interval = tokenIntervalMs(plan.options);
    const cut = plan.fault === 'broken_stream' ? Math.max(1, Math.floor(plan.pieces.length / 2)) : plan.pieces.length;
    for (let i = 0; i < cut; i += 1) {
      await pause(i === 0 ? 0 : interval, request.signal);
      const delta = i === 0 ? { role: 'assistant', content: plan.pieces[i] } : { content: plan.pieces[i] };
      yield chunk(plan, [{ index: 0, delta, finish_reason: null }]);
    }
    if (plan.fault === 'broken_stream') throw brokenStreamError(cut);
    await pause(0, request.signal);
    yield chunk(plan, [{ index: 0, delta: {}, finish_reason: plan.finishReason }]);
    // As OpenAI does with stream_options.include_usage: a last chunk with no choices and the usage.
    yield { ...chunk(plan, []), usage: plan.usage };
  }

  async function embed(request: EmbedRequest<ModelOf<typeof simulatorDescriptor>>): Promise<EmbeddingsResponse> {
    const options = request.target.model.simulator ?? {};
    await beforeFirstToken({ options, fault: rollFault(options.fault, random) }, request, false);
    const items = inputItems(request.body.input);
    const dimensions = request.body.dimensions ?? options.dimensions ?? DEFAULT_DIMENSIONS;
    return embeddingsResponse(
      items.map((item) => simulatedVector(item, dimensions)),
      request.body,
      request.target.upstreamModel,
      inputTokens(items),
    );
  }

  return { complete, stream, embed };
}

function makePlan(request: SimulatorRequest, fault: FaultKind | null): Plan {
  const options = request.target.model.simulator ?? {};
  const configured = options.completion_tokens ?? DEFAULT_COMPLETION_TOKENS;
  const cap = maxTokens(request.body);
  const length = cap === null ? configured : Math.min(cap, configured);
  const pieces = generatePieces(seedFrom(request.body.messages), length);
  const promptTokens = countPromptTokens(request.body.messages);
  return {
    id: `chatcmpl-sim-${crypto.randomUUID().replaceAll('-', '')}`,
    created: Math.floor(Date.now() / 1000),
    model: request.target.upstreamModel,
    pieces,
    finishReason: cap !== null && cap < configured ? 'length' : 'stop',
    usage: { prompt_tokens: promptTokens, completion_tokens: length, total_tokens: promptTokens + length },
    options,
    fault,
  };
}

function maxTokens(body: ChatRequest): number | null {
  const value = body.max_tokens ?? body.max_completion_tokens;
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : null;
}

function tokenIntervalMs(options: SimulatorOptions): number {
  return options.tokens_per_second === undefined ? 0 : 1000 / options.tokens_per_second;
}

function chunk(plan: Plan, choices: ChatCompletionChunk['choices']): ChatCompletionChunk {
  return { id: plan.id, object: 'chat.completion.chunk', created: plan.created, model: plan.model, choices };
}

/** The built-in simulator: its descriptor and its adapter's factory, as the list of providers holds them. */
export const simulatorProvider: Provider<typeof simulatorDescriptor> = {
  descriptor: simulatorDescriptor,
  create: (context) => createSimulatorAdapter({ hangTimeoutMs: context.headersTimeoutMs }),
};
