/**
 * What is kept of a response: a stored one (`store` not false, on a tenant whose data policy
 * stores responses) from its end, a background one from its acceptance. The web half writes an
 * accepted background response; the worker half every kept response's end, however it ended.
 */
import type { StoredItem } from '../../infra/store/repository.ts';
import type { KeptAnswer } from '../../infra/responses/kept-answer.ts';
import type { InputItem, ResponsesRequest } from '../../wire/openai-responses.ts';
import type { RunEnding } from '../runner.ts';
import { queuedEvent, responseSnapshot, type ResponseContext } from './from-chat.ts';
import { inputItems } from './conversation.ts';
import type { ResponsesJob } from './payload.ts';

/** The request's own input items (not the earlier turns before them), each with an id: OpenAI lists input items by id. */
export function ownInput(request: ResponsesRequest, contextItems: number, requestId: string): StoredItem[] {
  return inputItems(request.input)
    .slice(contextItems)
    .map((item: InputItem, i) => ({ ...item, id: item.id ?? `msg_${requestId}_in${i}` }));
}

/** What names a response: its id, the alias asked for, when it was asked, and how it is kept. */
export function responseContext(
  request: ResponsesRequest,
  ids: { requestId: string; enqueuedAt: number },
  kept: { background: boolean; store: boolean },
): ResponseContext {
  return {
    id: `resp_${ids.requestId}`,
    model: request.model,
    createdAt: Math.floor(ids.enqueuedAt / 1000),
    request,
    background: kept.background,
    store: kept.store,
    previousResponseId: request.previous_response_id ?? null,
    // A background stream opens with response.queued, numbered 0 by the web tier.
    firstSequenceNumber: kept.background && request.stream === true ? 1 : 0,
  };
}

/** A background response as it is accepted: queued, and the stream's first event. */
export function acceptedResponse(
  request: ResponsesRequest,
  store: boolean,
  contextItems: number,
  ids: { requestId: string; enqueuedAt: number },
): { kept: KeptAnswer; opening: string } {
  const context = responseContext(request, ids, { background: true, store });
  return {
    kept: {
      id: context.id,
      status: 'queued',
      body: responseSnapshot(context, 'queued'),
      input: store ? ownInput(request, contextItems, ids.requestId) : null,
      previousResponseId: context.previousResponseId,
      background: true,
      stream: request.stream === true,
      store,
      createdAt: ids.enqueuedAt,
    },
    opening: JSON.stringify(queuedEvent(context)),
  };
}

/** The request as the job carries it. */
export function requestOf(data: ResponsesJob): ResponsesRequest {
  return { ...data.body, model: data.requestedModel, stream: data.stream };
}

/** What is kept of a response as its run ends: its final Response object, or the snapshot of a failed or cancelled one. */
export function keepResponse(data: ResponsesJob, ending: RunEnding): KeptAnswer | null {
  const background = data.background !== undefined;
  const store = data.store === true;
  if (!background && !store) return null;
  const request = requestOf(data);
  const context = responseContext(request, data, { background, store });
  let body: Record<string, unknown>;
  if (ending.final?.answer) body = ending.final.answer;
  else if (ending.status === 'cancelled') body = responseSnapshot(context, 'cancelled');
  else body = responseSnapshot(context, 'failed', { error: ending.error ?? { code: 'internal_error', message: 'The response failed.' } });
  return {
    id: context.id,
    status: body.status as KeptAnswer['status'],
    body,
    input: store ? ownInput(request, data.contextItems ?? 0, data.requestId) : null,
    previousResponseId: context.previousResponseId,
    background,
    stream: data.stream,
    store,
    createdAt: data.enqueuedAt,
  };
}
