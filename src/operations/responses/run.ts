/** How a worker runs a Responses request: translated to chat, and the chat answer translated back. */
import type { ResponsesJob } from './payload.ts';
import type { ProviderTarget } from '../../providers/types.ts';
import { countPromptTokens } from '../../providers/shared/tokens.ts';
import type { FinalEvent, OperationRunner, RunContext, SentChunk } from '../runner.ts';
import { producedText } from '../chat/produced-text.ts';
import { chatToResponse, ResponseStreamTranslator, type ResponseContext } from './from-chat.ts';
import { RESPONSES_PARAMS } from './param-names.ts';
import { renamingParams } from '../client-params.ts';
import { responsesToChat } from './to-chat.ts';
import { keepResponse, requestOf, responseContext } from './keep.ts';

type ResponsesRun = RunContext<ResponsesJob>;

/** What the translation names the response by: `resp_<request id>`, the alias that answers, the time it was asked, how it is kept. */
function contextOf(ctx: ResponsesRun, target: ProviderTarget): ResponseContext {
  const { data } = ctx;
  return { ...responseContext(requestOf(data), data, { background: data.background !== undefined, store: data.store === true }), model: target.alias };
}

function chatRequest(ctx: ResponsesRun, target: ProviderTarget, timeoutMs: number) {
  return { target, body: responsesToChat(requestOf(ctx.data)).chat, signal: ctx.signal, timeoutMs };
}

/** A non-streamed response: the chat answer translated, as one `result` event. */
async function runResponse(ctx: ResponsesRun): Promise<FinalEvent> {
  const { value: response } = await ctx.attempt(
    async (target, timeoutMs) => {
      const completion = await ctx.providers.complete(chatRequest(ctx, target, timeoutMs));
      ctx.trace.reported = completion.usage ?? null;
      ctx.trace.text = completion.choices.map((choice) => producedText(choice.message)).join('');
      return chatToResponse({ ...completion, usage: ctx.usage().usage }, contextOf(ctx, target));
    },
    () => true,
  );
  return { type: 'result', payload: JSON.stringify(response), answer: response as unknown as Record<string, unknown> };
}

/**
 * A streamed response. Its first events (response.created, .in_progress) go out with the first
 * chunk's, not before the upstream answered: a request that fails before then still gets its
 * error's status; once they reached the client it is never retried.
 */
async function runStream(ctx: ResponsesRun): Promise<FinalEvent> {
  let answer: Record<string, unknown> | undefined;
  await ctx.attempt(
    async (target, timeoutMs) => {
      const translator = new ResponseStreamTranslator(contextOf(ctx, target));
      let started = false;
      // The opening events go out with the first chunk's, as one chunk of events.
      const emit = (events: () => readonly object[]) => {
        const opening = started ? [] : translator.start();
        started = true;
        ctx.emit(...[...opening, ...events()].map((event) => JSON.stringify(event)));
      };
      for await (const chunk of ctx.providers.stream(chatRequest(ctx, target, timeoutMs))) {
        if (chunk.usage) ctx.trace.reported = chunk.usage;
        if (chunk.choices.length === 0) continue;
        for (const choice of chunk.choices) ctx.trace.text += producedText(choice.delta);
        emit(() => translator.push(chunk));
      }
      emit(() => {
        const events = translator.finish(ctx.usage().usage);
        answer = finalResponse(events);
        return events;
      });
    },
    () => ctx.trace.firstChunkAt === null,
  );
  const { usage, source } = ctx.usage();
  const done: FinalEvent = { type: 'done', payload: JSON.stringify({ usage, usage_source: source }) };
  if (answer) done.answer = answer;
  return done;
}

/** The Response object of a stream's last event (response.completed or .incomplete). */
function finalResponse(events: readonly object[]): Record<string, unknown> | undefined {
  const last = events.at(-1) as { response?: Record<string, unknown> } | undefined;
  return last?.response;
}

/** The text of a delta event, and the model of response.created. */
function readEvent(event: { type?: unknown; delta?: unknown; response?: { model?: unknown } }): SentChunk {
  const text = typeof event.delta === 'string' ? event.delta : '';
  const model = event.type === 'response.created' && typeof event.response?.model === 'string' ? event.response.model : null;
  return { text, model };
}

/** The Responses operation, worker half. */
export const responsesRunner: OperationRunner<ResponsesJob> = {
  run: (ctx) => renamingParams(() => (ctx.data.stream ? runStream(ctx) : runResponse(ctx)), RESPONSES_PARAMS),
  countPrompt: (data) => countPromptTokens(responsesToChat(requestOf(data)).chat.messages),
  readChunk: (payload) => readEvent(JSON.parse(payload) as Parameters<typeof readEvent>[0]),
  keep: keepResponse,
};
