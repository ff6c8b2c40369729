import type { CompletionJob } from '../src/queue/completion-job.ts';
import type { ProviderRequest, ProviderTarget } from '../src/providers/types.ts';
import type { ChatCompletionChunk, Usage } from '../src/wire/openai-chat.ts';
import { countPromptTokens } from '../src/catalog/tokens.ts';
import { producedText } from './produced-text.ts';
import { callWithRetries } from './call-upstream.ts';
import { resolveUsage, type UsageSource } from './usage.ts';
import type { EventPublisher } from './publish.ts';
import type { ProcessorDeps } from './completion-processor.ts';

/** What a run learned, successful or not: what the usage record is made of. */
export interface RunTrace {
  /** The candidate tried last (the one that answered, on success). */
  target: ProviderTarget | null;
  attempts: number;
  /** What the model produced so far, as countable text (producedText); streams: what reached the client. */
  text: string;
  reported: Usage | null;
  firstChunkAt: number | null;
}

/** One job's run: its data, the worker's dependencies, its publisher, abort signal and trace. */
export interface RunContext {
  data: CompletionJob;
  deps: ProcessorDeps;
  publisher: EventPublisher;
  signal: AbortSignal;
  startedAt: number;
  trace: RunTrace;
}

/** The event that ends a successful run; the processor sends it after queueing the usage record. */
export interface FinalEvent {
  type: 'result' | 'done';
  payload: string;
  usage: Usage;
  usageSource: UsageSource;
}

function targetsOf(ctx: RunContext): ProviderTarget[] {
  return ctx.data.candidates.map((alias) => {
    const target = ctx.deps.targets.get(alias);
    if (!target) throw new Error(`catalog alias '${alias}' is unknown to this worker; are web and worker on the same catalog?`);
    return target;
  });
}

/** The run's usage: the provider's counts, else the tokenizer's (the prompt counted only then). */
export function usageOf(data: CompletionJob, trace: RunTrace): { usage: Usage; source: UsageSource } {
  return resolveUsage(trace.reported, () => data.promptTokens ?? countPromptTokens(data.body.messages), trace.text);
}

function attempt<T>(ctx: RunContext, run: (request: ProviderRequest) => Promise<T>, mayRetry: () => boolean) {
  return callWithRetries(targetsOf(ctx), ctx.deps.policy, ctx.signal, (target, timeoutMs) => {
    ctx.trace.target = target;
    ctx.trace.attempts++;
    return run({ target, body: ctx.data.body, signal: ctx.signal, timeoutMs });
  }, mayRetry);
}

/** A non-streamed completion: the whole answer as one `result` event. */
export async function runCompletion(ctx: RunContext): Promise<FinalEvent> {
  const { value: completion, target } = await attempt(ctx, (request) => ctx.deps.providers.complete(request), () => true);
  ctx.trace.text = completion.choices.map((choice) => producedText(choice.message)).join('');
  ctx.trace.reported = completion.usage ?? null;
  const { usage, source } = usageOf(ctx.data, ctx.trace);
  const body = { ...completion, model: target.alias, usage, request_id: ctx.data.requestId };
  return { type: 'result', payload: JSON.stringify(body), usage, usageSource: source };
}

/**
 * A streamed completion: each content chunk as a `chunk` event, the usage chunk when the
 * client asked for it (OpenAI's `stream_options.include_usage`), then `done`. Once a
 * chunk has been emitted the stream is never retried: a failure becomes the final error.
 */
export async function runStream(ctx: RunContext): Promise<FinalEvent> {
  const { includeUsage } = ctx.data;
  const trace = ctx.trace;
  let last: ChatCompletionChunk | null = null;
  const { target } = await attempt(ctx, async (request) => {
    for await (const chunk of ctx.deps.providers.stream(request)) {
      if (chunk.usage) trace.reported = chunk.usage;
      if (chunk.choices.length === 0) continue;
      trace.text += producedText(chunk.choices[0]?.delta);
      last = { ...chunk, model: request.target.alias };
      if (includeUsage) last.usage = null;
      else delete last.usage;
      ctx.publisher.emit('chunk', JSON.stringify(last));
      trace.firstChunkAt ??= Date.now();
    }
  }, () => trace.firstChunkAt === null);
  const { usage, source } = usageOf(ctx.data, trace);
  if (includeUsage) {
    const base = last as ChatCompletionChunk | null;
    const usageChunk = { id: base?.id ?? `chatcmpl-${ctx.data.requestId}`, object: 'chat.completion.chunk', created: base?.created ?? Math.floor(Date.now() / 1000), model: target.alias, choices: [], usage };
    ctx.publisher.emit('chunk', JSON.stringify(usageChunk));
  }
  return { type: 'done', payload: JSON.stringify({ usage, usage_source: source }), usage, usageSource: source };
}
