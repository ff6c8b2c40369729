/**
 * Anthropic's Messages API untranslated, for clients of the gateway's own POST /v1/messages routed
 * to an Anthropic model: their blocks, cache_control, thinking and server tools pass as they were
 * sent, and the answer comes back as Anthropic sent it. Only what the gateway must know is read:
 * errors (in bodies and as `event: error`), and whether the stream ended with message_stop.
 */
import type { ModelOf } from '../model.ts';
import type { anthropicDescriptor } from './descriptor.ts';
import { isRecord } from '../../wire/json.ts';
import type { UpstreamCall } from '../shared/send.ts';
import { iterSseJson } from '../shared/sse.ts';
import { UpstreamError, excerpt, invalidResponse } from '../shared/upstream-error.ts';
import type { MessagesBody, NativeEvent, NativeMessage, ProviderTarget } from '../types.ts';
import { errorDetailOf, errorFromEvent } from './errors.ts';
import { messagesAddress } from './request.ts';

type Target = ProviderTarget<ModelOf<typeof anthropicDescriptor>>;

/** The call: the client's body with the upstream's model name, and the client's beta flags added to the catalog's. */
export function buildNativeCall(target: Target, body: MessagesBody, betas: readonly string[], stream: boolean): UpstreamCall {
  const upstream = stream ? { ...body, model: target.upstreamModel, stream: true } : { ...body, model: target.upstreamModel };
  return { ...messagesAddress(target, stream, betas), body: JSON.stringify(upstream) };
}

/** A non-streamed answer, checked to be a message (an error body sent with 200 is the error it reports). */
export function parseNativeMessage(parsed: unknown): NativeMessage {
  const error = errorDetailOf(parsed);
  if (error !== null) throw errorFromEvent(error);
  if (!isRecord(parsed) || parsed.type !== 'message' || !Array.isArray(parsed.content)) throw invalidResponse('the body is not a message');
  return parsed as NativeMessage;
}

/**
 * The events of a stream as sent, each with `type` first; pings are left out (the gateway keeps
 * the client's connection alive itself). An `error` event is thrown as the UpstreamError it stands
 * for, and a stream that ends before message_stop is broken. What follows message_stop is read and
 * ignored, so that the connection goes back to the pool.
 */
export async function* nativeEvents(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<NativeEvent> {
  let stopped = false;
  let sent = false;
  for await (const event of iterSseJson(source)) {
    if (event.type !== 'json' || stopped) continue;
    if (!isRecord(event.data)) throw invalidResponse('a stream event is not a JSON object');
    const type = typeof event.data.type === 'string' ? event.data.type : event.event;
    if (type === null) throw invalidResponse('a stream event without a type');
    if (type === 'error') throw errorFromEvent(errorDetailOf(event.data) ?? { type: 'unknown_error', message: excerpt(JSON.stringify(event.data)) });
    if (type === 'ping') continue;
    stopped = type === 'message_stop';
    sent = true;
    yield { type, ...event.data };
  }
  if (!stopped) throw new UpstreamError('broken_stream', `Upstream stream ended without message_stop ${sent ? 'after' : 'before'} its first event`);
}
