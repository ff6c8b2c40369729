/**
 * POST /v1/responses as an operation: OpenAI's Responses API, stateless, translated to chat
 * (to-chat.ts) for whichever provider serves the model; what needs stored state is refused at the door.
 */
import { estimateTokens, promptTokensUpperBound } from '../../domain/catalog/tokens.ts';
import type { ResponsesRequest } from '../../wire/openai-responses.ts';
import type { WebOperation } from '../operation.ts';
import { requestedOutput, resolveModel } from '../chat/resolve-model.ts';
import { responsesFraming } from './framing.ts';
import { mapResponsesTexts } from './map-texts.ts';
import { RESPONSES_PARAMS } from './param-names.ts';
import { renamingParams } from '../client-params.ts';
import { responsesToChat } from './to-chat.ts';

/** The Responses operation. */
export const responsesOperation: WebOperation<ResponsesRequest> = {
  name: 'responses',
  path: '/v1/responses',
  framing: responsesFraming,
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
    return { operation: 'responses', body };
  },
};
