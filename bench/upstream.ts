/**
 * The bench's loopback upstream: a minimal chat server in each provider's wire format, as fast as
 * node:http allows. Run as a child process: `node bench/upstream.ts [--port N]` prints
 * `{"url":"http://127.0.0.1:N/v1"}` once listening (the Anthropic and Gemini paths are on the same origin).
 * Every answer is the same 20 tokens with usage, in OpenAI's chat format (`/v1/chat/completions`: 20
 * content chunks, a usage chunk when `stream_options.include_usage` is set, `data: [DONE]`),
 * Anthropic's Messages format (`/v1/messages`: message_start, a text block of 20 text_delta events,
 * message_delta, message_stop) or Gemini's (`/v1beta/models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse`: 20 events, the last with finishReason and usage). `/v1/embeddings`
 * answers one fixed vector of EMBEDDING_DIMENSIONS floats per input, with usage. No artificial delay.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Content chunks of every streamed answer. */
export const STREAM_CONTENT_CHUNKS = 20;

const MODEL = 'bench-upstream-model';
const CREATED = Math.floor(Date.now() / 1000);
const USAGE = { prompt_tokens: 12, completion_tokens: STREAM_CONTENT_CHUNKS, total_tokens: 12 + STREAM_CONTENT_CHUNKS };
const WORDS = Array.from({ length: STREAM_CONTENT_CHUNKS }, (_, i) => `tok${i} `);

/** Floats of every vector `/v1/embeddings` answers. */
export const EMBEDDING_DIMENSIONS = 32;

type RequestBody = { stream?: unknown; stream_options?: { include_usage?: unknown } | null; input?: unknown; encoding_format?: unknown };

let counter = 0;
const nextId = () => `chatcmpl-bench${(++counter).toString(36)}`;

function completionBody(id: string): string {
  return JSON.stringify({
    id,
    object: 'chat.completion',
    created: CREATED,
    model: MODEL,
    choices: [{ index: 0, message: { role: 'assistant', content: WORDS.join('') }, finish_reason: 'stop' }],
    usage: USAGE,
  });
}

// The frames differ per stream only by id, so they are built from fixed halves around it.
const CHUNK_HEAD = 'data: {"id":"';
const CHUNK_TAILS = WORDS.map(
  (word, i) =>
    `","object":"chat.completion.chunk","created":${CREATED},"model":"${MODEL}","choices":[{"index":0,"delta":${JSON.stringify(i === 0 ? { role: 'assistant', content: word } : { content: word })},"finish_reason":${i === STREAM_CONTENT_CHUNKS - 1 ? '"stop"' : 'null'}}]}\n\n`,
);
const USAGE_TAIL = `","object":"chat.completion.chunk","created":${CREATED},"model":"${MODEL}","choices":[],"usage":${JSON.stringify(USAGE)}}\n\n`;
const DONE = 'data: [DONE]\n\n';

function stream(res: ServerResponse, includeUsage: boolean): void {
  const id = nextId();
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  // One write per event, as a token-by-token server sends them.
  for (const tail of CHUNK_TAILS) res.write(CHUNK_HEAD + id + tail);
  if (includeUsage) res.write(CHUNK_HEAD + id + USAGE_TAIL);
  res.end(DONE);
}

// Anthropic's stream: the same fixed halves around the message id.
const ANTHROPIC_HEAD = 'event: message_start\ndata: {"type":"message_start","message":{"id":"';
const ANTHROPIC_START_TAIL = `","type":"message","role":"assistant","model":"${MODEL}","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}\n\n`;
const ANTHROPIC_EVENTS = [
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
  ...WORDS.map(
    (word) => `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(word)}}}\n\n`,
  ),
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
  `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":${STREAM_CONTENT_CHUNKS}}}\n\n`,
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
];

function anthropicMessage(id: string): string {
  return JSON.stringify({
    id,
    type: 'message',
    role: 'assistant',
    model: MODEL,
    content: [{ type: 'text', text: WORDS.join('') }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: STREAM_CONTENT_CHUNKS },
  });
}

function anthropicStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.write(ANTHROPIC_HEAD + nextId() + ANTHROPIC_START_TAIL);
  for (const event of ANTHROPIC_EVENTS.slice(0, -1)) res.write(event);
  res.end(ANTHROPIC_EVENTS.at(-1));
}

// Gemini's stream: one GenerateContentResponse per event, as the API sends them (the prompt count on every event).
const GEMINI_USAGE = { promptTokenCount: 12, candidatesTokenCount: STREAM_CONTENT_CHUNKS, totalTokenCount: 12 + STREAM_CONTENT_CHUNKS };
const GEMINI_TAILS = WORDS.map((word, i) => {
  const last = i === STREAM_CONTENT_CHUNKS - 1;
  const candidate = { content: { parts: [{ text: word }], role: 'model' }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 };
  const usage = last ? GEMINI_USAGE : { promptTokenCount: 12, totalTokenCount: 12 };
  return `${JSON.stringify({ candidates: [candidate], usageMetadata: usage, modelVersion: MODEL }).slice(0, -1)},"responseId":"`;
});

function geminiResponse(id: string): string {
  const candidate = { content: { parts: [{ text: WORDS.join('') }], role: 'model' }, finishReason: 'STOP', index: 0 };
  return JSON.stringify({ candidates: [candidate], usageMetadata: GEMINI_USAGE, modelVersion: MODEL, responseId: id });
}

function geminiStream(res: ServerResponse): void {
  const id = nextId();
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const tail of GEMINI_TAILS.slice(0, -1)) res.write(`data: ${tail}${id}"}\r\n\r\n`);
  res.end(`data: ${GEMINI_TAILS.at(-1)}${id}"}\r\n\r\n`);
}

// One fixed vector, as floats and as OpenAI's base64 of little-endian float32 (`encoding_format: base64`).
const VECTOR = Array.from({ length: EMBEDDING_DIMENSIONS }, (_, i) => (i + 1) / 64);
const VECTOR_JSON = JSON.stringify(VECTOR);
const VECTOR_BASE64 = JSON.stringify(Buffer.from(new Float32Array(VECTOR).buffer).toString('base64'));

/** One vector per input: a text or a token array is one input, an array of them one each. */
function embeddingsBody(input: unknown, base64: boolean): string {
  const inputs = Array.isArray(input) && input.length > 0 && typeof input[0] !== 'number' ? input.length : 1;
  const vector = base64 ? VECTOR_BASE64 : VECTOR_JSON;
  const data = Array.from({ length: inputs }, (_, index) => `{"object":"embedding","index":${index},"embedding":${vector}}`).join(',');
  return `{"object":"list","data":[${data}],"model":"${MODEL}","usage":{"prompt_tokens":${12 * inputs},"total_tokens":${12 * inputs}}}`;
}

function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const GEMINI_PATH = /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)(\?alt=sse)?$/;

function handle(req: IncomingMessage, res: ServerResponse, raw: string): void {
  const url = req.url ?? '';
  const gemini = GEMINI_PATH.exec(url);
  if (req.method !== 'POST' || (url !== '/v1/chat/completions' && url !== '/v1/messages' && url !== '/v1/embeddings' && gemini === null)) {
    return sendJson(res, 404, '{"error":{"message":"not found","type":"invalid_request_error"}}');
  }
  let body: RequestBody;
  try {
    body = JSON.parse(raw) as RequestBody;
  } catch {
    return sendJson(res, 400, '{"error":{"message":"Invalid JSON body","type":"invalid_request_error"}}');
  }
  if (gemini !== null) return gemini[1] === 'streamGenerateContent' ? geminiStream(res) : sendJson(res, 200, geminiResponse(nextId()));
  if (url === '/v1/embeddings') return sendJson(res, 200, embeddingsBody(body.input, body.encoding_format === 'base64'));
  if (url === '/v1/messages') return body.stream === true ? anthropicStream(res) : sendJson(res, 200, anthropicMessage(nextId()));
  if (body.stream === true) return stream(res, body.stream_options?.include_usage === true);
  sendJson(res, 200, completionBody(nextId()));
}

const server = createServer({ keepAliveTimeout: 120_000, requestTimeout: 30_000 }, (req, res) => {
  let raw = '';
  req.setEncoding('utf8');
  req.on('data', (part: string) => (raw += part));
  req.on('end', () => handle(req, res, raw));
});
server.headersTimeout = 20_000;

const portArg = process.argv.indexOf('--port');
const port = portArg >= 0 ? Number(process.argv[portArg + 1]) : 0;
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` })}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
