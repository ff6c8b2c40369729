/**
 * A real loopback HTTP server speaking the Gemini API (v1beta `:batchEmbedContents`, `:generateContent` and
 * `:streamGenerateContent?alt=sse`), scriptable per call (the shared machinery is
 * test/helpers/fake-server.ts). In-process: `startGeminiUpstream()`. Standalone:
 * `node test/helpers/fake-gemini.ts --port 0` prints `{"url":…}` and is scripted over its control routes.
 * Like the real API it refuses, with its own error shape, a body without contents, a turn without
 * parts or with another role, and any field it does not know.
 */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { ModelOf } from '../../src/providers/model.ts';
import type { geminiDescriptor } from '../../src/providers/gemini/descriptor.ts';
import type { GeminiError, GeminiResponse, GeminiUsageMetadata } from '../../src/providers/gemini/wire.ts';
import { isRecord } from '../../src/wire/json.ts';
import { runStandalone, sendJson, sendStatus, startFakeServer, writeInPieces, type FakeServer, type RecordedRequest } from './fake-server.ts';

/** How the fake answers one call. */
export type GeminiBehaviour =
  /**
   * A plain text answer: JSON, or SSE (three events, usage complete on the last) cut every `pieceBytes`
   * bytes (default whole events), `pieceDelayMs` apart (default none).
   */
  | { kind: 'ok'; text?: string; usage?: GeminiUsageMetadata; pieceBytes?: number; pieceDelayMs?: number }
  /** `test/fixtures/gemini/responses/<name>.json`'s `upstream`, or `streams/<name>.sse` replayed, cut every `pieceBytes` bytes, `pieceDelayMs` apart. */
  | { kind: 'fixture'; name: string; pieceBytes?: number; pieceDelayMs?: number }
  /** An error answer; the default body is Gemini's error for the status. */
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: unknown }
  /** A 200 stream sending `afterText` (if any), then `{"error": error}`, then ending; not streamed: the error with its `code` as status. */
  | { kind: 'error-event'; afterText?: string; error: GeminiError }
  | { kind: 'hang' }
  /** A 200 stream that sends `afterText` (if any) and then drops the connection, without a finishReason. */
  | { kind: 'cut'; afterText?: string };

/** A running fake; `url` is the `base_url` to put in the catalog. */
export interface FakeGemini extends FakeServer<GeminiBehaviour> {
  url: string;
}

/** Where the Gemini fixtures are. */
export const GEMINI_FIXTURES_DIR = fileURLToPath(new URL('../fixtures/gemini/', import.meta.url));

/** The catalog entry the Gemini fixtures assume (a fixture's `model` is spread on top). */
export const GEMINI_FIXTURE_MODEL: ModelOf<typeof geminiDescriptor> = {
  provider: 'gemini',
  upstream_model: 'gemini-test-flash',
  api_key_env: 'GEMINI_API_KEY',
  context_window: 1048576,
  max_output_tokens: 8192,
  input_price_per_mtok: 0.3,
  output_price_per_mtok: 2.5,
  cache_read_price_per_mtok: 0.075,
};

const DEFAULT_TEXT = 'Hello from the fake gemini.';
const CALL_PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents)$/;
const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};
const BODY_FIELDS = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent', 'labels']);
const GENERATION_FIELDS = new Set([
  'temperature',
  'topP',
  'topK',
  'maxOutputTokens',
  'stopSequences',
  'seed',
  'candidateCount',
  'presencePenalty',
  'frequencyPenalty',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'responseLogprobs',
  'logprobs',
  'thinkingConfig',
]);
const PART_DATA = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse'];
const PART_FIELDS = new Set([...PART_DATA, 'thought', 'thoughtSignature', 'videoMetadata']);

/** Starts the fake on 127.0.0.1 (port 0 unless given). */
export async function startGeminiUpstream(port = 0): Promise<FakeGemini> {
  const server = await startFakeServer<GeminiBehaviour>(
    { route: (method, path) => method === 'POST' && CALL_PATH.test(path), defaultBehaviour: { kind: 'ok' }, respond },
    port,
  );
  return Object.assign(server, { url: server.origin });
}

/** One SSE event as Gemini writes it (`data:` line, CRLF line ends). */
export function geminiSse(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\r\n\r\n`;
}

/** Gemini's error body for a status. */
export function geminiErrorBody(status: number, message = `Fake Gemini error ${status}`): { error: GeminiError } {
  return { error: { code: status, message, status: STATUS_NAMES[status] ?? 'UNKNOWN' } };
}

async function respond(behaviour: GeminiBehaviour, request: RecordedRequest<GeminiBehaviour>, res: ServerResponse, breakConnection: () => void): Promise<void> {
  const [, model = '', method] = CALL_PATH.exec(request.path) ?? [];
  const stream = method === 'streamGenerateContent';
  if (behaviour.kind === 'hang') return;
  if (behaviour.kind === 'status') return sendStatus(res, behaviour.status, behaviour.body ?? geminiErrorBody(behaviour.status), behaviour.headers);
  if (method === 'batchEmbedContents') return answerEmbeddings(res, request.body, decodeURIComponent(model));
  const refusal = stream && request.query.alt !== 'sse' ? invalid('The fake Gemini streams with alt=sse only.', 'alt') : checkBody(request.body);
  if (refusal !== null) return sendJson(res, 400, refusal);
  const modelVersion = decodeURIComponent(model);
  switch (behaviour.kind) {
    case 'ok':
      return answerText(res, request, modelVersion, stream, behaviour);
    case 'fixture':
      return answerFixture(res, behaviour.name, stream, behaviour);
    case 'error-event':
      if (!stream) return sendJson(res, behaviour.error.code ?? 500, { error: behaviour.error });
      startSse(res);
      if (behaviour.afterText !== undefined) res.write(geminiSse(textEvent(request, modelVersion, behaviour.afterText)));
      return void res.end(geminiSse({ error: behaviour.error }));
    case 'cut':
      if (!stream)
        return void res.writeHead(200, { 'content-type': 'application/json' }).write('{"candidates": [{"content": {"parts": [{"text": "', breakConnection);
      startSse(res);
      return void res.write(behaviour.afterText === undefined ? '' : geminiSse(textEvent(request, modelVersion, behaviour.afterText)), breakConnection);
  }
}

type EmbedRequest = { model?: unknown; content?: { parts?: Array<{ text?: unknown }> }; outputDimensionality?: unknown; [field: string]: unknown };
const EMBED_FIELDS = new Set(['model', 'content', 'taskType', 'title', 'outputDimensionality']);

/**
 * `batchEmbedContents`, as strict as Gemini: each request names the path's model and holds text
 * parts. Request i gets `[i + 1, words, 0, 0, …]` (`outputDimensionality` long, 4 by default); no token counts.
 */
function answerEmbeddings(res: ServerResponse, body: unknown, model: string): void {
  const requests = (body as { requests?: unknown }).requests;
  if (!Array.isArray(requests) || requests.length === 0) return sendJson(res, 400, invalid('requests must be a non-empty array', 'requests'));
  const embeddings: Array<{ values: number[] }> = [];
  for (const [i, request] of (requests as EmbedRequest[]).entries()) {
    const unknown = Object.keys(request).find((field) => !EMBED_FIELDS.has(field));
    if (unknown)
      return sendJson(res, 400, invalid(`Invalid JSON payload received. Unknown name "${unknown}" at 'requests[${i}]'`, `requests[${i}].${unknown}`));
    if (request.model !== `models/${model}`) return sendJson(res, 400, invalid(`requests[${i}].model must be models/${model}`, `requests[${i}].model`));
    const parts = request.content?.parts ?? [];
    if (parts.length === 0 || !parts.every((part) => typeof part.text === 'string'))
      return sendJson(res, 400, invalid(`requests[${i}].content must hold text parts`, `requests[${i}].content`));
    const text = parts.map((part) => part.text as string).join(' ');
    const length = typeof request.outputDimensionality === 'number' ? request.outputDimensionality : 4;
    embeddings.push({ values: Array.from({ length }, (_, j) => (j === 0 ? i + 1 : j === 1 ? text.split(/\s+/).filter(Boolean).length : 0)) });
  }
  sendJson(res, 200, { embeddings });
}

type Pacing = { pieceBytes?: number; pieceDelayMs?: number };

async function answerText(
  res: ServerResponse,
  request: RecordedRequest<GeminiBehaviour>,
  modelVersion: string,
  stream: boolean,
  behaviour: Pacing & { text?: string; usage?: GeminiUsageMetadata },
): Promise<void> {
  const text = behaviour.text ?? DEFAULT_TEXT;
  const usage = behaviour.usage ?? countUsage(request.body, text);
  if (!stream) return sendJson(res, 200, { ...textEvent(request, modelVersion, text, 'STOP'), usageMetadata: usage });
  const pieces = split(text, 3);
  const events = pieces.map((piece, i) => {
    const last = i === pieces.length - 1;
    const event = textEvent(request, modelVersion, piece, last ? 'STOP' : undefined);
    // Events before the last carry the prompt count only; the completion counts come with the last.
    return geminiSse({ ...event, usageMetadata: last ? usage : { promptTokenCount: usage.promptTokenCount } });
  });
  startSse(res);
  if (behaviour.pieceBytes !== undefined) await writeInPieces(res, events.join(''), behaviour.pieceBytes, behaviour.pieceDelayMs);
  else for (const event of events) await writeInPieces(res, event, Buffer.byteLength(event), behaviour.pieceDelayMs);
  if (!res.destroyed) res.end();
}

async function answerFixture(res: ServerResponse, name: string, stream: boolean, pacing: Pacing): Promise<void> {
  if (!stream) {
    const fixture = JSON.parse(readFileSync(`${GEMINI_FIXTURES_DIR}responses/${name}.json`, 'utf8')) as { upstream: unknown };
    return sendJson(res, 200, fixture.upstream);
  }
  const body = readFileSync(`${GEMINI_FIXTURES_DIR}streams/${name}.sse`, 'utf8');
  startSse(res);
  await writeInPieces(res, body, pacing.pieceBytes ?? Buffer.byteLength(body), pacing.pieceDelayMs);
  if (!res.destroyed) res.end();
}

function textEvent(request: RecordedRequest<GeminiBehaviour>, modelVersion: string, text: string, finishReason?: string): GeminiResponse {
  const candidate = { content: { parts: [{ text }], role: 'model' }, index: 0, ...(finishReason === undefined ? {} : { finishReason }) };
  return { candidates: [candidate], modelVersion, responseId: `fake-gemini-${request.index}` };
}

function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

// The checks the real API makes that a translator bug could trip, with its messages.
function checkBody(body: unknown): { error: GeminiError } | null {
  if (!isRecord(body)) return invalid('Invalid JSON payload received. Expected an object.', '');
  const unknown = Object.keys(body).find((key) => !BODY_FIELDS.has(key));
  if (unknown !== undefined) return invalid(`Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`, unknown);
  if (!Array.isArray(body.contents) || body.contents.length === 0) return invalid('* GenerateContentRequest.contents: contents is not specified\n', 'contents');
  for (const [i, content] of body.contents.entries()) {
    const problem = checkContent(content, `contents[${i}]`);
    if (problem !== null) return problem;
  }
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  const unknownConfig = Object.keys(config).find((key) => !GENERATION_FIELDS.has(key));
  if (unknownConfig !== undefined)
    return invalid(
      `Invalid JSON payload received. Unknown name "${unknownConfig}" at 'generation_config': Cannot find field.`,
      `generation_config.${unknownConfig}`,
    );
  return null;
}

function checkContent(content: unknown, field: string): { error: GeminiError } | null {
  if (!isRecord(content)) return invalid(`* GenerateContentRequest.${field}: must be an object\n`, field);
  if (content.role !== undefined && content.role !== 'user' && content.role !== 'model')
    return invalid('Please use a valid role: user, model.', `${field}.role`);
  if (!Array.isArray(content.parts) || content.parts.length === 0)
    return invalid(`* GenerateContentRequest.${field}.parts: contents.parts must not be empty.\n`, `${field}.parts`);
  for (const [j, part] of content.parts.entries()) {
    const keys = isRecord(part) ? Object.keys(part) : [];
    const unknown = keys.find((key) => !PART_FIELDS.has(key));
    if (unknown !== undefined)
      return invalid(
        `Invalid JSON payload received. Unknown name "${unknown}" at '${field}.parts[${j}]': Cannot find field.`,
        `${field}.parts[${j}].${unknown}`,
      );
    if (keys.filter((key) => PART_DATA.includes(key)).length !== 1) {
      return invalid(
        `* GenerateContentRequest.${field}.parts[${j}].data: required oneof field 'data' must have one initialized field\n`,
        `${field}.parts[${j}].data`,
      );
    }
  }
  return null;
}

function invalid(message: string, field: string): { error: GeminiError } {
  const error = geminiErrorBody(400, message).error;
  return { error: { ...error, details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field, description: message }] }] } };
}

// Deterministic counts tests can predict: words of every text part sent, words of the answer.
function countUsage(body: unknown, text: string): Required<Pick<GeminiUsageMetadata, 'promptTokenCount' | 'candidatesTokenCount' | 'totalTokenCount'>> {
  const promptTokenCount = words(textsOf(body).join(' '));
  const candidatesTokenCount = words(text);
  return { promptTokenCount, candidatesTokenCount, totalTokenCount: promptTokenCount + candidatesTokenCount };
}

function textsOf(body: unknown): string[] {
  if (!isRecord(body)) return [];
  const turns = [...(Array.isArray(body.contents) ? body.contents : []), body.systemInstruction];
  return turns
    .flatMap((turn) => (isRecord(turn) && Array.isArray(turn.parts) ? turn.parts : []))
    .flatMap((part) => (isRecord(part) && typeof part.text === 'string' ? [part.text] : []));
}

function words(text: string): number {
  return text.split(/\s+/).filter((word) => word !== '').length;
}

function split(text: string, count: number): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / count));
  const pieces = Array.from({ length: count }, (_, i) => chars.slice(i * size, (i + 1) * size).join('')).filter((piece) => piece !== '');
  return pieces.length > 0 ? pieces : [''];
}

if (import.meta.main) await runStandalone(startGeminiUpstream);
