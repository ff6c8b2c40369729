/** POST /v1/chat/completions on the web tier (the web half of the operation): named prompts, the chat body, `data:` framing. */
import { estimateTokens, promptTokensUpperBound } from '../../providers/shared/tokens.ts';
import { chatPromptBound } from './prompt-bound.ts';
import type { ChatMessage } from '../../wire/openai-chat.ts';
import { openAiDataFraming } from '../sse-framing.ts';
import type { WebOperation } from '../web-operation.ts';
import type { TextReplacer } from '../../domain/pii/apply-policy.ts';
import type { ChatPayload } from './payload.ts';
import type { ChatCompletionBody, ChatCompletionRequest } from './request-schema.ts';
import { requestShape } from './request-shape.ts';
import { checkPassthroughSize } from './passthrough-size.ts';
import { resolvePrompt } from './resolve-prompt.ts';
import { requestedOutput, resolveModel } from './resolve-model.ts';
import { forwardedChat } from './forwarded.ts';

/** Each text of the messages through `replace`: string contents and text parts. */
export function mapMessageTexts(messages: ChatMessage[], replace: TextReplacer, at = (i: number) => `messages[${i}]`): ChatMessage[] {
  return messages.map((message, i) => {
    const { content } = message;
    if (typeof content === 'string') return { ...message, content: replace(content, `${at(i)}.content`) };
    if (!Array.isArray(content)) return message;
    return {
      ...message,
      content: content.map((part, j) => (typeof part.text === 'string' ? { ...part, text: replace(part.text, `${at(i)}.content[${j}].text`) } : part)),
    };
  });
}

/** The chat completion operation, web half; a named prompt's request is resolved to its registered model and messages. */
export const chatWeb: WebOperation<ChatCompletionBody, ChatCompletionRequest, ChatPayload> = {
  framing: openAiDataFraming,
  async plan(body, context) {
    checkPassthroughSize(body);
    const { request, prompt } = await resolvePrompt(context.prompts, context.tenantId, body, requestShape(body));
    const resolved = resolveModel(context.catalog, request, '/v1/chat/completions');
    return {
      body: request,
      requestedModel: request.model,
      candidates: resolved.candidates,
      promptTokens: resolved.promptTokens,
      promptEstimate: estimateTokens(promptTokensUpperBound(request.messages)),
      promptBound: chatPromptBound(request),
      maxOutputTokens: requestedOutput(request),
      stream: request.stream === true,
      prompt,
    };
  },
  mapTexts: (body, replace) => ({ ...body, messages: mapMessageTexts(body.messages, replace) }),
  jobPayload: (body) => ({ body: forwardedChat(body), includeUsage: body.stream === true && body.stream_options?.include_usage === true }),
};
