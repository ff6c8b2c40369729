/** How a worker runs a compaction: one summary call, and the compacted response as one `result` event. */
import { countPromptTokens } from '../../providers/shared/tokens.ts';
import type { ResponsesCompactRequest } from '../../wire/openai-responses-compact.ts';
import type { FinalEvent, OperationRunner } from '../runner.ts';
import { producedText } from '../chat/produced-text.ts';
import { renamingParams } from '../client-params.ts';
import { compactedResponse, summaryOf } from './from-chat.ts';
import { COMPACT_PARAMS } from './param-names.ts';
import type { CompactJob } from './payload.ts';
import { compactionChat } from './to-chat.ts';

function requestOf(data: CompactJob): ResponsesCompactRequest {
  return { ...data.body, model: data.requestedModel };
}

/** The compaction operation, worker half. */
export const compactRunner: OperationRunner<CompactJob> = {
  run: (ctx) =>
    renamingParams(async (): Promise<FinalEvent> => {
      const request = requestOf(ctx.data);
      const { value: completion, target } = await ctx.attempt(
        async (target, timeoutMs) => {
          const answer = await ctx.providers.complete({ target, body: compactionChat(request), signal: ctx.signal, timeoutMs });
          ctx.trace.reported = answer.usage ?? null;
          ctx.trace.text = answer.choices.map((choice) => producedText(choice.message)).join('');
          return answer;
        },
        () => true,
      );
      const summary = summaryOf(completion, target.alias);
      const context = { id: `resp_${ctx.data.requestId}`, createdAt: Math.floor(ctx.data.enqueuedAt / 1000) };
      return { type: 'result', payload: JSON.stringify(compactedResponse(request, summary, ctx.usage().usage, context)) };
    }, COMPACT_PARAMS),
  countPrompt: (data) => countPromptTokens(compactionChat(requestOf(data)).messages),
  // Never streamed.
  readChunk: () => ({ text: '', model: null }),
};
