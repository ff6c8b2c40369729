/**
 * POST /v1/responses/compact on the web tier (the web half of the operation): the summary call's
 * chat request is made here too, to resolve the model and check its window, and refuse what
 * cannot be compacted before admission. Never streamed.
 */
import { estimateTokens, promptTokensUpperBound } from '../../providers/shared/tokens.ts';
import { chatPromptBound } from '../chat/prompt-bound.ts';
import type { ResponsesCompactRequest } from '../../wire/openai-responses-compact.ts';
import type { WebOperation } from '../web-operation.ts';
import { renamingParams } from '../client-params.ts';
import { resolveModel } from '../chat/resolve-model.ts';
import { mapResponsesTexts } from '../responses/map-texts.ts';
import { openAiDataFraming } from '../sse-framing.ts';
import { COMPACT_PARAMS, COMPACT_PATH } from './param-names.ts';
import type { CompactPayload } from './payload.ts';
import { compactionChat } from './to-chat.ts';

/** The compaction operation, web half. */
export const compactWeb: WebOperation<ResponsesCompactRequest, ResponsesCompactRequest, CompactPayload> = {
  // Never used: a compaction is one JSON answer.
  framing: openAiDataFraming,
  plan(request, context) {
    const chat = compactionChat(request);
    const resolved = renamingParams(() => resolveModel(context.catalog, { ...chat, model: request.model }, COMPACT_PATH), COMPACT_PARAMS);
    return {
      body: request,
      requestedModel: request.model,
      candidates: resolved.candidates,
      promptTokens: resolved.promptTokens,
      promptEstimate: estimateTokens(promptTokensUpperBound(chat.messages)),
      promptBound: chatPromptBound(chat),
      // The summary's length is the model's to choose: the reservation assumes its maximum.
      maxOutputTokens: null,
      stream: false,
      prompt: null,
    };
  },
  mapTexts: mapResponsesTexts,
  jobPayload(request) {
    const { model: _model, ...body } = request;
    return { body };
  },
};
