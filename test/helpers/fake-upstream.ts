/**
 * A real loopback HTTP server speaking OpenAI's chat completions wire format, scriptable per request.
 * In-process: `startFakeUpstream()`. Standalone: `node test/helpers/fake-upstream.ts --port 0` prints
 * `{"url":…}` on stdout and is scripted over POST /__script, POST /__reset, GET /__requests, GET /__closed/:n.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the fake answers one chat completion request. */
export type Behaviour =
  | { kind: 'ok'; text?: string; chunks?: number; usage?: boolean }
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: unknown }
  | { kind: 'hang' }
  | { kind: 'break-after-first-chunk' }
  | { kind: 'slow-stream'; chunkDelayMs: number; chunks: number };

/** One chat completion request as received (index 0 is the first). */
export interface RecordedRequest {
  index: number;
  headers: IncomingHttpHeaders;
  body: unknown;
  behaviour: Behaviour['kind'];
  /** Whether the client closed the connection before the response was complete. */
  clientClosed: boolean;
}

/** A running fake upstream. */
export interface FakeUpstream {
  /** Base URL ending in `/v1`. */
  url: string;
  requests: RecordedRequest[];
  /** Queues behaviours for the next requests, in order; an empty queue answers the default behaviour. */
  script(behaviours: Behaviour[]): void;
  /** What requests get once the queue is empty: `ok` until set here, and again after reset(). */
  answerByDefault(behaviour: Behaviour): void;
  /** Resolves once the client closed request `n`'s connection before its response completed. */
  waitForClose(n: number, timeoutMs?: number): Promise<void>;
  /** Forgets the queue and the recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

type ChatBody = { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown }; messages?: unknown };

const DEFAULT_TEXT = 'Hello from the fake upstream.';

/** Starts the fake on 127.0.0.1 (port 0 unless given). */
export async function startFakeUpstream(port = 0): Promise<FakeUpstream> {
  const fake = new FakeUpstreamServer();
  await fake.listen(port);
  return fake;
}

class FakeUpstreamServer implements FakeUpstream {
  url = '';
  readonly requests: RecordedRequest[] = [];
  readonly #queue: Behaviour[] = [];
  #fallback: Behaviour = { kind: 'ok' };
  readonly #closeWaiters = new Map<number, Array<() => void>>();
  readonly #server = createServer((req, res) => {
    void this.#handle(req, res).catch(() => res.destroy());
  });

  async listen(port: number): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  script(behaviours: Behaviour[]): void {
    this.#queue.push(...behaviours);
  }

  answerByDefault(behaviour: Behaviour): void {
    this.#fallback = behaviour;
  }

  reset(): void {
    this.#queue.length = 0;
    this.#fallback = { kind: 'ok' };
    this.requests.length = 0;
  }

  waitForClose(n: number, timeoutMs = 5000): Promise<void> {
    if (this.requests[n]?.clientClosed === true) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`request #${n} was not closed within ${timeoutMs} ms`)), timeoutMs);
      const waiters = this.#closeWaiters.get(n) ?? [];
      waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.#closeWaiters.set(n, waiters);
    });
  }

  close(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#server.closeAllConnections();
      this.#server.close(() => resolve());
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://fake');
    const route = `${req.method ?? 'GET'} ${url.pathname}`;
    if (route === 'POST /v1/chat/completions') return this.#chat(req, res, raw);
    if (route === 'POST /__script') this.script(JSON.parse(raw) as Behaviour[]);
    if (route === 'POST /__reset') this.reset();
    if (route === 'POST /__script' || route === 'POST /__reset') return void res.writeHead(204).end();
    if (route === 'GET /__requests') return sendJson(res, 200, this.requests);
    const closed = /^GET \/__closed\/(\d+)$/.exec(route);
    if (closed === null) return sendJson(res, 404, { error: { message: `No route ${route}`, type: 'invalid_request_error' } });
    const timeoutMs = Number(url.searchParams.get('timeoutMs') ?? 5000);
    const ok = await this.waitForClose(Number(closed[1]), timeoutMs).then(() => true, () => false);
    sendJson(res, ok ? 200 : 408, { closed: ok });
  }

  #chat(req: IncomingMessage, res: ServerResponse, raw: string): void {
    let body: ChatBody;
    try {
      body = JSON.parse(raw) as ChatBody;
    } catch {
      return sendJson(res, 400, { error: { message: 'Invalid JSON body', type: 'invalid_request_error' } });
    }
    const behaviour = this.#queue.shift() ?? this.#fallback;
    const record: RecordedRequest = { index: this.requests.length, headers: req.headers, body, behaviour: behaviour.kind, clientClosed: false };
    this.requests.push(record);
    let serverBroke = false;
    res.on('close', () => {
      if (!res.writableFinished && !serverBroke) this.#markClosed(record);
    });
    respond(behaviour, body, res, () => {
      serverBroke = true;
      res.destroy();
    });
  }

  #markClosed(record: RecordedRequest): void {
    record.clientClosed = true;
    // A request recorded before a reset() must not wake waiters for the request now at its index.
    if (this.requests[record.index] !== record) return;
    for (const resolve of this.#closeWaiters.get(record.index) ?? []) resolve();
    this.#closeWaiters.delete(record.index);
  }
}

function respond(behaviour: Behaviour, body: ChatBody, res: ServerResponse, breakConnection: () => void): void {
  const streaming = body.stream === true;
  switch (behaviour.kind) {
    case 'ok': {
      const text = behaviour.text ?? DEFAULT_TEXT;
      const usage = behaviour.usage !== false;
      if (streaming) return void streamChunks(res, body, split(text, behaviour.chunks ?? 3), 0, usage);
      return sendJson(res, 200, completion(body, text, usage));
    }
    case 'status': {
      const payload = behaviour.body ?? { error: { message: `Fake upstream error ${behaviour.status}`, type: errorType(behaviour.status) } };
      res.writeHead(behaviour.status, { 'content-type': 'application/json', ...behaviour.headers });
      return void res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
    }
    case 'hang':
      return;
    case 'break-after-first-chunk': {
      res.writeHead(200, { 'content-type': streaming ? 'text/event-stream' : 'application/json' });
      const first = streaming ? sse(chunk(body, { role: 'assistant', content: 'Hello' }, null)) : '{"id":"chatcmpl-fake","choi';
      return void res.write(first, breakConnection);
    }
    case 'slow-stream': {
      const pieces = Array.from({ length: behaviour.chunks }, (_, i) => `w${i} `);
      if (streaming) return void streamChunks(res, body, pieces, behaviour.chunkDelayMs, true);
      const answer = (): void => {
        if (!res.destroyed) sendJson(res, 200, completion(body, pieces.join(''), true));
      };
      return void setTimeout(answer, behaviour.chunkDelayMs * behaviour.chunks);
    }
  }
}

async function streamChunks(res: ServerResponse, body: ChatBody, pieces: string[], delayMs: number, usage: boolean): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [i, piece] of pieces.entries()) {
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (res.destroyed) return;
    res.write(sse(chunk(body, i === 0 ? { role: 'assistant', content: piece } : { content: piece }, null)));
  }
  res.write(sse(chunk(body, {}, 'stop')));
  if (usage && body.stream_options?.include_usage === true) {
    res.write(sse({ ...chunk(body, {}, null), choices: [], usage: usageFor(body, pieces.join('')) }));
  }
  res.end('data: [DONE]\n\n');
}

function completion(body: ChatBody, text: string, usage: boolean): Record<string, unknown> {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: String(body.model ?? 'fake-model'),
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    ...(usage ? { usage: usageFor(body, text) } : {}),
  };
}

function chunk(body: ChatBody, delta: Record<string, unknown>, finishReason: string | null): Record<string, unknown> {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: String(body.model ?? 'fake-model'),
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

// Deterministic counts tests can predict: words of the string message contents, words of the answer.
function usageFor(body: ChatBody, text: string): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ content?: unknown }>) : [];
  const prompt = messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join(' ');
  const prompt_tokens = words(prompt);
  const completion_tokens = words(text);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

function words(text: string): number {
  return text.split(/\s+/).filter((w) => w !== '').length;
}

function split(text: string, chunks: number): string[] {
  const chars = Array.from(text);
  const count = Math.max(1, Math.min(chunks, chars.length));
  const size = Math.ceil(chars.length / count);
  return Array.from({ length: count }, (_, i) => chars.slice(i * size, (i + 1) * size).join('')).filter((p) => p !== '');
}

function errorType(status: number): string {
  if (status === 429) return 'rate_limit_error';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

function sse(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

if (import.meta.main) {
  const portIndex = process.argv.indexOf('--port');
  const fake = await startFakeUpstream(portIndex === -1 ? 0 : Number(process.argv[portIndex + 1]));
  process.stdout.write(`${JSON.stringify({ url: fake.url })}\n`);
  const stop = (): void => {
    void fake.close().then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
