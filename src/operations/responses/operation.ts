/**
 * POST /v1/responses on the web tier (the web half of the operation): OpenAI's Responses API,
 * translated to chat (to-chat.ts) for whichever provider serves the model. A conversation is made
 * whole here (conversation.ts), so the worker runs a stateless request; whether the response is
 * kept, and whether it runs in the background, is decided here too (keep.ts).
 */
import { estimateTokens, promptTokensUpperBound } from '../../providers/shared/tokens.ts';
import { chatPromptBound } from '../chat/prompt-bound.ts';
import type { ResponsesRequest } from '../../wire/openai-responses.ts';
import type { WebOperation } from '../web-operation.ts';
import type { ResponsesPayload } from './payload.ts';
import { requestedOutput, resolveModel } from '../chat/resolve-model.ts';
import { responsesFraming } from './framing.ts';
import { mapResponsesTexts } from './map-texts.ts';
import { RESPONSES_PARAMS } from './param-names.ts';
import { renamingParams } from '../client-params.ts';
import { responsesToChat } from './to-chat.ts';
import { chatToolsOf } from './tools.ts';
import { wholeConversation } from './conversation.ts';
import { acceptedResponse } from './keep.ts';

/** Names the hosted tools the gateway left out of the request (`web_search, mcp`), which no provider runs. */
const DROPPED_TOOLS_HEADER = 'x-gateway-dropped-tools';

/** A Responses request once resolved: its conversation whole, and whether it is stored. */
export interface ResponsesPlanned {
  request: ResponsesRequest;
  /** `store` not false, on a tenant whose data policy stores responses. */
  store: boolean;
  /** How many of the input's first items are the earlier turns'. */
  contextItems: number;
}

/** The Responses operation, web half. */
export const responsesWeb: WebOperation<ResponsesRequest, ResponsesPlanned, ResponsesPayload> = {
  framing: responsesFraming,
  // The tools are translated before admission, so that the hosted tools left out are named before
  // any answer (a stream sends these headers with its first event), and a request that cannot do
  // without them is refused without it.
  replyHeaders(request): Record<string, string> {
    const { dropped } = chatToolsOf(request);
    return dropped.length > 0 ? { [DROPPED_TOOLS_HEADER]: dropped.join(', ') } : {};
  },
  async plan(request, context) {
    const { storeResponses } = context.settings.dataPolicy;
    const whole = await wholeConversation(request, context.tenantId, context.responses, storeResponses);
    const { chat } = responsesToChat(whole.request);
    const view = { ...chat, model: request.model };
    const resolved = renamingParams(() => resolveModel(context.catalog, view, '/v1/responses'), RESPONSES_PARAMS);
    return {
      body: { request: whole.request, store: storeResponses && request.store !== false, contextItems: whole.contextItems },
      requestedModel: request.model,
      candidates: resolved.candidates,
      promptTokens: resolved.promptTokens,
      promptEstimate: estimateTokens(promptTokensUpperBound(chat.messages)),
      promptBound: chatPromptBound(chat),
      maxOutputTokens: requestedOutput(chat),
      stream: request.stream === true,
      prompt: null,
      responseId: `resp_${context.requestId}`,
    };
  },
  mapTexts: (planned, replace) => ({ ...planned, request: mapResponsesTexts(planned.request, replace) }),
  jobPayload({ request, store, contextItems }) {
    const { model: _model, stream: _stream, ...body } = request;
    return { body, store, contextItems };
  },
  detach({ request, store, contextItems }, job) {
    return request.background === true ? acceptedResponse(request, store, contextItems, job) : null;
  },
};
