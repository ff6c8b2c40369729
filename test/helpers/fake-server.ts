/**
 * What every fake provider upstream shares: a real loopback HTTP server that records each call
 * (path, query, headers, parsed body), answers scripted behaviours in order, tells when a client
 * closed a connection early, and writes its bytes in pieces cut wherever a test asks.
 * Each provider's fake (fake-upstream.ts, fake-anthropic.ts, fake-gemini.ts) supplies its routes
 * and how it answers a behaviour. Control routes, for a fake run as its own process:
 * POST /__script, POST /__reset, GET /__requests, GET /__closed/:n.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A scripted behaviour: at least its kind. */
export interface BehaviourBase {
  kind: string;
}

/** One provider call as received (index 0 is the first). */
export interface RecordedRequest<B extends BehaviourBase = BehaviourBase> {
  index: number;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: unknown;
  behaviour: B['kind'];
  /** The client's port: calls on one kept-alive connection share it. */
  clientPort: number;
  /** Whether the client closed the connection before the response was complete. */
  clientClosed: boolean;
  /** When the call arrived (Date.now()). */
  receivedAt: number;
}

/** What a provider's fake answers one recorded call with. */
export type Responder<B extends BehaviourBase> = (
  behaviour: B,
  request: RecordedRequest<B>,
  res: ServerResponse,
  breakConnection: () => void,
) => void | Promise<void>;

/** A running fake upstream. */
export interface FakeServer<B extends BehaviourBase> {
  /** http://127.0.0.1:<port> */
  origin: string;
  requests: Array<RecordedRequest<B>>;
  /** Queues behaviours for the next calls, in order; an empty queue answers the default behaviour. */
  script(behaviours: B[]): void;
  /** What calls get once the queue is empty: the fake's own default until set here, and again after reset(). */
  answerByDefault(behaviour: B): void;
  /** Resolves once the client closed call `n`'s connection before its response completed. */
  waitForClose(n: number, timeoutMs?: number): Promise<void>;
  /** Forgets the queue and the recorded calls. */
  reset(): void;
  close(): Promise<void>;
}

/** A provider's fake: which calls are provider calls, what it answers by default, and how it answers. */
export interface FakeProvider<B extends BehaviourBase> {
  /** True for the method and path of a provider call (the rest get 404, or are control routes). */
  route(method: string, path: string): boolean;
  defaultBehaviour: B;
  respond: Responder<B>;
}

/** Starts a fake on 127.0.0.1 (port 0 unless given). */
export async function startFakeServer<B extends BehaviourBase>(provider: FakeProvider<B>, port = 0): Promise<FakeServer<B>> {
  const fake = new Server(provider);
  await fake.listen(port);
  return fake;
}

class Server<B extends BehaviourBase> implements FakeServer<B> {
  origin = '';
  readonly requests: Array<RecordedRequest<B>> = [];
  readonly #provider: FakeProvider<B>;
  readonly #queue: B[] = [];
  #fallback: B;
  readonly #closeWaiters = new Map<number, Array<() => void>>();
  readonly #server = createServer((req, res) => {
    void this.#handle(req, res).catch(() => res.destroy());
  });

  constructor(provider: FakeProvider<B>) {
    this.#provider = provider;
    this.#fallback = provider.defaultBehaviour;
  }

  async listen(port: number): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(port, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  script(behaviours: B[]): void {
    this.#queue.push(...behaviours);
  }

  answerByDefault(behaviour: B): void {
    this.#fallback = behaviour;
  }

  reset(): void {
    this.#queue.length = 0;
    this.#fallback = this.#provider.defaultBehaviour;
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
    const method = req.method ?? 'GET';
    if (this.#provider.route(method, url.pathname)) return this.#call(req, res, url, raw);
    const route = `${method} ${url.pathname}`;
    if (route === 'POST /__script') this.script(JSON.parse(raw) as B[]);
    if (route === 'POST /__reset') this.reset();
    if (route === 'POST /__script' || route === 'POST /__reset') return void res.writeHead(204).end();
    if (route === 'GET /__requests') return sendJson(res, 200, this.requests);
    const closed = /^GET \/__closed\/(\d+)$/.exec(route);
    if (closed === null) return sendJson(res, 404, { error: { message: `No route ${route}`, type: 'not_found' } });
    const timeoutMs = Number(url.searchParams.get('timeoutMs') ?? 5000);
    const ok = await this.waitForClose(Number(closed[1]), timeoutMs).then(
      () => true,
      () => false,
    );
    sendJson(res, ok ? 200 : 408, { closed: ok });
  }

  async #call(req: IncomingMessage, res: ServerResponse, url: URL, raw: string): Promise<void> {
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return sendJson(res, 400, { error: { message: 'Invalid JSON body', type: 'invalid_request_error' } });
    }
    const behaviour = this.#queue.shift() ?? this.#fallback;
    const record: RecordedRequest<B> = {
      index: this.requests.length,
      method: req.method ?? 'POST',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
      behaviour: behaviour.kind,
      clientPort: req.socket.remotePort ?? 0,
      clientClosed: false,
      receivedAt: Date.now(),
    };
    this.requests.push(record);
    let serverBroke = false;
    res.on('close', () => {
      if (!res.writableFinished && !serverBroke) this.#markClosed(record);
    });
    await this.#provider.respond(behaviour, record, res, () => {
      serverBroke = true;
      res.destroy();
    });
  }

  #markClosed(record: RecordedRequest<B>): void {
    record.clientClosed = true;
    // A request recorded before a reset() must not wake waiters for the request now at its index.
    if (this.requests[record.index] !== record) return;
    for (const resolve of this.#closeWaiters.get(record.index) ?? []) resolve();
    this.#closeWaiters.delete(record.index);
  }
}

/**
 * Writes `text` as separate writes cut every `pieceBytes` bytes (1: byte by byte), so that the
 * client's parser meets events, lines, and UTF-8 characters split anywhere. Resolves once
 * written; stops early when the client went away.
 */
export async function writeInPieces(res: ServerResponse, text: string, pieceBytes: number, delayMs = 0): Promise<void> {
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; at += pieceBytes) {
    if (res.destroyed) return;
    res.write(bytes.subarray(at, at + pieceBytes));
    // A pause lets each piece leave as its own TCP segment; without one, Node may coalesce them.
    await new Promise((resolve) => (delayMs > 0 ? setTimeout(resolve, delayMs) : setImmediate(resolve)));
  }
}

/** One `data:` event (with its `event:` name when given). */
export function sseEvent(payload: unknown, event?: string): string {
  const data = `data: ${JSON.stringify(payload)}\n\n`;
  return event === undefined ? data : `event: ${event}\n${data}`;
}

/** A JSON response. */
export function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(payload));
}

/** A behaviour's fixed answer: status, headers and a body (JSON, or text as given). */
export function sendStatus(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/** Runs a fake as its own process: prints `{"url":…}` on stdout and stops on SIGTERM or SIGINT. */
export async function runStandalone(start: (port: number) => Promise<{ url: string; close(): Promise<void> }>): Promise<void> {
  const portIndex = process.argv.indexOf('--port');
  const fake = await start(portIndex === -1 ? 0 : Number(process.argv[portIndex + 1]));
  process.stdout.write(`${JSON.stringify({ url: fake.url })}\n`);
  const stop = (): void => {
    void fake.close().then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
