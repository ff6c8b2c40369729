/** How a worker runs a chat completion: the providers' chat calls, the answer as OpenAI chat. */
import type { ChatCompletionChunk } from '../../wire/openai-chat.ts';
import type { ChatJob } from './payload.ts';
import { countPromptTokens } from '../../providers/shared/tokens.ts';
import type { FinalEvent, OperationRunner, RunContext } from '../runner.ts';
import { producedText } from './produced-text.ts';

type ChatRun = RunContext<ChatJob>;

/** A non-streamed completion: the whole answer as one `result` event. */
async function runCompletion(ctx: ChatRun): Promise<FinalEvent> {
  const { value: completion, target } = await ctx.attempt(
    (target, timeoutMs) => ctx.providers.complete({ target, body: ctx.data.body, signal: ctx.signal, timeoutMs }),
    () => true,
  );
  ctx.trace.text = completion.choices.map((choice) => producedText(choice.message)).join('');
  ctx.trace.reported = completion.usage ?? null;
  const { usage } = ctx.usage();
  const body = { ...completion, model: target.alias, usage, request_id: ctx.data.requestId };
  return { type: 'result', payload: JSON.stringify(body) };
}

/**
 * A streamed completion: each content chunk as a `chunk` event, the usage chunk when the
 * client asked for it (OpenAI's `stream_options.include_usage`), then `done`. Once a
 * chunk has been emitted the stream is never retried: a failure becomes the final error.
 */
async function runStream(ctx: ChatRun): Promise<FinalEvent> {
  const { includeUsage } = ctx.data;
  const trace = ctx.trace;
  let last: ChatCompletionChunk | null = null;
  const { target } = await ctx.attempt(
    async (target, timeoutMs) => {
      for await (const chunk of ctx.providers.stream({ target, body: ctx.data.body, signal: ctx.signal, timeoutMs })) {
        if (chunk.usage) trace.reported = chunk.usage;
        if (chunk.choices.length === 0) continue;
        trace.text += producedText(chunk.choices[0]?.delta);
        last = { ...chunk, model: target.alias };
        if (includeUsage) last.usage = null;
        else delete last.usage;
        ctx.emit(JSON.stringify(last));
      }
    },
    () => trace.firstChunkAt === null,
  );
  const { usage, source } = ctx.usage();
  if (includeUsage) {
    const base = last as ChatCompletionChunk | null;
    const usageChunk = {
      id: base?.id ?? `chatcmpl-${ctx.data.requestId}`,
      object: 'chat.completion.chunk',
      created: base?.created ?? Math.floor(Date.now() / 1000),
      model: target.alias,
      choices: [],
      usage,
    };
    ctx.emit(JSON.stringify(usageChunk));
  }
  return { type: 'done', payload: JSON.stringify({ usage, usage_source: source }) };
}

/** The chat completion operation, worker half. */
export const chatRunner: OperationRunner<ChatJob> = {
  run: (ctx) => (ctx.data.stream ? runStream(ctx) : runCompletion(ctx)),
  countPrompt: (data) => countPromptTokens(data.body.messages),
  readChunk(payload) {
    const chunk = JSON.parse(payload) as ChatCompletionChunk;
    return { text: producedText(chunk.choices[0]?.delta), model: chunk.model };
  },
};
