/** The gateway's API on the same origin: the bearer token from this tab's session, errors as the envelope says them. */
import { takeEvents } from './sse.ts';

const TOKEN_KEY = 'gateway.token';

/** The token (an API key or a JWT) this tab signed in with, or null. */
export function getToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Keeps the token for this tab only: sessionStorage ends with the tab, unlike localStorage. */
export function setToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** A refusal or failure, with the envelope's message and the request id to quote to an operator. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly requestId: string | null,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

interface Envelope {
  error?: { message?: unknown; code?: unknown; request_id?: unknown };
  request_id?: unknown;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** The error of a body in either dialect: OpenAI's `{error:{…, request_id}}` or Anthropic's `{type:'error', error:{…}, request_id}`. */
export function errorOf(body: unknown, status: number, headerId: string | null): ApiError {
  const envelope = (typeof body === 'object' && body !== null ? body : {}) as Envelope;
  const message = text(envelope.error?.message) ?? `The gateway answered ${status}.`;
  const requestId = text(envelope.error?.request_id) ?? text(envelope.request_id) ?? headerId;
  return new ApiError(message, status, requestId, text(envelope.error?.code));
}

type Query = Record<string, string | number | undefined | null>;

/** Options of one call: a JSON body, a query string, an abort signal. */
export interface CallOptions {
  method?: string;
  body?: unknown;
  query?: Query;
  signal?: AbortSignal;
}

/** `path` with the query's set values appended. */
export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  const search = params.toString();
  return search === '' ? path : `${path}?${search}`;
}

function headers(json: boolean): Record<string, string> {
  const token = getToken();
  return { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(json ? { 'content-type': 'application/json' } : {}) };
}

async function send(path: string, options: CallOptions): Promise<Response> {
  try {
    return await fetch(withQuery(path, options.query), {
      method: options.method ?? 'GET',
      headers: headers(options.body !== undefined),
      body: options.body === undefined ? null : JSON.stringify(options.body),
      signal: options.signal ?? null,
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(`The gateway could not be reached (${(error as Error).message}).`, 0, null);
  }
}

async function refusal(response: Response): Promise<ApiError> {
  const body: unknown = await response.json().catch(() => null);
  return errorOf(body, response.status, response.headers.get('x-request-id'));
}

/** Calls the API and returns its JSON answer (undefined for 204); throws ApiError for any answer that is not 2xx. */
export async function api<T>(path: string, options: CallOptions = {}): Promise<T> {
  const response = await send(path, options);
  if (!response.ok) throw await refusal(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

interface ChatChunk {
  choices?: Array<{ delta?: { content?: string | null } }>;
  error?: unknown;
}

/**
 * POSTs a streamed chat completion and hands each content delta to `onDelta` as it arrives. SSE is read by
 * hand because EventSource can neither POST nor send an Authorization header.
 */
export async function streamChat(body: unknown, onDelta: (text: string) => void, signal?: AbortSignal): Promise<void> {
  const response = await send('/v1/chat/completions', { method: 'POST', body, ...(signal ? { signal } : {}) });
  if (!response.ok || response.body === null) throw await refusal(response);
  const requestId = response.headers.get('x-request-id');
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const { data: events, rest } = takeEvents(buffer + value);
    buffer = rest;
    for (const data of events) {
      if (data === '[DONE]') return;
      const chunk = JSON.parse(data) as ChatChunk;
      if (chunk.error !== undefined) throw errorOf(chunk, response.status, requestId);
      const delta = chunk.choices?.[0]?.delta?.content;
      if (delta) onDelta(delta);
    }
  }
}
