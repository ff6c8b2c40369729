import type { CompletionJob } from '../src/queue/completion-job.ts';
import type { ChatCompletionChunk, ProviderTarget, Usage } from '../src/providers/types.ts';
import { countPromptTokens, contentText, type CountableMessage } from '../src/catalog/tokens.ts';
import { callWithRetries } from './call-upstream.ts';
import { resolveUsage, type UsageSource } from './usage.ts';
import type { EventPublisher } from './publish.ts';
import type { ProcessorDeps } from './completion-processor.ts';

/** One job's run: its data, the worker's dependencies, its publisher and abort signal. */
export interface RunContext {
  data: CompletionJob;
  deps: ProcessorDeps;
  publisher: EventPublisher;
  signal: AbortSignal;
  startedAt: number;
}

/** What a finished run reports for the log line (and, later, the usage record). */
export interface RunOutcome {
  alias: string;
  attempts: number;
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

function promptCounter(ctx: RunContext): () => number {
  return () => ctx.data.promptTokens ?? countPromptTokens(ctx.data.body['messages'] as CountableMessage[]);
}

/** A non-streamed completion: one `result` event with the whole answer. */
export async function runCompletion(ctx: RunContext): Promise<RunOutcome> {
  const outcome = await callWithRetries(targetsOf(ctx), ctx.deps.policy, ctx.signal, (target) =>
    ctx.deps.providers.get(target.provider).complete({ target, body: ctx.data.body, signal: ctx.signal }),
  () => true);
  const completion = outcome.value;
  const text = completion.choices.map((choice) => contentText(choice.message.content)).join('');
  const { usage, source } = resolveUsage(completion.usage, promptCounter(ctx), text);
  const body = { ...completion, model: outcome.target.alias, usage, request_id: ctx.data.requestId };
  ctx.publisher.emit('result', JSON.stringify(body));
  return { alias: outcome.target.alias, attempts: outcome.attempts, usage, usageSource: source };
}

/**
 * A streamed completion: each content chunk as a `chunk` event, the usage chunk when the
 * client asked for it (OpenAI's `stream_options.include_usage`), then `done`. Once a
 * chunk has been emitted the stream is never retried: a failure becomes the final error.
 */
export async function runStream(ctx: RunContext): Promise<RunOutcome> {
  const { includeUsage } = ctx.data;
  let emitted = 0;
  let text = '';
  let reported: Usage | null = null;
  let last: ChatCompletionChunk | null = null;
  const outcome = await callWithRetries(targetsOf(ctx), ctx.deps.policy, ctx.signal, async (target) => {
    for await (const chunk of ctx.deps.providers.get(target.provider).stream({ target, body: ctx.data.body, signal: ctx.signal })) {
      if (chunk.usage) reported = chunk.usage;
      if (chunk.choices.length === 0) continue;
      text += contentText(chunk.choices[0]?.delta.content);
      last = { ...chunk, model: target.alias };
      if (includeUsage) last.usage = null;
      else delete last.usage;
      ctx.publisher.emit('chunk', JSON.stringify(last));
      emitted++;
    }
  }, () => emitted === 0);
  const { usage, source } = resolveUsage(reported, promptCounter(ctx), text);
  const alias = outcome.target.alias;
  if (includeUsage) {
    const base = last as ChatCompletionChunk | null;
    const usageChunk = { id: base?.id ?? `chatcmpl-${ctx.data.requestId}`, object: 'chat.completion.chunk', created: base?.created ?? Math.floor(Date.now() / 1000), model: alias, choices: [], usage };
    ctx.publisher.emit('chunk', JSON.stringify(usageChunk));
  }
  ctx.publisher.emit('done', JSON.stringify({ usage, usage_source: source }));
  return { alias, attempts: outcome.attempts, usage, usageSource: source };
}
