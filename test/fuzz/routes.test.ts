/**
 * Every route, attacked as a hostile client would: generated request bodies (valid ones mutated, deep
 * and wide structures, huge numbers, invalid UTF-8, control characters, bytes that are not JSON;
 * for an upload, multipart forms with odd fields, filenames, parts and boundaries, or cut short),
 * headers, query strings and path parameters, sent as raw HTTP to web and worker processes. For each
 * case: no 5xx, every error is the envelope with its request id, and both processes still answer
 * /healthz. The seed is fixed in CI (printed with the case count); FUZZ_RUNS and FUZZ_SEED run more or
 * other cases.
 */
import { connect } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, opsUrl, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { MAX_JSON_DEPTH } from '../../src/web/plugins/request-bounds.ts';
import { MAX_PASSTHROUGH_BYTES } from '../../src/operations/chat/passthrough-size.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const RUNS = Number(process.env.FUZZ_RUNS ?? 500);

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let port: number;
let consoleDir: string;
let keys: Record<'operator' | 'admin' | 'developer' | 'app' | 'auditor', string>;

/** A batch input file of acme's, stored before the cases run: what POST /v1/batches's valid body names. */
const INPUT_FILE = 'file-fuzz-input';
const VALID_LINE = `${JSON.stringify({ custom_id: 'line-1', method: 'POST', url: '/v1/chat/completions', body: { model: 'sim', messages: [{ role: 'user', content: 'Hello' }] } })}\n`;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  // A console build of its own: /console is fuzzed whether or not `npm run build:console` ran.
  consoleDir = await mkdtemp(join(tmpdir(), 'gw-fuzz-console-'));
  await writeFile(join(consoleDir, 'index.html'), '<!doctype html>');
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    env: { TENANT_RPM: '0', TENANT_TPM: '0', KEY_RPM: '0', KEY_TPM: '0', CONSOLE_DIR: consoleDir },
  });
  port = Number(new URL(gateway.origin).port);
  keys = {
    operator: (await gateway.issueKey('operator', 'admin')).secret,
    admin: (await gateway.issueKey('acme', 'admin')).secret,
    developer: (await gateway.issueKey('acme', 'developer')).secret,
    app: (await gateway.issueKey('acme', 'app')).secret,
    auditor: (await gateway.issueKey('acme', 'auditor')).secret,
  };
  const record = { id: INPUT_FILE, tenantId: 'acme', purpose: 'batch' as const, filename: 'input.jsonl', createdAt: new Date(), expiresAt: null };
  await gateway.repository.files.create(
    record,
    (async function* () {
      yield Buffer.from(VALID_LINE);
    })(),
  );
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  if (consoleDir) await rm(consoleDir, { recursive: true, force: true });
});

/** One raw HTTP request: method, target (path and query as sent, not re-encoded), headers, body bytes. */
interface RawRequest {
  method: string;
  target: string;
  headers: Array<[string, string]>;
  body: Buffer | null;
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends the request on its own connection and reads the answer until the server closes it. */
function send(request: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(15_000, () => socket.destroy(new Error(`no answer to ${request.method} ${request.target} within 15 s`)));
    socket.on('data', (data: Buffer) => chunks.push(data));
    socket.on('error', reject);
    socket.on('close', () => resolve(parse(Buffer.concat(chunks).toString('utf8'))));
    const head = [
      `${request.method} ${request.target} HTTP/1.1`,
      'host: fuzz',
      'connection: close',
      ...request.headers.map(([name, value]) => `${name}: ${value}`),
    ];
    if (request.body !== null) head.push(`content-length: ${request.body.length}`);
    // Not end(): a client that half-closes may see the server close before it answers.
    socket.write(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), request.body ?? Buffer.alloc(0)]));
  });
}

function parse(text: string): RawResponse {
  const split = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  let body = text.slice(split + 4);
  if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

function dechunk(text: string): string {
  let out = '';
  for (let at = 0; at < text.length;) {
    const end = text.indexOf('\r\n', at);
    const size = Number.parseInt(text.slice(at, end), 16);
    if (!(size > 0)) break;
    out += text.slice(end + 2, end + 2 + size);
    at = end + 2 + size + 2;
  }
  return out;
}

/** What every answer must be: not 5xx; an error is the envelope, with the request id of its header. */
function checkAnswer(request: RawRequest, response: RawResponse): void {
  const what = `${request.method} ${request.target} → ${response.status} ${response.body.slice(0, 300)}`;
  expect(response.status, what).toBeGreaterThanOrEqual(200);
  expect(response.status, what).toBeLessThan(500);
  if (response.status < 400) return;
  let envelope: { error?: Record<string, unknown> };
  try {
    envelope = JSON.parse(response.body) as { error?: Record<string, unknown> };
  } catch {
    throw new Error(`not JSON: ${what}`);
  }
  // Anthropic's Messages API (and its Message Batches) answers in Anthropic's error shape, every other route in the spec's.
  if (/^\/v1\/messages(\/count_tokens|\/batches(\/[^?]*)?)?(\?|$)/.test(request.target) && (envelope as { type?: unknown }).type === 'error') {
    const anthropic = envelope as { error?: Record<string, unknown>; request_id?: unknown };
    expect(Object.keys(anthropic), what).toEqual(['type', 'error', 'request_id']);
    expect(anthropic.error, what).toMatchObject({
      type: expect.stringMatching(
        /^(invalid_request_error|authentication_error|permission_error|not_found_error|request_too_large|rate_limit_error|api_error)$/,
      ),
      code: expect.any(String),
      message: expect.any(String),
    });
    expect(response.headers['x-request-id'], what).toBe(anthropic.request_id);
    return;
  }
  expect(Object.keys(envelope), what).toEqual(['error']);
  expect(envelope.error, what).toMatchObject({
    type: expect.stringMatching(/^(invalid_request_error|authentication_error|rate_limit_error|api_error)$/),
    code: expect.any(String),
    message: expect.any(String),
  });
  expect(envelope.error?.request_id, what).toMatch(/^req_/);
  expect(response.headers['x-request-id'], what).toBe(envelope.error?.request_id);
}

async function bothProcessesAnswer(): Promise<void> {
  expect((await fetch(`${gateway.origin}/healthz`)).status).toBe(200);
  for (const worker of gateway.workers) expect((await fetch(`${opsUrl(worker)}/healthz`)).status).toBe(200);
}

// ---- what the cases are made of ----

const HUGE_NUMBERS = [1e308, -1e308, 2 ** 63, -(2 ** 63), 2 ** 53 + 1, Number.MAX_VALUE, 5e-324, 1e21, -0];
const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\u0000\u0001\u001f',
  '\u2028\u2029',
  '\uffff',
  '\ud800',
  '💥'.repeat(50),
  'a'.repeat(5000),
  '{{name}}',
  '../../etc/passwd',
  '%E0%A4%A',
  'req_\r\nx',
];

/** JSON nested `levels` deep in arrays or objects, written directly (no recursion to build it). */
function deepJson(levels: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(levels)}1${']'.repeat(levels)}` : `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...HUGE_NUMBERS),
  fc.constantFrom(...ODD_STRINGS),
  fc.jsonValue({ maxDepth: 4 }),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { minLength: 200, maxLength: 2000 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.integer(), { minKeys: 200, maxKeys: 1000 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

/** `valid` with `field` set to `value` in its first message, or in its first request's params (a message batch); else at the top. */
function nested(valid: Record<string, unknown>, field: string, value: unknown): Record<string, unknown> {
  const { messages, requests } = valid;
  if (Array.isArray(messages) && messages.length > 0) return { ...valid, messages: [{ ...(messages[0] as object), [field]: value }, ...messages.slice(1)] };
  if (Array.isArray(requests) && requests.length > 0) {
    const [first, ...rest] = requests as Array<{ params?: object }>;
    return { ...valid, requests: [{ ...first, params: { ...first?.params, [field]: value } }, ...rest] };
  }
  return { ...valid, [field]: value };
}

/** Replaces, removes or adds one field of a valid body (at the top, or in its first message or request), or leaves it. */
function mutate(valid: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.keys(valid);
  return fc.oneof(
    fc.constant(valid),
    fc.tuple(fc.constantFrom(...fields), oddValue).map(([field, value]) => ({ ...valid, [field]: value })),
    fc.constantFrom(...fields).map((field) => Object.fromEntries(Object.entries(valid).filter(([key]) => key !== field))),
    fc.tuple(fc.string({ minLength: 1, maxLength: 12 }), oddValue).map(([field, value]) => ({ ...valid, [field]: value })),
    fc
      .tuple(fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('model', 'max_tokens', 'messages', 'content', 'stream')), oddValue)
      .map(([field, value]) => nested(valid, field, value)),
  );
}

/** A body as bytes: JSON of a (mutated) object, a deep structure, bytes that are not UTF-8 or not JSON. */
function bodyOf(valid: Record<string, unknown>): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { weight: 6, arbitrary: mutate(valid).map((body) => Buffer.from(JSON.stringify(body))) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: MAX_JSON_DEPTH - 2, max: 20_000 }), fc.constantFrom('array' as const, 'object' as const))
        .map(([levels, kind]) => Buffer.from(JSON.stringify(valid).replace(/^\{/, `{"deep":${deepJson(levels, kind)},`))),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
        Buffer.from('{"model":"fake-gpt","messages":[{"role":"user","content":"\xc3\x28"}]}', 'latin1'),
        Buffer.from(JSON.stringify(valid).slice(0, -3)),
      ),
    },
  );
}

/** A path parameter as sent: valid, odd text percent-encoded, a broken escape, or over the router's length limit. */
const pathParam = fc.oneof(
  fc.constantFrom('greet', 'no-such', 'x'.repeat(99)),
  fc.string({ maxLength: 40 }).map((text) => encodeURIComponent(text) || 'x'),
  fc.constantFrom('%E0%A4%A', '%', '%zz', 'a%00b', '..%2F..%2Fetc', 'x'.repeat(300)),
);

/** A query string: valid-looking parameters with odd values, repeated keys, broken escapes. */
const query = fc.oneof(
  fc.constant(''),
  fc
    .dictionary(
      fc.constantFrom(
        'since',
        'until',
        'limit',
        'cursor',
        'model',
        'feature',
        'key_id',
        'group_by',
        'action',
        'actor',
        'purpose',
        'order',
        'after',
        'after_id',
        'before_id',
        'x',
      ),
      fc.oneof(
        fc.constantFrom('2026-11-01', '2026-02-30', '-1', '1e308', '9999999999999999999', '', 'day', 'model', 'batch', 'asc', INPUT_FILE),
        fc.string({ maxLength: 20 }),
      ),
    )
    .map((params) => `?${new URLSearchParams(params).toString()}`),
  fc.constantFrom('?since=%E0%A4%A', '?since=2026-11-01&since=2026-11-02', '?limit=1&limit=2', '?cursor=' + 'A'.repeat(5000), '?%zz=1'),
);

const headerValue = fc.oneof(
  fc.constantFrom('', ' ', 'a'.repeat(300), 'x'.repeat(8000), 'é', '\t'),
  fc.string({ maxLength: 30, unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }),
);

/** Headers besides the key: content type, idempotency key, feature, Last-Event-ID, each maybe odd. */
const extraHeaders = fc.record(
  {
    'content-type': fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/json; charset=latin1',
      '',
    ),
    'idempotency-key': headerValue,
    'x-feature': headerValue,
    'last-event-id': headerValue,
  },
  { requiredKeys: ['content-type'] },
);

const BOUNDARY = 'fuzz-form-7MA4YWxkTrZu0gW';

/** One part of a multipart form: a field, or a file part when it has a filename. */
function formPart(name: string, value: Buffer, filename?: string): Buffer {
  const disposition = `form-data; name="${name}"${filename === undefined ? '' : `; filename="${filename}"`}`;
  const type = filename === undefined ? '' : 'content-type: application/octet-stream\r\n';
  return Buffer.concat([Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: ${disposition}\r\n${type}\r\n`), value, Buffer.from('\r\n')]);
}

/**
 * POST /v1/files's body: a form of a batch file and its fields, each maybe odd: the purpose missing or
 * not one a client uploads, expires_after's fields, the file's name and content, no file, two, one under
 * another name, the fields before or after it, the form cut short.
 */
const uploadForm: fc.Arbitrary<Buffer> = fc
  .record({
    purpose: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('batch', 'user_data') },
      { weight: 1, arbitrary: fc.oneof(fc.constantFrom(undefined, 'batch_output', 'assistants', ''), fc.string({ maxLength: 20 })) },
    ),
    expires: fc.oneof(
      { weight: 3, arbitrary: fc.constant(undefined) },
      {
        weight: 1,
        arbitrary: fc.tuple(fc.constantFrom('created_at', 'last_active_at', ''), fc.constantFrom('3600', '2592000', '0', '-1', '1e9', '99999999999', 'x')),
      },
    ),
    fieldsFirst: fc.boolean(),
    fileName: fc.oneof({ weight: 4, arbitrary: fc.constant('file') }, { weight: 1, arbitrary: fc.constantFrom('files', '', 'purpose', 'file[]') }),
    files: fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constantFrom(0, 2) }),
    filename: fc.oneof(
      { weight: 3, arbitrary: fc.constant('input.jsonl') },
      {
        weight: 1,
        arbitrary: fc.oneof(fc.constantFrom('', 'a\u0000b.jsonl', '../../etc/passwd', '💥.jsonl', 'a"b', 'x'.repeat(300)), fc.string({ maxLength: 20 })),
      },
    ),
    content: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(VALID_LINE, VALID_LINE.repeat(3)).map((text) => Buffer.from(text)) },
      {
        weight: 1,
        arbitrary: fc.oneof(
          fc.constantFrom('', '\n\n', '{"custom_id":', `--${BOUNDARY}\r\n`).map((text) => Buffer.from(text)),
          fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
          fc.string({ unit: 'binary', maxLength: 200 }).map((text) => Buffer.from(text)),
        ),
      },
    ),
    cut: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat() }),
  })
  .map(({ purpose, expires, fieldsFirst, fileName, files, filename, content, cut }) => {
    const fields = [
      ...(purpose === undefined ? [] : [formPart('purpose', Buffer.from(purpose))]),
      ...(expires === undefined
        ? []
        : [formPart('expires_after[anchor]', Buffer.from(expires[0])), formPart('expires_after[seconds]', Buffer.from(expires[1]))]),
    ];
    const fileParts = Array.from({ length: files }, () => formPart(fileName, content, filename));
    const form = Buffer.concat([...(fieldsFirst ? [...fields, ...fileParts] : [...fileParts, ...fields]), Buffer.from(`--${BOUNDARY}--\r\n`)]);
    return cut === undefined ? form : form.subarray(0, cut % form.length);
  });

/** An upload's content type: its form's, mostly; else no boundary, another one, or the case's other header. */
const formType = fc.oneof(
  { weight: 8, arbitrary: fc.constant(`multipart/form-data; boundary=${BOUNDARY}`) },
  { weight: 1, arbitrary: fc.constantFrom('multipart/form-data', 'multipart/form-data; boundary=other', 'multipart/form-data; boundary=', 'multipart/mixed') },
  { weight: 1, arbitrary: fc.constant(null) },
);

const VALID_CHAT = { model: 'fake-gpt', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 16 };
const VALID_MESSAGE = { model: 'sim', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] };
type Route = {
  method: string;
  path: fc.Arbitrary<string>;
  key: keyof typeof keys;
  body: Record<string, unknown> | null;
  /** A multipart upload: its body is `uploadForm`'s, not JSON. */
  form?: true;
};
const ROUTES: Route[] = [
  { method: 'POST', path: fc.constant('/v1/chat/completions'), key: 'app', body: VALID_CHAT },
  {
    method: 'POST',
    path: fc.constant('/v1/chat/completions'),
    key: 'app',
    body: { ...VALID_CHAT, stream: true, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] },
  },
  { method: 'POST', path: fc.constant('/v1/chat/completions'), key: 'app', body: { prompt: 'greet', variables: { name: 'Ada' } } },
  { method: 'POST', path: fc.constant('/v1/embeddings'), key: 'app', body: { model: 'sim-embed', input: ['Hello', 'world'] } },
  {
    method: 'POST',
    path: fc.constant('/v1/messages'),
    key: 'app',
    body: {
      model: 'sim',
      max_tokens: 16,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
    },
  },
  {
    method: 'POST',
    path: fc.constant('/v1/messages'),
    key: 'app',
    body: { model: 'sim', max_tokens: 16, stream: true, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello' }] },
  },
  { method: 'POST', path: fc.constant('/v1/messages/count_tokens'), key: 'app', body: { model: 'sim', messages: [{ role: 'user', content: 'Hello' }] } },
  {
    method: 'POST',
    path: fc.constant('/v1/responses'),
    key: 'app',
    body: { model: 'sim', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hello' }] }], max_output_tokens: 16 },
  },
  {
    method: 'POST',
    path: fc.constant('/v1/responses'),
    key: 'app',
    body: { model: 'sim', input: 'Hello', stream: true, tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }] },
  },
  { method: 'GET', path: pathParam.map((id) => `/v1/responses/${id}`), key: 'app', body: null },
  { method: 'GET', path: fc.constant('/v1/models'), key: 'app', body: null },
  { method: 'GET', path: pathParam.map((id) => `/v1/models/${id}`), key: 'app', body: null },
  { method: 'GET', path: pathParam.map((name) => `/v1/prompts/${name}`), key: 'developer', body: null },
  { method: 'GET', path: query.map((q) => `/v1/usage${q}`), key: 'developer', body: null },
  { method: 'GET', path: fc.constant('/v1/budgets'), key: 'developer', body: null },
  { method: 'GET', path: query.map((q) => `/v1/audit${q}`), key: 'auditor', body: null },
  { method: 'POST', path: fc.constant('/v1/files'), key: 'app', body: null, form: true },
  { method: 'GET', path: query.map((q) => `/v1/files${q}`), key: 'app', body: null },
  { method: 'GET', path: fc.oneof(pathParam, fc.constant(INPUT_FILE)).map((id) => `/v1/files/${id}`), key: 'app', body: null },
  { method: 'GET', path: fc.oneof(pathParam, fc.constant(INPUT_FILE)).map((id) => `/v1/files/${id}/content`), key: 'app', body: null },
  // Never the input file of POST /v1/batches's valid body.
  { method: 'DELETE', path: pathParam.map((id) => `/v1/files/${id}`), key: 'app', body: null },
  {
    method: 'POST',
    path: fc.constant('/v1/batches'),
    key: 'app',
    body: { input_file_id: INPUT_FILE, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { run: 'fuzz' } },
  },
  { method: 'GET', path: query.map((q) => `/v1/batches${q}`), key: 'app', body: null },
  { method: 'GET', path: pathParam.map((id) => `/v1/batches/${id}`), key: 'app', body: null },
  { method: 'POST', path: pathParam.map((id) => `/v1/batches/${id}/cancel`), key: 'app', body: null },
  {
    method: 'POST',
    path: fc.constant('/v1/messages/batches'),
    key: 'app',
    body: {
      requests: [
        { custom_id: 'req-1', params: VALID_MESSAGE },
        { custom_id: 'req-2', params: { ...VALID_MESSAGE, system: 'Be brief.', tools: [{ name: 'f', input_schema: { type: 'object' } }] } },
      ],
    },
  },
  { method: 'GET', path: query.map((q) => `/v1/messages/batches${q}`), key: 'app', body: null },
  { method: 'GET', path: pathParam.map((id) => `/v1/messages/batches/${id}`), key: 'app', body: null },
  { method: 'POST', path: pathParam.map((id) => `/v1/messages/batches/${id}/cancel`), key: 'app', body: null },
  { method: 'DELETE', path: pathParam.map((id) => `/v1/messages/batches/${id}`), key: 'app', body: null },
  { method: 'GET', path: pathParam.map((id) => `/v1/messages/batches/${id}/results`), key: 'app', body: null },
  {
    method: 'POST',
    path: pathParam.map((name) => `/internal/v1/prompts/${name}/versions`),
    key: 'admin',
    body: { messages: [{ role: 'user', content: 'Greet {{name}}.' }], model: 'fake-gpt', parameters: { temperature: 0.2 } },
  },
  { method: 'POST', path: pathParam.map((name) => `/internal/v1/prompts/${name}/activate`), key: 'admin', body: { version: 1 } },
  { method: 'GET', path: pathParam.map((name) => `/internal/v1/prompts/${name}/versions`), key: 'admin', body: null },
  { method: 'GET', path: query.map((q) => `/internal/v1/prompts${q}`), key: 'developer', body: null },
  { method: 'GET', path: query.map((q) => `/internal/v1/me${q}`), key: 'auditor', body: null },
  { method: 'GET', path: query.map((q) => `/internal/v1/catalog${q}`), key: 'operator', body: null },
  { method: 'GET', path: query.map((q) => `/internal/v1/queues${q}`), key: 'operator', body: null },
  { method: 'GET', path: pathParam.map((tenant) => `/internal/v1/tenants/${tenant}/budgets`), key: 'operator', body: null },
  { method: 'GET', path: pathParam.map((tenant) => `/internal/v1/tenants/${tenant}/plan`), key: 'operator', body: null },
  {
    method: 'GET',
    path: fc
      .oneof(
        pathParam,
        pathParam.map((name) => `assets/${name}`),
      )
      .map((path) => `/console/${path}`),
    key: 'app',
    body: null,
  },
  { method: 'POST', path: fc.constant('/internal/v1/budgets'), key: 'admin', body: { window: 'day', limit_micros: 1_000_000, feature: 'search' } },
  { method: 'DELETE', path: pathParam.map((id) => `/internal/v1/budgets/${id}`), key: 'admin', body: null },
  { method: 'POST', path: pathParam.map((tenant) => `/internal/v1/tenants/${tenant}/credits`), key: 'operator', body: { amount_micros: 1000 } },
  {
    method: 'PUT',
    path: pathParam.map((tenant) => `/internal/v1/tenants/${tenant}/plan`),
    key: 'operator',
    body: { requests_per_minute: 600, max_queued: 100 },
  },
  { method: 'POST', path: fc.constant('/internal/v1/tenants'), key: 'operator', body: { id: 'fuzz-co', name: 'Fuzz Co' } },
  { method: 'GET', path: fc.constant('/internal/v1/tenants'), key: 'operator', body: null },
  { method: 'PATCH', path: pathParam.map((tenant) => `/internal/v1/tenants/${tenant}`), key: 'operator', body: { name: 'Renamed' } },
  { method: 'POST', path: fc.constant('/internal/v1/keys'), key: 'admin', body: { role: 'app', name: 'fuzz', expires_at: '2099-01-01T00:00:00Z' } },
  { method: 'GET', path: query.map((q) => `/internal/v1/keys${q}`), key: 'admin', body: null },
  { method: 'PATCH', path: pathParam.map((id) => `/internal/v1/keys/${id}`), key: 'admin', body: { rpm: 60, tpm: 1000, max_concurrent: 2 } },
  { method: 'DELETE', path: pathParam.map((id) => `/internal/v1/keys/${id}`), key: 'admin', body: null },
  { method: 'PUT', path: fc.constant('/internal/v1/pii-policy'), key: 'admin', body: { mode: 'mask', critical: ['email'] } },
  { method: 'GET', path: fc.constant('/internal/v1/pii-policy'), key: 'admin', body: null },
  { method: 'GET', path: fc.constant('/internal/v1/audit/verify'), key: 'admin', body: null },
  {
    method: 'POST',
    path: fc.constant('/internal/v1/webhooks'),
    key: 'admin',
    body: { url: 'https://8.8.8.8/hook', events: ['response.completed', 'response.failed'] },
  },
  { method: 'GET', path: fc.constant('/internal/v1/webhooks'), key: 'admin', body: null },
  {
    method: 'PATCH',
    path: pathParam.map((id) => `/internal/v1/webhooks/${id}`),
    key: 'admin',
    body: { url: 'https://8.8.8.8/b', events: ['response.cancelled'], enabled: false },
  },
  { method: 'DELETE', path: pathParam.map((id) => `/internal/v1/webhooks/${id}`), key: 'admin', body: null },
  { method: 'POST', path: pathParam.map((id) => `/internal/v1/webhooks/${id}/rotate-secret`), key: 'admin', body: null },
  { method: 'GET', path: query.map((q) => `/internal/v1/webhooks/wh_none/deliveries${q}`), key: 'admin', body: null },
  { method: 'POST', path: pathParam.map((id) => `/internal/v1/webhooks/wh_none/deliveries/${id}/resend`), key: 'admin', body: null },
  { method: 'GET', path: fc.constantFrom('/healthz', '/readyz', '/', '/v1', '/v1/nothing'), key: 'app', body: null },
];

const requestArbitrary: fc.Arbitrary<RawRequest> = fc.constantFrom(...ROUTES).chain((route) =>
  fc
    .record({
      method: fc.oneof(
        { weight: 9, arbitrary: fc.constant(route.method) },
        { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') },
      ),
      target: route.path,
      key: fc.oneof(
        { weight: 9, arbitrary: fc.constant(`Bearer ${keys[route.key]}`) },
        { weight: 1, arbitrary: fc.constantFrom('', 'Bearer', 'Bearer gwk_nope', `Basic ${keys[route.key]}`, 'Bearer eyJhbGciOiJub25lIn0.e30.') },
      ),
      headers: extraHeaders,
      contentType: route.form ? formType : fc.constant(null),
      body: route.form ? uploadForm : route.body === null ? fc.constant(null) : bodyOf(route.body),
    })
    .map(({ method, target, key, headers, contentType, body }) => ({
      method,
      target,
      headers: [
        ['authorization', key] as [string, string],
        ...Object.entries(contentType === null ? headers : { ...headers, 'content-type': contentType }).filter(([, value]) => value !== ''),
      ],
      body: method === 'GET' || method === 'DELETE' ? null : body,
    })),
);

describe('what the first round of attacks found', () => {
  const chat = (body: string) =>
    send({
      method: 'POST',
      target: '/v1/chat/completions',
      headers: [
        ['authorization', `Bearer ${keys.app}`],
        ['content-type', 'application/json'],
      ],
      body: Buffer.from(body),
    });

  it('an extra field nested 10,000 levels deep is a 400 naming it, before any work (it was a 503 "retry shortly")', async () => {
    const response = await chat(`{"model":"fake-gpt","messages":[{"role":"user","content":"hi"}],"x":${deepJson(10_000, 'object')}}`);
    checkAnswer({ method: 'POST', target: '/v1/chat/completions', headers: [], body: null }, response);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).error).toMatchObject({ code: 'invalid_value', param: 'x.a.a' });
    expect(upstream.requests).toHaveLength(0);
  });

  it('so is a deep array inside a message', async () => {
    const response = await chat(`{"model":"fake-gpt","messages":[{"role":"user","content":"hi","x":${deepJson(10_000, 'array')}}]}`);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).error).toMatchObject({ code: 'invalid_value', param: 'messages[0].x' });
  });

  it(`takes ${MAX_JSON_DEPTH} levels, which a tool's parameter schema may need`, async () => {
    let schema: Record<string, unknown> = { type: 'string' };
    // Two levels per level of the schema, and five above it in the body.
    for (let i = 0; i < (MAX_JSON_DEPTH - 6) / 2; i++) schema = { type: 'object', properties: { a: schema } };
    const response = await chat(
      JSON.stringify({
        model: 'fake-gpt',
        messages: [{ role: 'user', content: 'hi' }],
        tools: [{ type: 'function', function: { name: 'f', parameters: schema } }],
      }),
    );
    expect(response.status).toBe(200);
  });

  it(`refuses fields passed on as sent that hold more than ${MAX_PASSTHROUGH_BYTES} bytes together, naming the one over`, async () => {
    const response = await chat(
      JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: 'hi', note: 'n'.repeat(40_000) }], metadata: { blob: 'm'.repeat(40_000) } }),
    );
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).error).toMatchObject({ code: 'invalid_value', param: 'messages[0].note' });
  });
});

describe('what this fuzzer found, each a 500 before', () => {
  const asAdmin = (method: string, target: string, body?: unknown) =>
    send({
      method,
      target,
      headers: [['authorization', `Bearer ${keys.admin}`], ...(body === undefined ? [] : [['content-type', 'application/json'] as [string, string]])],
      body: body === undefined ? null : Buffer.from(JSON.stringify(body)),
    });

  it('a NUL character in a path parameter is a 400 naming it (PostgreSQL refuses NUL in text)', async () => {
    const response = await asAdmin('DELETE', '/internal/v1/budgets/a%00b');
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).error).toMatchObject({ code: 'invalid_value', param: 'id' });
  });

  it('so is one in a prompt version to be stored, while a completion may send one to its provider', async () => {
    const stored = await asAdmin('POST', '/internal/v1/prompts/nul/versions', { messages: [{ role: 'user', content: 'a\u0000b' }], model: 'fake-gpt' });
    expect(stored.status).toBe(400);
    expect(JSON.parse(stored.body).error).toMatchObject({ code: 'invalid_value', param: 'messages[0].content' });
    const sent = await send({
      method: 'POST',
      target: '/v1/chat/completions',
      headers: [
        ['authorization', `Bearer ${keys.app}`],
        ['content-type', 'application/json'],
      ],
      body: Buffer.from(JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: 'a\u0000b' }] })),
    });
    expect(sent.status).toBe(200);
  });

  it('a prompt version number past what the store holds is a 400', async () => {
    const response = await asAdmin('POST', '/internal/v1/prompts/greet/activate', { version: 2 ** 63 });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).error).toMatchObject({ code: 'invalid_value', param: 'version' });
  });
});

describe('every route, fuzzed', () => {
  it(`answers ${RUNS} generated requests (seed ${SEED}) without a 5xx, each error the envelope, both processes still up`, async () => {
    console.log(`fuzz: seed ${SEED}, ${RUNS} cases (FUZZ_SEED, FUZZ_RUNS to change)`);
    await fc.assert(
      fc.asyncProperty(requestArbitrary, async (request) => {
        checkAnswer(request, await send(request));
        await bothProcessesAnswer();
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  }, 600_000);
});
