/**
 * The bench's loopback upstream: a minimal OpenAI chat completions server, as fast as node:http allows.
 * Run as a child process: `node bench/upstream.ts [--port N]` prints `{"url":"http://127.0.0.1:N/v1"}` once listening.
 * Non-streamed: one JSON completion with usage. Streamed: exactly 20 content chunks, a usage chunk when
 * `stream_options.include_usage` is set, then `data: [DONE]`. No artificial delay.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Content chunks of every streamed answer. */
export const STREAM_CONTENT_CHUNKS = 20;

const MODEL = 'bench-upstream-model';
const CREATED = Math.floor(Date.now() / 1000);
const USAGE = { prompt_tokens: 12, completion_tokens: STREAM_CONTENT_CHUNKS, total_tokens: 12 + STREAM_CONTENT_CHUNKS };
const WORDS = Array.from({ length: STREAM_CONTENT_CHUNKS }, (_, i) => `tok${i} `);

type ChatBody = { stream?: unknown; stream_options?: { include_usage?: unknown } | null };

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
const CHUNK_TAILS = WORDS.map((word, i) =>
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

function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function handle(req: IncomingMessage, res: ServerResponse, raw: string): void {
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
    return sendJson(res, 404, '{"error":{"message":"not found","type":"invalid_request_error"}}');
  }
  let body: ChatBody;
  try {
    body = JSON.parse(raw) as ChatBody;
  } catch {
    return sendJson(res, 400, '{"error":{"message":"Invalid JSON body","type":"invalid_request_error"}}');
  }
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
