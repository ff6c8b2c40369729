/**
 * Sending one upstream call, shared by every adapter: POST a JSON body through the pooled
 * dispatcher, classify a non-2xx answer with the provider's own error reader, and read bodies
 * within limits. Adapters never retry: the worker owns retries.
 */
import { request, type Dispatcher } from 'undici';
import type { UpstreamHttp } from './http.ts';
import type { ProviderRequest } from '../types.ts';
import type { AnyModel } from '../model.ts';
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

/** What a call is bounded by: the request's cancellation, what is left of its retry budget, and its model's own timeouts. */
export type CallLimits = Pick<ProviderRequest, 'signal' | 'timeoutMs'> & { target: { model: Pick<AnyModel, 'timeouts'> } };

/** A body's own limits, kept for translateBody: when its call was sent, and the model's token timeouts. */
interface BodyLimits {
  sentAt: number;
  firstTokenMs: number | undefined;
  betweenTokensMs: number | undefined;
}

const BODY_LIMITS = new WeakMap<ResponseBody, BodyLimits>();

/**
 * Sends the call; resolves with the body of a 2xx answer, throws the classified UpstreamError
 * otherwise. The response must begin within `timeoutMs` (and the model's `first_token_ms`), timed
 * here to the millisecond (undici's own timers fire up to a second late); each piece of its body
 * must come within the shortest of `timeoutMs`, the model's `between_tokens_ms` and the configured
 * body timeout; and the whole call, body included, within the model's `total_ms`.
 */
export async function sendUpstream(http: UpstreamHttp, call: UpstreamCall, limits: CallLimits, readError: ErrorReader): Promise<ResponseBody> {
  const own = limits.target.model.timeouts ?? {};
  const sentAt = Date.now();
  const totalMs = Math.min(limits.timeoutMs, own.total_ms ?? Infinity);
  const beginMs = Math.min(totalMs, own.first_token_ms ?? Infinity);
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), beginMs);
  const signal = AbortSignal.any([limits.signal, deadline.signal]);
  let response: Dispatcher.ResponseData;
  try {
    response = await request(call.url, {
      dispatcher: http.dispatcher,
      method: 'POST',
      headers: call.headers,
      body: call.body,
      signal,
      bodyTimeout: Math.min(http.bodyTimeoutMs, limits.timeoutMs, own.between_tokens_ms ?? Infinity),
    });
  } catch (err) {
    if (deadline.signal.aborted && !limits.signal.aborted) {
      const what = beginMs < limits.timeoutMs ? "the model's timeout" : 'the retry budget';
      throw new UpstreamError('timeout', `Upstream did not answer within the ${beginMs} ms left of ${what}`, { cause: err });
    }
    throw UpstreamError.fromNetwork(err, limits.signal, 'request');
  } finally {
    clearTimeout(timer);
  }
  if (response.statusCode < 200 || response.statusCode >= 300) {
    const text = await readLimited(response.body, ERROR_BODY_LIMIT_BYTES).catch(() => ({ text: '', truncated: false }));
    throw UpstreamError.fromResponse(response.statusCode, response.headers, text.text, readError);
  }
  if (own.total_ms !== undefined) endBodyAt(response.body, sentAt + totalMs, totalMs);
  // Only a model with token timeouts has its body's chunks timed (translateBody).
  if (own.first_token_ms !== undefined || own.between_tokens_ms !== undefined)
    BODY_LIMITS.set(response.body, { sentAt, firstTokenMs: own.first_token_ms, betweenTokensMs: own.between_tokens_ms });
  return response.body;
}

/** Cuts a body still arriving at `at`: the model's total time for one call is up. */
function endBodyAt(body: ResponseBody, at: number, totalMs: number): void {
  const timer = setTimeout(() => body.destroy(new UpstreamError('timeout', `Upstream did not finish within the model's ${totalMs} ms`)), at - Date.now());
  body.once('close', () => clearTimeout(timer));
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
  const limits = BODY_LIMITS.get(body);
  try {
    const chunks = translate(body as AsyncIterable<Uint8Array>);
    yield* limits ? paced(chunks, body, limits) : chunks;
  } catch (err) {
    throw UpstreamError.fromNetwork(err, signal, 'body');
  } finally {
    if (!body.destroyed) body.destroy();
  }
}

/**
 * The translated chunks, each within its limit: the first within the model's `first_token_ms` of
 * sending the call, each next one within `between_tokens_ms` of the one before. Timed on what the
 * translation yields, not on bytes: a provider's keep-alive comments are not tokens.
 */
async function* paced<T>(chunks: AsyncGenerator<T>, body: ResponseBody, limits: BodyLimits): AsyncGenerator<T> {
  let waitMs = limits.firstTokenMs === undefined ? Infinity : limits.sentAt + limits.firstTokenMs - Date.now();
  let what = `its first token within the model's ${limits.firstTokenMs} ms`;
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      if (Number.isFinite(waitMs)) timer = setTimeout(() => reject(new UpstreamError('timeout', `Upstream did not send ${what}`)), Math.max(0, waitMs));
    });
    let next: IteratorResult<T>;
    const pending = chunks.next();
    // Once the timer won, the body is destroyed under the pending read, which then fails unread.
    pending.catch(() => undefined);
    try {
      next = await Promise.race([pending, late]);
    } catch (err) {
      body.destroy();
      throw err;
    } finally {
      clearTimeout(timer);
    }
    if (next.done) return;
    yield next.value;
    waitMs = limits.betweenTokensMs ?? Infinity;
    what = `a token within the model's ${limits.betweenTokensMs} ms of the last`;
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
