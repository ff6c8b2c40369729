/**
 * The Files and Batch APIs as a bench drives them: a JSONL input file generated line by line and
 * uploaded in one streamed multipart POST (never held whole, here or in the request), a batch
 * created on it and polled to its end, and its output file read back as a stream and checked.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { Pool } from 'undici';

/** What an input file holds: `lines` chat completions of `model`, each padded to `lineBytes` when given. */
export interface InputFileSpec {
  lines: number;
  model: string;
  /** Each line's custom_id is `<prefix>-<n>`. */
  prefix: string;
  /** The answer's cap, so that the simulator never answers at length. */
  maxTokens: number;
  /** Bytes of every line, its newline included: the prompt is padded with words to reach it [unpadded]. */
  lineBytes?: number;
}

/** A batch's life as polled: seconds from its creation to each stage first seen. */
export interface BatchRun {
  id: string;
  status: string;
  total: number;
  completed: number;
  failed: number;
  outputFileId: string | null;
  errorFileId: string | null;
  /** Seconds after the create call: `in_progress`, every line with its result, `completed` (or another end). */
  inProgressS: number | null;
  linesDoneS: number | null;
  endedS: number | null;
}

/** What a batch's output file held. */
export interface OutputCheck {
  lines: number;
  status200: number;
  distinctCustomIds: number;
  /** The first line that did not read as a result, if any. */
  firstBad: string | null;
}

/** A batch as GET /v1/batches/{id} answers it (the fields read here). */
interface BatchObject {
  id: string;
  status: string;
  output_file_id: string | null;
  error_file_id: string | null;
  request_counts: { total: number; completed: number; failed: number };
}

const ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);
// Words of the padding: plain prose, nothing a PII scanner or a tokenizer treats specially.
const PADDING = 'the gateway runs this line in the spare capacity that interactive traffic leaves behind and answers it briefly '.repeat(200);
// Lines a generated chunk of the upload carries: ~64 KB for short lines, one for padded ones.
const CHUNK_BYTES = 64 * 1024;

/** The input file's lines, each ending in a newline, made one at a time. */
export function* inputLines(spec: InputFileSpec): Generator<string> {
  for (let n = 0; n < spec.lines; n++) {
    const head = `{"custom_id":"${spec.prefix}-${n}","method":"POST","url":"/v1/chat/completions","body":{"model":"${spec.model}","messages":[{"role":"user","content":"Say hello to line ${n}.`;
    const tail = `"}],"max_tokens":${spec.maxTokens}}}\n`;
    const room = (spec.lineBytes ?? 0) - head.length - tail.length;
    if (room > PADDING.length) throw new Error(`lines of ${spec.lineBytes} bytes need more padding than the bench has`);
    yield room > 0 ? `${head}${PADDING.slice(0, room)}${tail}` : `${head}${tail}`;
  }
}

/** The multipart form of an upload: `purpose`, then the file, generated in chunks as undici asks for them. */
async function* multipartBody(boundary: string, spec: InputFileSpec, sent: { bytes: number }): AsyncGenerator<Buffer> {
  yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n`);
  yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${spec.prefix}.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n`);
  let parts: string[] = [];
  let size = 0;
  for (const line of inputLines(spec)) {
    parts.push(line);
    size += line.length;
    if (size < CHUNK_BYTES) continue;
    sent.bytes += size;
    yield Buffer.from(parts.join(''));
    parts = [];
    size = 0;
  }
  sent.bytes += size;
  if (parts.length > 0) yield Buffer.from(parts.join(''));
  yield Buffer.from(`\r\n--${boundary}--\r\n`);
}

/** Calls of the Files and Batch APIs with one tenant's key, over their own keep-alive connections. */
export class BatchApi {
  readonly #pool: Pool;
  readonly #base: string;
  readonly #auth: string;

  /** `gatewayUrl`: the gateway's base URL, ending in /v1. */
  constructor(gatewayUrl: string, apiKey: string) {
    const url = new URL(gatewayUrl);
    this.#pool = new Pool(url.origin, { connections: 4, headersTimeout: 600_000, bodyTimeout: 600_000 });
    this.#base = url.pathname;
    this.#auth = `Bearer ${apiKey}`;
  }

  async #json(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
    const headers: Record<string, string> = { authorization: this.#auth };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await this.#pool.request({ method, path: `${this.#base}${path}`, headers, body: body === undefined ? null : JSON.stringify(body) });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`${method} ${path}: status ${response.statusCode}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as Record<string, unknown>;
  }

  /** Uploads the input file in one streamed POST /v1/files; returns its id and the bytes sent. */
  async upload(spec: InputFileSpec): Promise<{ fileId: string; bytes: number }> {
    const boundary = `bench${randomBytes(12).toString('hex')}`;
    const sent = { bytes: 0 };
    const response = await this.#pool.request({
      method: 'POST',
      path: `${this.#base}/files`,
      headers: { authorization: this.#auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: Readable.from(multipartBody(boundary, spec, sent), { objectMode: false }),
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`POST /files: status ${response.statusCode}: ${text.slice(0, 300)}`);
    const file = JSON.parse(text) as { id: string; bytes: number };
    if (file.bytes !== sent.bytes) throw new Error(`POST /files stored ${file.bytes} bytes of the ${sent.bytes} sent`);
    return { fileId: file.id, bytes: file.bytes };
  }

  /** Creates a batch of chat completions on an uploaded file; returns its id. */
  async create(inputFileId: string): Promise<string> {
    const batch = await this.#json('POST', '/batches', { input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    return String(batch.id);
  }

  /** The batch as it stands. */
  async get(id: string): Promise<BatchObject> {
    return (await this.#json('GET', `/batches/${id}`)) as unknown as BatchObject;
  }

  /**
   * Polls a batch every `pollMs` until it ends or `timeoutS` passes (it is then reported as it
   * stood); `createdAt` is `performance.now()` at its create call. `onPoll` sees every answer.
   */
  async follow(id: string, createdAt: number, options: { pollMs: number; timeoutS: number; onPoll?: (batch: BatchObject) => void }): Promise<BatchRun> {
    const seconds = () => (performance.now() - createdAt) / 1000;
    const run: BatchRun = {
      id,
      status: 'validating',
      total: 0,
      completed: 0,
      failed: 0,
      outputFileId: null,
      errorFileId: null,
      inProgressS: null,
      linesDoneS: null,
      endedS: null,
    };
    const deadline = createdAt + options.timeoutS * 1000;
    for (;;) {
      const batch = await this.get(id);
      const counts = batch.request_counts;
      Object.assign(run, { status: batch.status, total: counts.total, completed: counts.completed, failed: counts.failed });
      Object.assign(run, { outputFileId: batch.output_file_id, errorFileId: batch.error_file_id });
      if (run.inProgressS === null && batch.status !== 'validating') run.inProgressS = seconds();
      if (run.linesDoneS === null && counts.total > 0 && counts.completed + counts.failed >= counts.total) run.linesDoneS = seconds();
      options.onPoll?.(batch);
      if (ENDED.has(batch.status)) {
        run.endedS = seconds();
        return run;
      }
      if (performance.now() > deadline) return run;
      await new Promise((resolve) => setTimeout(resolve, options.pollMs));
    }
  }

  /** Reads a batch's output file as a stream, line by line: how many lines, answered 200, distinct custom ids. */
  async checkOutput(fileId: string): Promise<OutputCheck> {
    const response = await this.#pool.request({ method: 'GET', path: `${this.#base}/files/${fileId}/content`, headers: { authorization: this.#auth } });
    if (response.statusCode !== 200)
      throw new Error(`GET /files/${fileId}/content: status ${response.statusCode}: ${(await response.body.text()).slice(0, 300)}`);
    const check: OutputCheck = { lines: 0, status200: 0, distinctCustomIds: 0, firstBad: null };
    const customIds = new Set<string>();
    const take = (line: string) => {
      if (line === '') return;
      check.lines++;
      try {
        const result = JSON.parse(line) as { custom_id?: unknown; response?: { status_code?: unknown } | null };
        customIds.add(String(result.custom_id));
        if (result.response?.status_code === 200) check.status200++;
        else check.firstBad ??= line.slice(0, 300);
      } catch {
        check.firstBad ??= line.slice(0, 300);
      }
    };
    let rest = '';
    response.body.setEncoding('utf8');
    for await (const piece of response.body as AsyncIterable<string>) {
      const lines = (rest + piece).split('\n');
      rest = lines.pop() as string;
      lines.forEach(take);
    }
    take(rest);
    check.distinctCustomIds = customIds.size;
    return check;
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}
