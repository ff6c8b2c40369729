/**
 * Sending one upstream call, shared by every adapter: POST a JSON body through the pooled
 * dispatcher, classify a non-2xx answer with the provider's own error reader, and read bodies
 * within limits. Adapters never retry: the worker owns retries.
 */
import { request, type Dispatcher } from 'undici';
import type { UpstreamHttp } from './http.ts';
import type { ProviderRequest } from '../types.ts';
import { UpstreamError, type ErrorReader } from './upstream-error.ts';

/** A response body as undici gives it. */
export type ResponseBody = Dispatcher.ResponseData['body'];

/** One HTTP call to a provider. */
export interface UpstreamCall {
  url: string;
  headers: Record<string, string>;
  /** The JSON request body, serialised. */
  body: string;
}

// Error bodies are only excerpted; never buffer an arbitrarily large one.
const ERROR_BODY_LIMIT_BYTES = 64 * 1024;
/** The largest non-streamed answer an adapter reads; past it the answer is invalid, not an out-of-memory. */
export const RESPONSE_BODY_LIMIT_BYTES = 32 * 1024 * 1024;

/** What a call is bounded by: the request's cancellation and what is left of its retry budget. */
export type CallLimits = Pick<ProviderRequest, 'signal' | 'timeoutMs'>;

/**
 * Sends the call; resolves with the body of a 2xx answer, throws the classified UpstreamError
 * otherwise. The response must begin within `timeoutMs`, timed here to the millisecond (undici's own
 * timers fire up to a second late), and each piece of its body within the shorter of `timeoutMs` and
 * the configured body timeout.
 */
export async function sendUpstream(http: UpstreamHttp, call: UpstreamCall, limits: CallLimits, readError: ErrorReader): Promise<ResponseBody> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), limits.timeoutMs);
  const signal = AbortSignal.any([limits.signal, deadline.signal]);
  let response: Dispatcher.ResponseData;
  try {
    response = await request(call.url, {
      dispatcher: http.dispatcher,
      method: 'POST',
      headers: call.headers,
      body: call.body,
      signal,
      bodyTimeout: Math.min(http.bodyTimeoutMs, limits.timeoutMs),
    });
  } catch (err) {
    if (deadline.signal.aborted && !limits.signal.aborted) {
      throw new UpstreamError('timeout', `Upstream did not answer within the ${limits.timeoutMs} ms left of the retry budget`, { cause: err });
    }
    throw UpstreamError.fromNetwork(err, limits.signal, 'request');
  } finally {
    clearTimeout(timer);
  }
  if (response.statusCode < 200 || response.statusCode >= 300) {
    const text = await readLimited(response.body, ERROR_BODY_LIMIT_BYTES).catch(() => ({ text: '', truncated: false }));
    throw UpstreamError.fromResponse(response.statusCode, response.headers, text.text, readError);
  }
  return response.body;
}

/** The whole JSON body of a non-streamed answer, parsed; throws UpstreamError on a cut, oversized or non-JSON body. */
export async function readJsonBody(body: ResponseBody, signal: AbortSignal): Promise<unknown> {
  let read: { text: string; truncated: boolean };
  try {
    read = await readLimited(body, RESPONSE_BODY_LIMIT_BYTES);
  } catch (err) {
    throw UpstreamError.fromNetwork(err, signal, 'body');
  }
  if (read.truncated) throw new UpstreamError('invalid_response', `Upstream response is larger than ${RESPONSE_BODY_LIMIT_BYTES} bytes`);
  try {
    return JSON.parse(read.text);
  } catch (err) {
    throw new UpstreamError('invalid_response', 'Upstream response is invalid: body is not JSON', { cause: err });
  }
}

/**
 * Runs a stream translator over a response body: a network failure while reading becomes the
 * classified UpstreamError, and the body is destroyed at the end, so a consumer that stops
 * early does not leave the upstream generating tokens into a pooled socket.
 */
export async function* translateBody<T>(
  body: ResponseBody,
  signal: AbortSignal,
  translate: (source: AsyncIterable<Uint8Array>) => AsyncGenerator<T>,
): AsyncGenerator<T> {
  try {
    yield* translate(body as AsyncIterable<Uint8Array>);
  } catch (err) {
    throw UpstreamError.fromNetwork(err, signal, 'body');
  } finally {
    if (!body.destroyed) body.destroy();
  }
}

async function readLimited(body: ResponseBody, limitBytes: number): Promise<{ text: string; truncated: boolean }> {
  const decoder = new TextDecoder();
  let text = '';
  let received = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    received += chunk.byteLength;
    text += decoder.decode(chunk, { stream: true });
    if (received >= limitBytes) {
      body.destroy();
      return { text: text + decoder.decode(), truncated: true };
    }
  }
  return { text: text + decoder.decode(), truncated: false };
}
