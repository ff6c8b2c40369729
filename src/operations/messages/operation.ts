/**
 * POST /v1/messages on the web tier (the web half of the operation): Anthropic's Messages API at
 * the gateway's door. A candidate whose provider speaks it gets the request untranslated; the
 * others get it translated to chat (to-chat.ts), so a request that chat cannot express is served
 * by the native candidates alone.
 */
import type { CatalogEntry } from '../../domain/catalog/load-catalog.ts';
import { estimateTokens } from '../../providers/shared/tokens.ts';
import { ContextLengthExceededError, GatewayError, UnsupportedParameterError } from '../../errors/gateway-error.ts';
import { speaksMessages } from '../../providers/descriptors.ts';
import type { MessagesRequest } from '../../wire/anthropic-messages.ts';
import type { WebOperation } from '../web-operation.ts';
import type { MessagesPayload } from './payload.ts';
import { chatCandidatesOf, chatProblem, PromptTokens, usableCandidates } from '../chat/resolve-model.ts';
import { anthropicFraming } from './framing.ts';
import { mapMessagesTexts } from './map-texts.ts';
import { countPromptTokens, promptTextBytes, promptTokensBoundOf } from './prompt-text.ts';
import { messagesToChat } from './to-chat.ts';
import { MESSAGES_PARAMS } from './param-names.ts';
import { inClientTerms } from '../client-params.ts';

/** A request, and the `anthropic-beta` flags the client sent (a native upstream gets them). */
export interface PlannedMessages {
  request: MessagesRequest;
  betas: string[];
}

/** The `anthropic-beta` header: comma-separated flags, possibly repeated. */
function betasOf(header: string | string[] | undefined): string[] {
  const values = header === undefined ? [] : Array.isArray(header) ? header : [header];
  return [
    ...new Set(
      values
        .flatMap((value) => value.split(','))
        .map((flag) => flag.trim())
        .filter((flag) => flag !== ''),
    ),
  ];
}

/** Why a native candidate cannot take the request: a parameter its catalog entry rejects, or a window too small. */
function nativeProblem(request: MessagesRequest, model: CatalogEntry, tokens: PromptTokens): GatewayError | undefined {
  const rejected = model.rejected_params?.find((param) => (request as Record<string, unknown>)[param] !== undefined);
  if (rejected) return new UnsupportedParameterError(rejected, model.alias);
  const counted = tokens.exceeding(model.context_window, request.max_tokens);
  return counted === null ? undefined : new ContextLengthExceededError(model.alias, counted, request.max_tokens, model.context_window);
}

/** The chat view of the request, made once and only when a translated candidate needs it; a refusal is that candidate's problem. */
function translation(request: MessagesRequest) {
  let made: Parameters<typeof chatProblem>[0] | GatewayError | undefined;
  return () => {
    if (made === undefined) {
      try {
        made = { ...messagesToChat(request).chat, model: request.model };
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        made = error;
      }
    }
    return made;
  };
}

/** The Messages operation, web half. */
export const messagesWeb: WebOperation<MessagesRequest, PlannedMessages, MessagesPayload> = {
  framing: anthropicFraming,
  plan(request, context) {
    // One count of the prompt, count_tokens' own, for every candidate's window and for message_start.
    const tokens = new PromptTokens(promptTextBytes(request), () => countPromptTokens(request));
    const translated = translation(request);
    const candidates = usableCandidates(context.catalog, chatCandidatesOf(context.catalog, request.model, '/v1/messages'), (model) => {
      if (speaksMessages(model.provider)) return nativeProblem(request, model, tokens);
      const chat = translated();
      if (chat instanceof GatewayError) return chat;
      const problem = chatProblem(chat, model, tokens);
      return problem === undefined ? undefined : (inClientTerms(problem, MESSAGES_PARAMS) as GatewayError);
    });
    const stream = request.stream === true;
    // A chat upstream reports its counts at the end of its stream, after message_start has gone out
    // (Claude Code shows the context in use from it): a stream it may answer carries the count.
    const countForStart = stream && candidates.some((model) => !speaksMessages(model.provider));
    return {
      body: { request, betas: betasOf(context.headers['anthropic-beta']) },
      requestedModel: request.model,
      candidates,
      promptTokens: countForStart ? tokens.count() : tokens.counted,
      promptEstimate: estimateTokens(promptTextBytes(request)),
      promptBound: promptTokensBoundOf(request),
      maxOutputTokens: request.max_tokens,
      stream,
      prompt: null,
    };
  },
  mapTexts: (planned, replace) => ({ ...planned, request: mapMessagesTexts(planned.request, replace) }),
  jobPayload({ request, betas }) {
    const { model: _model, stream: _stream, ...body } = request;
    return { body, betas };
  },
};
