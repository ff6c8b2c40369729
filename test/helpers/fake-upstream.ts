/**
 * A real loopback HTTP server speaking OpenAI's chat completions and embeddings wire formats, scriptable per request
 * (the shared machinery is test/helpers/fake-server.ts). In-process: `startFakeUpstream()`. Standalone:
 * `node test/helpers/fake-upstream.ts --port 0` prints `{"url":…}` and is scripted over its control routes.
 */
import type { ServerResponse } from 'node:http';
import { runStandalone, sendJson, sendStatus, sseEvent, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.ts';

/** A function call the fake answers with; streamed, its arguments come in two pieces. */
export interface FakeToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * How the fake answers one request (embeddings take `ok`, with `usage: false` to report none, and the failures).
 * `ok` with `toolCalls` answers them after the text (none by default then), with finish_reason `tool_calls`.
 */
export type Behaviour =
  | { kind: 'ok'; text?: string; chunks?: number; usage?: boolean | Record<string, unknown>; toolCalls?: FakeToolCall[] }
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: unknown }
  | { kind: 'hang' }
  | { kind: 'break-after-first-chunk' }
  /** `chunks` pieces `chunkDelayMs` apart, each `w<i> ` or, with `chunkBytes`, that many bytes of text. */
  | { kind: 'slow-stream'; chunkDelayMs: number; chunks: number; chunkBytes?: number };

/** A running fake upstream; `url` is its base URL ending in `/v1`. */
export interface FakeUpstream extends FakeServer<Behaviour> {
  url: string;
}

type ChatBody = { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown }; messages?: unknown };

const DEFAULT_TEXT = 'Hello from the fake upstream.';

/** Starts the fake on 127.0.0.1 (port 0 unless given). */
export async function startFakeUpstream(port = 0): Promise<FakeUpstream> {
  const server = await startFakeServer<Behaviour>(
    // OpenAI's paths, and Azure OpenAI's deployment paths (base URL: the origin).
    {
      route: (method, path) => method === 'POST' && /^(\/v1|\/openai\/deployments\/[^/]+)\/(chat\/completions|embeddings)$/.test(path),
      defaultBehaviour: { kind: 'ok' },
      respond,
    },
    port,
  );
  return Object.assign(server, { url: `${server.origin}/v1` });
}

function respond(behaviour: Behaviour, request: RecordedRequest<Behaviour>, res: ServerResponse, breakConnection: () => void): void {
  if (request.path.endsWith('/embeddings') && behaviour.kind === 'ok')
    return sendJson(res, 200, embeddings(request.body as EmbeddingsBody, behaviour.usage !== false));
  const body = request.body as ChatBody;
  const streaming = body.stream === true;
  switch (behaviour.kind) {
    case 'ok': {
      const calls = behaviour.toolCalls ?? [];
      const text = behaviour.text ?? (calls.length > 0 ? '' : DEFAULT_TEXT);
      const usage = usageOf(behaviour.usage, body, text);
      if (streaming) return void streamChunks(res, body, split(text, behaviour.chunks ?? 3), 0, usage, calls);
      return sendJson(res, 200, completion(body, text, usage, calls));
    }
    case 'status':
      return sendStatus(
        res,
        behaviour.status,
        behaviour.body ?? { error: { message: `Fake upstream error ${behaviour.status}`, type: errorType(behaviour.status) } },
        behaviour.headers,
      );
    case 'hang':
      return;
    case 'break-after-first-chunk': {
      res.writeHead(200, { 'content-type': streaming ? 'text/event-stream' : 'application/json' });
      const first = streaming ? sseEvent(chunk(body, { role: 'assistant', content: 'Hello' }, null)) : '{"id":"chatcmpl-fake","choi';
      return void res.write(first, breakConnection);
    }
    case 'slow-stream': {
      const pieces = Array.from({ length: behaviour.chunks }, (_, i) =>
        behaviour.chunkBytes === undefined ? `w${i} ` : `${'x'.repeat(behaviour.chunkBytes - 1)} `,
      );
      const usage = usageFor(body, pieces.join(''));
      if (streaming) return void streamChunks(res, body, pieces, behaviour.chunkDelayMs, usage);
      const answer = (): void => {
        if (!res.destroyed) sendJson(res, 200, completion(body, pieces.join(''), usage));
      };
      return void setTimeout(answer, behaviour.chunkDelayMs * behaviour.chunks);
    }
  }
}

// `usage: false` sends none; an object is sent as the usage (details included); otherwise counted words.
function usageOf(setting: boolean | Record<string, unknown> | undefined, body: ChatBody, text: string): Record<string, unknown> | null {
  if (setting === false) return null;
  return typeof setting === 'object' ? setting : usageFor(body, text);
}

async function streamChunks(
  res: ServerResponse,
  body: ChatBody,
  pieces: string[],
  delayMs: number,
  usage: Record<string, unknown> | null,
  calls: FakeToolCall[] = [],
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  // As providers do: the headers go at once, before the model's first token.
  res.flushHeaders();
  for (const [i, piece] of pieces.entries()) {
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (res.destroyed) return;
    res.write(sseEvent(chunk(body, i === 0 ? { role: 'assistant', content: piece } : { content: piece }, null)));
  }
  // As OpenAI streams a call: its id and name first, then its arguments in pieces.
  for (const [index, call] of calls.entries()) {
    const half = Math.ceil(call.arguments.length / 2);
    const opening = { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } };
    res.write(sseEvent(chunk(body, { ...(pieces.length === 0 && index === 0 ? { role: 'assistant', content: null } : {}), tool_calls: [opening] }, null)));
    for (const part of [call.arguments.slice(0, half), call.arguments.slice(half)])
      res.write(sseEvent(chunk(body, { tool_calls: [{ index, function: { arguments: part } }] }, null)));
  }
  res.write(sseEvent(chunk(body, {}, calls.length > 0 ? 'tool_calls' : 'stop')));
  if (usage && body.stream_options?.include_usage === true) res.write(sseEvent({ ...chunk(body, {}, null), choices: [], usage }));
  res.end('data: [DONE]\n\n');
}

function completion(body: ChatBody, text: string, usage: Record<string, unknown> | null, calls: FakeToolCall[] = []): Record<string, unknown> {
  const toolCalls = calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  const message = calls.length > 0 ? { role: 'assistant', content: text === '' ? null : text, tool_calls: toolCalls } : { role: 'assistant', content: text };
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof body.model === 'string' ? body.model : 'fake-model',
    choices: [{ index: 0, message, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop' }],
    ...(usage ? { usage } : {}),
  };
}

function chunk(body: ChatBody, delta: Record<string, unknown>, finishReason: string | null): Record<string, unknown> {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: typeof body.model === 'string' ? body.model : 'fake-model',
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

type EmbeddingsBody = { model?: unknown; input: string | string[] | number[] | number[][]; dimensions?: number; encoding_format?: string };

/**
 * Vectors tests can predict: for input i, `[i + 1, words, 0, 0, …]` (`dimensions` long, 3 by
 * default), base64 when asked; prompt tokens are the words of the texts (a token array's length).
 */
function embeddings(body: EmbeddingsBody, withUsage: boolean): Record<string, unknown> {
  const items =
    typeof body.input === 'string' || typeof body.input[0] === 'number' ? [body.input as string | number[]] : (body.input as Array<string | number[]>);
  const tokens = (item: string | number[]) => (typeof item === 'string' ? words(item) : item.length);
  const data = items.map((item, index) => {
    const vector = Array.from({ length: body.dimensions ?? 3 }, (_, j) => (j === 0 ? index + 1 : j === 1 ? tokens(item) : 0));
    const embedding = body.encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
    return { object: 'embedding', index, embedding };
  });
  const promptTokens = items.reduce((sum, item) => sum + tokens(item), 0);
  return { object: 'list', data, model: String(body.model), ...(withUsage ? { usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } } : {}) };
}

function errorType(status: number): string {
  if (status === 429) return 'rate_limit_error';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

if (import.meta.main) await runStandalone(startFakeUpstream);
