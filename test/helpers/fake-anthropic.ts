/**
 * A real loopback HTTP server speaking Anthropic's Messages API (`POST /v1/messages`, JSON or SSE),
 * scriptable per request on the shared machinery of test/helpers/fake-server.ts. It refuses a body
 * without the fields the real API requires, in Anthropic's error shape. In-process:
 * `startAnthropicUpstream()`. Standalone: `node test/helpers/fake-anthropic.ts --port 0` prints
 * `{"url":…}` and is scripted over the control routes. Also home of the fixtures' catalog entry.
 */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import type { ModelOf } from '../../src/providers/model.ts';
import type { anthropicDescriptor } from '../../src/providers/anthropic/descriptor.ts';
import type { AnthropicErrorBody, AnthropicErrorDetail } from '../../src/providers/anthropic/wire.ts';
import type { AnthropicUsage } from '../../src/wire/anthropic-usage.ts';
import { runStandalone, sendJson, sendStatus, sseEvent, startFakeServer, writeInPieces, type FakeServer, type RecordedRequest } from './fake-server.ts';

/** How the fake answers one Messages API call (JSON or SSE as the body's `stream` asks). */
export type AnthropicBehaviour =
  /** A text answer; SSE events written whole, or cut every `pieceBytes` bytes, `delayMs` apart. */
  | { kind: 'ok'; text?: string; usage?: AnthropicUsage; pieceBytes?: number; delayMs?: number }
  /** responses/<name>.json's `upstream`, or streams/<name>.sse replayed, from test/fixtures/anthropic/. */
  | { kind: 'fixture'; name: string; pieceBytes?: number }
  /** An error answer; the default body is Anthropic's error shape for the status. */
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: unknown }
  /** A 2xx stream: `afterText` as output (if any), then `event: error`, then the end. Non-streamed: the error's HTTP status. */
  | { kind: 'error-event'; afterText?: string; error: AnthropicErrorDetail | AnthropicErrorBody }
  | { kind: 'hang' }
  /** A 2xx answer whose connection is destroyed after `afterText`, without message_stop. */
  | { kind: 'cut'; afterText?: string };

/** A running fake; `url` is the base_url to put in the catalog (requests go to `${url}/v1/messages`). */
export interface FakeAnthropic extends FakeServer<AnthropicBehaviour> {
  url: string;
}

/** The catalog entry the fixtures assume (each fixture's `model` overrides are spread on top; tests set base_url). */
export const ANTHROPIC_FIXTURE_MODEL: ModelOf<typeof anthropicDescriptor> = {
  provider: 'anthropic',
  upstream_model: 'claude-sonnet-test',
  api_key_env: 'ANTHROPIC_API_KEY',
  context_window: 200000,
  max_output_tokens: 8192,
  input_price_per_mtok: 3,
  output_price_per_mtok: 15,
  cache_read_price_per_mtok: 0.3,
  cache_write_price_per_mtok: 3.75,
};

/** Where the Anthropic fixtures are. */
export const ANTHROPIC_FIXTURES_DIR = new URL('../fixtures/anthropic/', import.meta.url);

/** A fixture file's text (`requests/text.json`, `streams/text.sse`…). */
export function readAnthropicFixture(path: string): string {
  return readFileSync(new URL(path, ANTHROPIC_FIXTURES_DIR), 'utf8');
}

const DEFAULT_TEXT = 'Hello from the fake anthropic.';
const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};
const STATUS_OF_TYPE: Readonly<Record<string, number>> = Object.fromEntries(Object.entries(ERROR_TYPES).map(([status, type]) => [type, Number(status)]));

type MessagesBody = { model?: unknown; max_tokens?: unknown; messages?: unknown; system?: unknown; stream?: unknown; thinking?: unknown };

/** Starts the fake on 127.0.0.1 (port 0 unless given). */
export async function startAnthropicUpstream(port = 0): Promise<FakeAnthropic> {
  const server = await startFakeServer<AnthropicBehaviour>(
    { route: (method, path) => method === 'POST' && path === '/v1/messages', defaultBehaviour: { kind: 'ok' }, respond },
    port,
  );
  return Object.assign(server, { url: server.origin });
}

/** Anthropic's error body. */
export function anthropicError(type: string, message: string): AnthropicErrorBody {
  return { type: 'error', error: { type, message } };
}

async function respond(
  behaviour: AnthropicBehaviour,
  request: RecordedRequest<AnthropicBehaviour>,
  res: ServerResponse,
  breakConnection: () => void,
): Promise<void> {
  const invalid = invalidRequest(request);
  if (invalid !== null) return sendJson(res, 400, anthropicError('invalid_request_error', invalid), requestIdHeader(request));
  const body = request.body as MessagesBody;
  const streaming = body.stream === true;
  const id = `msg_01Fake${String(request.index).padStart(18, '0')}`;
  switch (behaviour.kind) {
    case 'ok': {
      const text = behaviour.text ?? DEFAULT_TEXT;
      const usage = behaviour.usage ?? { input_tokens: words(promptText(body)), output_tokens: words(text) };
      if (!streaming) return sendJson(res, 200, message(id, body, text, usage), requestIdHeader(request));
      return writeSse(res, request, okEvents(id, body, text, usage), behaviour.pieceBytes, behaviour.delayMs);
    }
    case 'fixture':
      return replayFixture(res, request, behaviour.name, streaming, behaviour.pieceBytes);
    case 'status': {
      const type = ERROR_TYPES[behaviour.status] ?? (behaviour.status >= 500 ? 'api_error' : 'invalid_request_error');
      return sendStatus(res, behaviour.status, behaviour.body ?? anthropicError(type, `Fake Anthropic error ${behaviour.status}`), {
        ...requestIdHeader(request),
        ...behaviour.headers,
      });
    }
    case 'error-event': {
      const payload = 'error' in behaviour.error ? behaviour.error : anthropicError(behaviour.error.type, behaviour.error.message);
      if (!streaming) return sendJson(res, STATUS_OF_TYPE[payload.error.type] ?? 500, payload, requestIdHeader(request));
      return writeSse(res, request, [...startEvents(id, body, behaviour.afterText), sseEvent(payload, 'error')]);
    }
    case 'hang':
      return;
    case 'cut': {
      res.writeHead(200, { 'content-type': streaming ? 'text/event-stream' : 'application/json', ...requestIdHeader(request) });
      const partial = streaming
        ? startEvents(id, body, behaviour.afterText).join('')
        : JSON.stringify(message(id, body, behaviour.afterText ?? '', {})).slice(0, 40);
      return void res.write(partial, breakConnection);
    }
  }
}

// The checks of the real API that a translation bug could trip, with its messages.
function invalidRequest(request: RecordedRequest<AnthropicBehaviour>): string | null {
  if (request.headers['anthropic-version'] === undefined) return 'anthropic-version: header is required';
  const body = request.body as MessagesBody;
  if (typeof body !== 'object' || body === null) return 'Input should be an object';
  if (typeof body.model !== 'string' || body.model === '') return 'model: Field required';
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required';
  if (!Array.isArray(body.messages)) return 'messages: Field required';
  for (const [i, turn] of (body.messages as unknown[]).entries()) {
    const { role, content } = (turn ?? {}) as { role?: unknown; content?: unknown };
    if (role !== 'user' && role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (typeof content !== 'string' && !Array.isArray(content)) return `messages.${i}.content: Field required`;
  }
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) return 'system: Input should be a valid list';
  const thinking = body.thinking as { type?: unknown; budget_tokens?: unknown } | undefined;
  if (thinking?.type === 'enabled') {
    if (typeof thinking.budget_tokens !== 'number' || thinking.budget_tokens < 1024)
      return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (thinking.budget_tokens >= body.max_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`';
  }
  return null;
}

function message(id: string, body: MessagesBody, text: string, usage: AnthropicUsage): Record<string, unknown> {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: String(body.model),
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage,
  };
}

function messageStart(id: string, body: MessagesBody, usage: AnthropicUsage): string {
  return sseEvent(
    { type: 'message_start', message: { ...message(id, body, '', { ...usage, output_tokens: 1 }), content: [], stop_reason: null } },
    'message_start',
  );
}

function startEvents(id: string, body: MessagesBody, text: string | undefined): string[] {
  const start = messageStart(id, body, { input_tokens: words(promptText(body)) });
  if (text === undefined || text === '') return [start];
  return [start, sseEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'), textDelta(text)];
}

function okEvents(id: string, body: MessagesBody, text: string, usage: AnthropicUsage): string[] {
  return [
    messageStart(id, body, usage),
    sseEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
    sseEvent({ type: 'ping' }, 'ping'),
    ...split(text, 3).map(textDelta),
    sseEvent({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
    sseEvent(
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output_tokens ?? 0 } },
      'message_delta',
    ),
    sseEvent({ type: 'message_stop' }, 'message_stop'),
  ];
}

function textDelta(text: string): string {
  return sseEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }, 'content_block_delta');
}

async function writeSse(res: ServerResponse, request: RecordedRequest<AnthropicBehaviour>, events: string[], pieceBytes?: number, delayMs = 0): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...requestIdHeader(request) });
  if (pieceBytes !== undefined) await writeInPieces(res, events.join(''), pieceBytes, delayMs);
  else await writeEach(res, events, delayMs);
  if (!res.destroyed) res.end();
}

async function writeEach(res: ServerResponse, events: string[], delayMs: number): Promise<void> {
  for (const event of events) {
    if (res.destroyed) return;
    res.write(event);
    await new Promise((resolve) => (delayMs > 0 ? setTimeout(resolve, delayMs) : setImmediate(resolve)));
  }
}

async function replayFixture(
  res: ServerResponse,
  request: RecordedRequest<AnthropicBehaviour>,
  name: string,
  streaming: boolean,
  pieceBytes?: number,
): Promise<void> {
  let text: string;
  try {
    text = readAnthropicFixture(streaming ? `streams/${name}.sse` : `responses/${name}.json`);
  } catch {
    return sendJson(res, 500, anthropicError('api_error', `The fake has no ${streaming ? 'stream' : 'response'} fixture '${name}'`));
  }
  if (!streaming) return sendJson(res, 200, (JSON.parse(text) as { upstream: unknown }).upstream, requestIdHeader(request));
  // Whole events unless asked otherwise: cut after each blank line.
  const events = pieceBytes === undefined ? text.split(/(?<=\n\n)/) : [text];
  return writeSse(res, request, events, pieceBytes);
}

function requestIdHeader(request: RecordedRequest<AnthropicBehaviour>): Record<string, string> {
  return { 'request-id': `req_01Fake${String(request.index).padStart(18, '0')}` };
}

// Deterministic counts tests can predict: words of the system prompt and of the messages' texts.
function promptText(body: MessagesBody): string {
  const texts = (content: unknown): string[] => {
    if (typeof content === 'string') return [content];
    if (!Array.isArray(content)) return [];
    return content.map((block: { text?: unknown }) => (typeof block?.text === 'string' ? block.text : ''));
  };
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ content?: unknown }>) : [];
  return [...texts(body.system), ...messages.flatMap((turn) => texts(turn.content))].join(' ');
}

function words(text: string): number {
  return text.split(/\s+/).filter((word) => word !== '').length;
}

function split(text: string, pieces: number): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / pieces));
  const parts: string[] = [];
  for (let at = 0; at < chars.length; at += size) parts.push(chars.slice(at, at + size).join(''));
  return parts.length === 0 ? [''] : parts;
}

if (import.meta.main) await runStandalone(startAnthropicUpstream);
