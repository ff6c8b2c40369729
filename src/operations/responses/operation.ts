/**
 * POST /v1/responses on the web tier (the web half of the operation): OpenAI's Responses API,
 * stateless, translated to chat (to-chat.ts) for whichever provider serves the model; what needs
 * stored state is refused at the door.
 */
import { estimateTokens, promptTokensUpperBound } from '../../providers/shared/tokens.ts';
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

/** Names the hosted tools the gateway left out of the request (`web_search, mcp`), which no provider runs. */
const DROPPED_TOOLS_HEADER = 'x-gateway-dropped-tools';

/** The Responses operation, web half. */
export const responsesWeb: WebOperation<ResponsesRequest, ResponsesRequest, ResponsesPayload> = {
  framing: responsesFraming,
  // The tools are translated before admission, so that the hosted tools left out are named before
  // any answer (a stream sends these headers with its first event), and a request that cannot do
  // without them is refused without it.
  replyHeaders(request): Record<string, string> {
    const { dropped } = chatToolsOf(request);
    return dropped.length > 0 ? { [DROPPED_TOOLS_HEADER]: dropped.join(', ') } : {};
  },
  plan(request, context) {
    const { chat } = responsesToChat(request);
    const view = { ...chat, model: request.model };
    const resolved = renamingParams(() => resolveModel(context.catalog, view, '/v1/responses'), RESPONSES_PARAMS);
    return {
      body: request,
      requestedModel: request.model,
      candidates: resolved.candidates,
      promptTokens: resolved.promptTokens,
      promptEstimate: estimateTokens(promptTokensUpperBound(chat.messages)),
      maxOutputTokens: requestedOutput(chat),
      stream: request.stream === true,
      prompt: null,
    };
  },
  mapTexts: mapResponsesTexts,
  jobPayload(request) {
    const { model: _model, stream: _stream, ...body } = request;
    return { body };
  },
};
