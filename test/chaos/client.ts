/**
 * The campaign's HTTP client: plain fetch, so that every status, header and byte is seen and a
 * request can be dropped at any point. One call is one attempt; what it got is kept as it was.
 */

/** Token counts as a client was told them. */
export interface ToldUsage {
  prompt: number;
  completion: number;
}

/** What one HTTP attempt got. */
export interface Attempt {
  /** 1, 2, … within its request. */
  n: number;
  web: number;
  /** The X-Feature it was sent with: its usage record carries it. */
  tag: string;
  /** ms since the campaign started. */
  startedAt: number;
  endedAt: number;
  /** Null: no answer (a network error, a timeout, or dropped by the client before the headers). */
  status: number | null;
  /** The envelope's code (a non-2xx answer), or a stream's error event's code. */
  errorCode: string | null;
  errorMessage: string | null;
  networkError: string | null;
  /** The client dropped it on purpose. */
  dropped: boolean;
  /** x-request-id. */
  requestId: string | null;
  replayed: boolean;
  xCache: string | null;
  stream: boolean;
  /** The stream reached `data: [DONE]`. */
  done: boolean;
  /** A stream's events with an id, and the last id seen (for Last-Event-ID). */
  chunks: number;
  /** Chunks that carried text (a delta's content). */
  textChunks: number;
  lastEventId: number | null;
  /** The Last-Event-ID it was sent with (a resumed stream). */
  resumedFrom: number | null;
  /** The completion's id (a JSON body's `id`, a chunk's `id`), or a Response's id. */
  completionId: string | null;
  /** A JSON completion's `request_id`: the request that made it (an idempotent replay names the first). */
  bodyRequestId: string | null;
  /** The alias that answered (`model`). */
  model: string | null;
  usage: ToldUsage | null;
  /** A Response object's status (background responses and their polls). */
  responseStatus: string | null;
}

/** How to send one attempt. */
export interface Send {
  origin: string;
  web: number;
  n: number;
  tag: string;
  method: 'GET' | 'POST';
  path: string;
  secret: string;
  body?: unknown;
  stream?: boolean;
  key?: string | null;
  lastEventId?: number | null;
  /** Drop the stream after this many events with an id. */
  dropAfterChunks?: number;
  /** Drop the request after this long. */
  dropAfterMs?: number;
  timeoutMs?: number;
}

function blank(send: Send, startedAt: number): Attempt {
  return {
    n: send.n,
    web: send.web,
    tag: send.tag,
    startedAt,
    endedAt: startedAt,
    status: null,
    errorCode: null,
    errorMessage: null,
    networkError: null,
    dropped: false,
    requestId: null,
    replayed: false,
    xCache: null,
    stream: send.stream === true,
    done: false,
    chunks: 0,
    textChunks: 0,
    lastEventId: send.lastEventId ?? null,
    resumedFrom: send.lastEventId ?? null,
    completionId: null,
    bodyRequestId: null,
    model: null,
    usage: null,
    responseStatus: null,
  };
}

function readUsage(usage: any): ToldUsage | null {
  if (!usage || typeof usage !== 'object') return null;
  if (typeof usage.prompt_tokens === 'number') return { prompt: usage.prompt_tokens, completion: usage.completion_tokens };
  if (typeof usage.input_tokens === 'number') return { prompt: usage.input_tokens, completion: usage.output_tokens };
  return null;
}

function readJson(attempt: Attempt, text: string): void {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    attempt.errorMessage = `not JSON: ${text.slice(0, 200)}`;
    return;
  }
  if (body?.error) {
    attempt.errorCode = body.error.code ?? body.error.type ?? null;
    attempt.errorMessage = String(body.error.message ?? '').slice(0, 300);
    // A failed Response object carries its error too, and is read as a Response.
    if (body.object !== 'response') return;
  }
  attempt.completionId = typeof body?.id === 'string' ? body.id : null;
  attempt.bodyRequestId = typeof body?.request_id === 'string' ? body.request_id : null;
  attempt.model = typeof body?.model === 'string' ? body.model : null;
  attempt.usage = readUsage(body?.usage);
  attempt.responseStatus = body?.object === 'response' ? body.status : null;
}

/** Reads an SSE body event by event; returns when it ends or `drop` says so. */
async function readEvents(attempt: Attempt, body: ReadableStream<Uint8Array>, send: Send, drop: AbortController): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let data = '';
      let id: number | null = null;
      for (const line of event.split('\n')) {
        if (line.startsWith('id:')) id = Number(line.slice(3).trim());
        if (line.startsWith('data:')) data += line.slice(5).trim();
      }
      if (data === '') continue;
      if (data === '[DONE]') {
        attempt.done = true;
        continue;
      }
      // A client resumes after the last event it read; one that read [DONE] has nothing to resume.
      if (id !== null) attempt.lastEventId = id;
      const payload = JSON.parse(data);
      if (payload.error) {
        attempt.errorCode = payload.error.code ?? null;
        attempt.errorMessage = String(payload.error.message ?? '').slice(0, 300);
        continue;
      }
      attempt.chunks++;
      if (typeof payload.choices?.[0]?.delta?.content === 'string' && payload.choices[0].delta.content !== '') attempt.textChunks++;
      attempt.completionId ??= payload.id ?? null;
      attempt.model = payload.model ?? attempt.model;
      attempt.usage = readUsage(payload.usage) ?? attempt.usage;
      if (send.dropAfterChunks !== undefined && attempt.chunks >= send.dropAfterChunks) {
        attempt.dropped = true;
        drop.abort();
        return;
      }
    }
  }
}

/** Sends one attempt and returns what it got; never throws. `clock` gives ms since the campaign started. */
export async function sendAttempt(send: Send, clock: () => number): Promise<Attempt> {
  const attempt = blank(send, clock());
  const drop = new AbortController();
  const signals = [drop.signal, AbortSignal.timeout(send.timeoutMs ?? 30_000)];
  const timer = send.dropAfterMs === undefined ? null : setTimeout(() => ((attempt.dropped = true), drop.abort()), send.dropAfterMs);
  const headers: Record<string, string> = { authorization: `Bearer ${send.secret}`, 'x-feature': send.tag };
  if (send.body !== undefined) headers['content-type'] = 'application/json';
  if (send.key) headers['idempotency-key'] = send.key;
  if (send.lastEventId) headers['last-event-id'] = String(send.lastEventId);
  try {
    const answer = await fetch(`${send.origin}${send.path}`, {
      method: send.method,
      headers,
      body: send.body === undefined ? undefined : JSON.stringify(send.body),
      signal: AbortSignal.any(signals),
    });
    attempt.status = answer.status;
    attempt.requestId = answer.headers.get('x-request-id');
    attempt.replayed = answer.headers.get('idempotent-replayed') === 'true';
    attempt.xCache = answer.headers.get('x-cache');
    if (answer.status === 200 && send.stream && answer.body) await readEvents(attempt, answer.body, send, drop);
    else readJson(attempt, await answer.text());
  } catch (error) {
    if (!attempt.dropped)
      attempt.networkError = (error as Error).cause ? `${(error as Error).message}: ${String((error as Error).cause)}` : (error as Error).message;
  } finally {
    if (timer) clearTimeout(timer);
    attempt.endedAt = clock();
  }
  return attempt;
}

/** A call of the operator or a tenant's admin (setup, top-ups, checks): status and parsed body; status 0 on a network error. */
export async function adminCall(origin: string, secret: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  try {
    const answer = await fetch(`${origin}${path}`, {
      method,
      headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await answer.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      // Kept as text.
    }
    return { status: answer.status, body: parsed };
  } catch (error) {
    return { status: 0, body: { error: { code: 'network_error', message: (error as Error).message } } };
  }
}
