/**
 * The OpenAPI document against the gateway it describes, over real web and worker processes: it
 * is valid OpenAPI 3.1, it lists every public route and nothing internal, and every answer that
 * real requests provoke (each status, JSON body and streamed event) is one the document declares
 * for its route, checked with ajv (a byte stream or JSON Lines: its media type declared). /docs
 * renders it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually } from '../helpers/http.ts';
import type { Role } from '../../src/infra/store/repository.ts';

// The document as JSON: its shape is what is under test.
type Json = any;

const BODY_LIMIT = 64 * 1024;
const today = new Date().toISOString().slice(0, 10);
const CHAT = { model: 'sim', messages: [{ role: 'user', content: 'hi' }] };
const MESSAGE = { model: 'sim', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
/** The one line of the batch input file the probes upload. */
const BATCH_LINE = JSON.stringify({ custom_id: 'line-1', method: 'POST', url: '/v1/chat/completions', body: CHAT });

/** POST /v1/files's form: `content` as a file (a batch input by default), and `purpose` unless null. */
function uploadForm(purpose: string | null = 'batch', content: string = `${BATCH_LINE}\n`): FormData {
  const form = new FormData();
  if (purpose !== null) form.append('purpose', purpose);
  form.append('file', new Blob([content]), 'input.jsonl');
  return form;
}

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let doc: Json;
const keys = {} as Record<Role, string>;
let operatorAdmin: string;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
/** `METHOD /path` of the document → the statuses requests got from it. */
const seen = new Map<string, Set<number>>();

/** A request of the test: the route as the document names it, and what to send. */
interface Probe {
  method: string;
  url: string;
  /** The document's path of the route (`/v1/models/{id}`). */
  path: string;
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  /** The raw body, sent as is (a body too large, or not JSON). */
  raw?: string;
  /** A `multipart/form-data` body (its boundary set by fetch). */
  form?: FormData;
}

function pointer(...parts: string[]): string {
  return `openapi.json#/${parts.map((part) => encodeURIComponent(part.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/')}`;
}

function validate(ref: string, value: unknown, what: string): void {
  const check = ajv.getSchema(ref);
  if (!check) throw new Error(`no schema at ${ref}`);
  expect(check(value), `${what}: ${JSON.stringify(check.errors)}\n${JSON.stringify(value).slice(0, 2000)}`).toBe(true);
}

/** Checks an answer against the document: its status is declared for the route, its JSON body or each streamed event matches. */
function expectDocumented(probe: Probe, status: number, contentType: string, text: string): void {
  const method = probe.method.toLowerCase();
  const operation = doc.paths[probe.path]?.[method];
  expect(operation, `${probe.method} ${probe.path} is in the document`).toBeDefined();
  expect(Object.keys(operation.responses), `${probe.method} ${probe.path} declares ${status}: ${text.slice(0, 300)}`).toContain(String(status));
  const what = `${probe.method} ${probe.url} → ${status}`;
  const media = contentType.split(';')[0] as string;
  expect(Object.keys(operation.responses[status].content ?? {}), `${what} declares ${media}`).toContain(media);
  const base = ['paths', probe.path, method, 'responses', String(status), 'content', media];
  if (media === 'application/json') validate(pointer(...base, 'schema'), JSON.parse(text), what);
  else if (media === 'text/event-stream') {
    const events = text.split('\n').filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]');
    expect(events.length, `${what}: events`).toBeGreaterThan(0);
    for (const event of events) validate(pointer(...base, 'x-sse-data'), JSON.parse(event.slice('data: '.length)), `${what} event`);
  } else {
    // Bytes (a file's content) or JSON Lines (a message batch's results): the document declares the media type, as a string.
    expect(operation.responses[status].content[media].schema.type, `${what}: ${media} is a string`).toBe('string');
  }
  const key = `${probe.method} ${probe.path}`;
  seen.set(key, (seen.get(key) ?? new Set()).add(status));
}

/** Sends the probe with the key given (acme's admin by default) and checks its answer against the document. */
async function send(probe: Probe, expected: number): Promise<{ text: string; headers: Headers }> {
  const key = probe.key === undefined ? keys.admin : probe.key;
  const headers: Record<string, string> = { ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...probe.headers };
  if (probe.body !== undefined || probe.raw !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(`${gateway.origin}${probe.url}`, {
    method: probe.method,
    headers,
    body: probe.raw ?? probe.form ?? (probe.body === undefined ? undefined : JSON.stringify(probe.body)),
  });
  const text = await response.text();
  expect(response.status, `${probe.method} ${probe.url}: ${text.slice(0, 500)}`).toBe(expected);
  expectDocumented(probe, response.status, response.headers.get('content-type') ?? '', text);
  return { text, headers: response.headers };
}

const ROUTES = {
  healthz: { method: 'GET', url: '/healthz', path: '/healthz', key: null },
  readyz: { method: 'GET', url: '/readyz', path: '/readyz', key: null },
  chat: { method: 'POST', url: '/v1/chat/completions', path: '/v1/chat/completions', body: CHAT },
  embeddings: { method: 'POST', url: '/v1/embeddings', path: '/v1/embeddings', body: { model: 'sim-embed', input: ['hi', 'there'] } },
  messages: { method: 'POST', url: '/v1/messages', path: '/v1/messages', body: MESSAGE },
  countTokens: { method: 'POST', url: '/v1/messages/count_tokens', path: '/v1/messages/count_tokens', body: { model: 'sim', messages: MESSAGE.messages } },
  responses: { method: 'POST', url: '/v1/responses', path: '/v1/responses', body: { model: 'sim', input: 'hi' } },
  compact: { method: 'POST', url: '/v1/responses/compact', path: '/v1/responses/compact', body: { model: 'sim', input: 'hi' } },
  getResponse: { method: 'GET', url: '/v1/responses/resp_1', path: '/v1/responses/{id}' },
  deleteResponse: { method: 'DELETE', url: '/v1/responses/resp_1', path: '/v1/responses/{id}' },
  cancelResponse: { method: 'POST', url: '/v1/responses/resp_1/cancel', path: '/v1/responses/{id}/cancel' },
  inputItems: { method: 'GET', url: '/v1/responses/resp_1/input_items', path: '/v1/responses/{id}/input_items' },
  models: { method: 'GET', url: '/v1/models', path: '/v1/models' },
  model: { method: 'GET', url: '/v1/models/sim', path: '/v1/models/{id}' },
  prompt: { method: 'GET', url: '/v1/prompts/greet', path: '/v1/prompts/{name}' },
  usage: { method: 'GET', url: `/v1/usage?since=${today}`, path: '/v1/usage' },
  budgets: { method: 'GET', url: '/v1/budgets', path: '/v1/budgets' },
  audit: { method: 'GET', url: '/v1/audit', path: '/v1/audit' },
  createFile: { method: 'POST', url: '/v1/files', path: '/v1/files', form: uploadForm() },
  listFiles: { method: 'GET', url: '/v1/files', path: '/v1/files' },
  getFile: { method: 'GET', url: '/v1/files/file-1', path: '/v1/files/{id}' },
  fileContent: { method: 'GET', url: '/v1/files/file-1/content', path: '/v1/files/{id}/content' },
  deleteFile: { method: 'DELETE', url: '/v1/files/file-1', path: '/v1/files/{id}' },
  createBatch: {
    method: 'POST',
    url: '/v1/batches',
    path: '/v1/batches',
    body: { input_file_id: 'file-1', endpoint: '/v1/chat/completions', completion_window: '24h' },
  },
  listBatches: { method: 'GET', url: '/v1/batches', path: '/v1/batches' },
  getBatch: { method: 'GET', url: '/v1/batches/batch_1', path: '/v1/batches/{id}' },
  cancelBatch: { method: 'POST', url: '/v1/batches/batch_1/cancel', path: '/v1/batches/{id}/cancel' },
  createMessageBatch: {
    method: 'POST',
    url: '/v1/messages/batches',
    path: '/v1/messages/batches',
    body: { requests: [{ custom_id: 'req-1', params: MESSAGE }] },
  },
  listMessageBatches: { method: 'GET', url: '/v1/messages/batches', path: '/v1/messages/batches' },
  getMessageBatch: { method: 'GET', url: '/v1/messages/batches/msgbatch_1', path: '/v1/messages/batches/{id}' },
  cancelMessageBatch: { method: 'POST', url: '/v1/messages/batches/msgbatch_1/cancel', path: '/v1/messages/batches/{id}/cancel' },
  deleteMessageBatch: { method: 'DELETE', url: '/v1/messages/batches/msgbatch_1', path: '/v1/messages/batches/{id}' },
  messageBatchResults: { method: 'GET', url: '/v1/messages/batches/msgbatch_1/results', path: '/v1/messages/batches/{id}/results' },
} satisfies Record<string, Probe>;
type RouteName = keyof typeof ROUTES;

/** The routes of an object that was never made (`resp_1`, `file-1`, `batch_1`, `msgbatch_1`; `createBatch`: its input file): 404, as documented. */
const UNKNOWN: readonly RouteName[] = [
  'getResponse',
  'deleteResponse',
  'cancelResponse',
  'inputItems',
  'getFile',
  'fileContent',
  'deleteFile',
  'createBatch',
  'getBatch',
  'cancelBatch',
  'getMessageBatch',
  'cancelMessageBatch',
  'deleteMessageBatch',
  'messageBatchResults',
];

/** The probe of a route of an object that exists: its placeholder id in the url replaced by `id`. */
function of(probe: Probe, id: string): Probe {
  return { ...probe, url: probe.url.replace(/\/(resp_1|file-1|batch_1|msgbatch_1)(\/|$)/, `/${id}$2`) };
}

// A role each authenticated route refuses (docs/roles.md).
const REFUSED: Record<Exclude<RouteName, 'healthz' | 'readyz'>, Role> = {
  chat: 'auditor',
  embeddings: 'auditor',
  messages: 'auditor',
  countTokens: 'auditor',
  responses: 'auditor',
  compact: 'auditor',
  getResponse: 'auditor',
  deleteResponse: 'auditor',
  cancelResponse: 'auditor',
  inputItems: 'auditor',
  models: 'auditor',
  model: 'auditor',
  prompt: 'app',
  usage: 'app',
  budgets: 'app',
  audit: 'developer',
  createFile: 'auditor',
  listFiles: 'auditor',
  getFile: 'auditor',
  fileContent: 'auditor',
  deleteFile: 'auditor',
  createBatch: 'auditor',
  listBatches: 'auditor',
  getBatch: 'auditor',
  cancelBatch: 'auditor',
  createMessageBatch: 'auditor',
  listMessageBatches: 'auditor',
  getMessageBatch: 'auditor',
  cancelMessageBatch: 'auditor',
  deleteMessageBatch: 'auditor',
  messageBatchResults: 'auditor',
};

/** A tenant with its own admin key and, after `prepare`, its own plan or budget. */
async function tenantWith(id: string, prepare: (adminKey: string) => Promise<void>): Promise<string> {
  const admin = (await gateway.issueKey(id, 'admin')).secret;
  await prepare(admin);
  // The settings cache lives SETTINGS_CACHE_TTL_MS.
  await new Promise((resolve) => setTimeout(resolve, 200));
  return admin;
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  // FILE_MAX_BYTES bounds an upload and a message batch's body; BATCH_SUPERVISE_INTERVAL_MS: a batch ends soon after its lines.
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    env: { BODY_LIMIT_BYTES: String(BODY_LIMIT), FILE_MAX_BYTES: String(BODY_LIMIT), SETTINGS_CACHE_TTL_MS: '100', BATCH_SUPERVISE_INTERVAL_MS: '200' },
  });
  for (const role of ['admin', 'developer', 'app', 'auditor'] as const) keys[role] = (await gateway.issueKey('acme', role)).secret;
  operatorAdmin = (await gateway.issueKey('operator', 'admin')).secret;
  expect(
    (
      await call(gateway.origin, keys.admin, 'POST', '/internal/v1/prompts/greet/versions', {
        messages: [{ role: 'user', content: 'Hello {{name}}' }],
        model: 'sim',
      })
    ).status,
  ).toBe(201);
  expect((await call(gateway.origin, keys.admin, 'POST', '/internal/v1/prompts/greet/activate', { version: 1 })).status).toBe(200);
  expect((await call(gateway.origin, keys.admin, 'POST', '/internal/v1/budgets', { window: 'month', limit_micros: 1_000_000_000 })).status).toBe(201);
  const response = await fetch(`${gateway.origin}/openapi.json`);
  expect(response.status).toBe(200);
  doc = await response.json();
  ajv.addSchema(doc, 'openapi.json');
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('the document', () => {
  it('is valid OpenAPI 3.1', async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  });

  it("carries the package's version", async () => {
    const { default: pkg } = await import('../../package.json', { with: { type: 'json' } });
    expect(doc.info.version).toBe(pkg.version);
  });

  it('lists every public route, and no internal one, nor its own pages', () => {
    const operations = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual([...new Set(Object.values(ROUTES).map((route) => `${route.method} ${route.path}`))].sort());
    expect(JSON.stringify(doc)).not.toContain('/internal');
  });

  it("refers every error to one shared envelope: the spec's, or Anthropic's on /v1/messages", () => {
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const operation of Object.values(item as Record<string, Json>)) {
        for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
          if (Number(status) < 400) continue;
          const envelope = path.startsWith('/v1/messages') ? 'AnthropicErrorEnvelope' : 'ErrorEnvelope';
          expect(response.content['application/json'].schema, `${path} ${status}`).toEqual({ $ref: `#/components/schemas/${envelope}` });
        }
      }
    }
  });

  it('documents streams as server-sent events beside JSON, and the credentials of each route', () => {
    for (const path of ['/v1/chat/completions', '/v1/messages', '/v1/responses']) {
      expect(Object.keys(doc.paths[path].post.responses[200].content)).toEqual(['application/json', 'text/event-stream']);
    }
    expect(doc.paths['/v1/messages'].post.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(doc.paths['/v1/messages/batches'].post.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(doc.paths['/v1/files'].post.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/v1/batches'].post.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/v1/models'].get.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/healthz'].get.security).toEqual([]);
  });
});

describe('answers match the document', () => {
  it.each(Object.keys(ROUTES) as RouteName[])('%s: a valid request', async (name) => {
    const probe: Probe = ROUTES[name];
    // resp_1, file-1, batch_1 and msgbatch_1 were never made: their routes answer 404, as documented.
    await send(probe, UNKNOWN.includes(name) ? 404 : 200);
  });

  it("a kept response's routes: 200s as documented", async () => {
    const created = await send({ ...ROUTES.responses, body: { model: 'sim', input: 'hi', background: true } }, 200);
    const { id } = JSON.parse(created.text) as { id: string };
    for (const name of ['getResponse', 'inputItems', 'cancelResponse', 'deleteResponse'] as const) {
      const probe = ROUTES[name];
      await send(of(probe, id), 200);
    }
  });

  it("a file's and a batch's routes: 200s as documented, the content as bytes", async () => {
    const uploaded = await send(ROUTES.createFile, 200);
    const file = (JSON.parse(uploaded.text) as { id: string }).id;
    await send(of(ROUTES.getFile, file), 200);
    const content = await send(of(ROUTES.fileContent, file), 200);
    expect(content.text).toBe(`${BATCH_LINE}\n`);
    const created = await send({ ...ROUTES.createBatch, body: { ...ROUTES.createBatch.body, input_file_id: file } }, 200);
    const batch = (JSON.parse(created.text) as { id: string }).id;
    await send(of(ROUTES.getBatch, batch), 200);
    await send(of(ROUTES.cancelBatch, batch), 200);
    // Another upload to delete: the batch's input stays.
    const spare = (JSON.parse((await send(ROUTES.createFile, 200)).text) as { id: string }).id;
    await send(of(ROUTES.deleteFile, spare), 200);
  });

  it("an ended message batch's routes: 200s as documented, the results as JSON Lines", async () => {
    const created = await send(ROUTES.createMessageBatch, 200);
    const { id } = JSON.parse(created.text) as { id: string };
    await send(of(ROUTES.getMessageBatch, id), 200);
    // The test gateway's worker runs it.
    const batch = `/v1/messages/batches/${id}`;
    await eventually(async () => (await call(gateway.origin, keys.admin, 'GET', batch)).body.processing_status === 'ended', 20_000, `${id} to end`);
    const results = await send(of(ROUTES.messageBatchResults, id), 200);
    const lines = results.text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { custom_id: string; result: { type: string } });
    expect(lines).toEqual([{ custom_id: 'req-1', result: expect.objectContaining({ type: 'succeeded' }) }]);
    await send(of(ROUTES.cancelMessageBatch, id), 200);
    await send(of(ROUTES.deleteMessageBatch, id), 200);
  });

  it.each(['chat', 'messages', 'responses'] as const)('%s: streamed', async (name) => {
    const probe = ROUTES[name];
    const { text } = await send({ ...probe, body: { ...probe.body, stream: true } }, 200);
    if (name === 'chat') expect(text).toContain('data: [DONE]');
  });

  it('other successes: a tier, grouped usage, a page of audit events', async () => {
    await send({ ...ROUTES.model, url: '/v1/models/svc-flash' }, 200);
    await send({ ...ROUTES.usage, url: `/v1/usage?since=${today}&group_by=model` }, 200);
    const page = await send({ ...ROUTES.audit, url: '/v1/audit?limit=1' }, 200);
    expect(JSON.parse(page.text).data).toHaveLength(1);
  });

  it.each(Object.keys(REFUSED) as Array<keyof typeof REFUSED>)('%s: 401 without a key, 403 for a role it refuses', async (name) => {
    await send({ ...ROUTES[name], key: null }, 401);
    await send({ ...ROUTES[name], key: keys[REFUSED[name]] }, 403);
  });

  it('400: invalid bodies and parameters', async () => {
    await send({ ...ROUTES.chat, body: { model: 42, messages: CHAT.messages } }, 400);
    await send({ ...ROUTES.chat, raw: '{"model":' }, 400);
    await send({ ...ROUTES.embeddings, body: { model: 'sim-embed', input: '' } }, 400);
    await send({ ...ROUTES.embeddings, body: { model: 'sim', input: 'hi' } }, 400);
    await send({ ...ROUTES.messages, body: { model: 'sim', messages: MESSAGE.messages } }, 400);
    await send({ ...ROUTES.countTokens, body: { model: 'sim' } }, 400);
    await send({ ...ROUTES.responses, body: { model: 'sim', input: 'hi', previous_response_id: 'resp_1' } }, 400);
    await send({ ...ROUTES.compact, body: { model: 'sim', input: [{ type: 'compaction', encrypted_content: 'gAAAA-sealed' }] } }, 400);
    await send({ ...ROUTES.chat, headers: { 'idempotency-key': 'k'.repeat(256) } }, 400);
    await send({ ...ROUTES.usage, url: '/v1/usage' }, 400);
    await send({ ...ROUTES.audit, url: '/v1/audit?limit=0' }, 400);
    await send({ ...ROUTES.prompt, url: '/v1/prompts/Not%20A%20Name' }, 400);
    await send({ ...ROUTES.models, url: '/v1/models?x=%00' }, 400);
    await send({ ...ROUTES.budgets, url: '/v1/budgets?x=%00' }, 400);
    await send({ ...ROUTES.healthz, url: '/healthz?x=%00' }, 400);
    await send({ ...ROUTES.readyz, url: '/readyz?x=%00' }, 400);
    await send({ ...ROUTES.getResponse, url: '/v1/responses/%00' }, 400);
    await send({ ...ROUTES.createFile, form: uploadForm(null) }, 400);
    await send({ ...ROUTES.createFile, form: uploadForm('batch_output') }, 400);
    await send({ ...ROUTES.listFiles, url: '/v1/files?purpose=nope' }, 400);
    await send({ ...ROUTES.getFile, url: '/v1/files/%00' }, 400);
    await send({ ...ROUTES.createBatch, body: { endpoint: '/v1/chat/completions', completion_window: '24h' } }, 400);
    await send({ ...ROUTES.createBatch, body: { ...ROUTES.createBatch.body, completion_window: '1h' } }, 400);
    await send({ ...ROUTES.listBatches, url: '/v1/batches?limit=0' }, 400);
    await send({ ...ROUTES.createMessageBatch, body: { requests: [] } }, 400);
    await send({ ...ROUTES.createMessageBatch, body: { requests: [{ custom_id: 'req-1', params: { model: 'sim' } }] } }, 400);
    await send({ ...ROUTES.listMessageBatches, url: '/v1/messages/batches?before_id=msgbatch_1&after_id=msgbatch_2' }, 400);
  });

  it('404: unknown models and prompts', async () => {
    await send({ ...ROUTES.chat, body: { ...CHAT, model: 'no-such-model' } }, 404);
    await send({ ...ROUTES.chat, body: { prompt: 'no-such-prompt' } }, 404);
    await send({ ...ROUTES.embeddings, body: { model: 'no-such-model', input: 'hi' } }, 404);
    await send({ ...ROUTES.messages, body: { ...MESSAGE, model: 'no-such-model' } }, 404);
    await send({ ...ROUTES.countTokens, body: { model: 'no-such-model', messages: MESSAGE.messages } }, 404);
    await send({ ...ROUTES.responses, body: { model: 'no-such-model', input: 'hi' } }, 404);
    await send({ ...ROUTES.compact, body: { model: 'no-such-model', input: 'hi' } }, 404);
    await send({ ...ROUTES.model, url: '/v1/models/no-such-model' }, 404);
    await send({ ...ROUTES.prompt, url: '/v1/prompts/no-such-prompt' }, 404);
  });

  it("413 and 415: a body too large, or not of the route's media type", async () => {
    const large = JSON.stringify({ ...CHAT, messages: [{ role: 'user', content: 'x'.repeat(BODY_LIMIT) }] });
    for (const route of [ROUTES.chat, ROUTES.embeddings, ROUTES.messages, ROUTES.countTokens, ROUTES.responses]) {
      await send({ ...route, raw: large }, 413);
      await send({ ...route, raw: 'model=sim', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415);
    }
    // Past FILE_MAX_BYTES (set to BODY_LIMIT_BYTES here): an upload, and a message batch's requests.
    await send({ ...ROUTES.createFile, form: uploadForm('user_data', 'x'.repeat(BODY_LIMIT + 1)) }, 413);
    const requests = [{ custom_id: 'req-1', params: { ...MESSAGE, messages: [{ role: 'user', content: 'x'.repeat(BODY_LIMIT) }] } }];
    await send({ ...ROUTES.createMessageBatch, body: { requests } }, 413);
    // An upload is a form; a message batch, JSON.
    await send({ ...ROUTES.createFile, form: undefined, body: { purpose: 'batch' } }, 415);
    await send({ ...ROUTES.createMessageBatch, raw: 'requests=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415);
  });

  it('422: a parameter the model does not take', async () => {
    await send({ ...ROUTES.chat, body: { ...CHAT, model: 'fake-reasoning', temperature: 0.5 } }, 422);
    await send({ ...ROUTES.messages, body: { ...MESSAGE, model: 'fake-reasoning', temperature: 0.5 } }, 422);
    await send({ ...ROUTES.responses, body: { model: 'fake-reasoning', input: 'hi', temperature: 0.5 } }, 422);
    await send({ ...ROUTES.compact, body: { model: 'fake-tiny', input: 'hi' } }, 422);
    await send({ ...ROUTES.embeddings, body: { model: 'sim-embed', input: 'word '.repeat(9000) } }, 422);
  });

  it('402: a budget exhausted', async () => {
    const admin = await tenantWith('broke', async (key) => {
      expect((await call(gateway.origin, key, 'POST', '/internal/v1/budgets', { window: 'month', limit_micros: 1 })).status).toBe(201);
    });
    const expensive = { model: 'fake-gpt', max_tokens: 1000 };
    await send({ ...ROUTES.chat, key: admin, body: { ...CHAT, ...expensive } }, 402);
    await send({ ...ROUTES.messages, key: admin, body: { ...MESSAGE, ...expensive } }, 402);
    await send({ ...ROUTES.responses, key: admin, body: { model: 'fake-gpt', input: 'hi', max_output_tokens: 1000 } }, 402);
    await send({ ...ROUTES.embeddings, key: admin, body: { model: 'sim-embed', input: 'word '.repeat(4000) } }, 402);
  });

  it('429: a rate limit, with Retry-After', async () => {
    const admin = await tenantWith('limited', async () => {
      expect((await call(gateway.origin, operatorAdmin, 'PUT', '/internal/v1/tenants/limited/plan', { requests_per_minute: 1 })).status).toBe(200);
    });
    await send({ ...ROUTES.chat, key: admin }, 200);
    for (const route of [ROUTES.chat, ROUTES.embeddings, ROUTES.messages, ROUTES.responses]) {
      const { headers } = await send({ ...route, key: admin }, 429);
      expect(headers.get('retry-after')).toMatch(/^\d+$/);
      expect(doc.paths[route.path].post.responses[429].headers['Retry-After'].schema).toEqual({ type: 'integer', minimum: 0 });
    }
  });

  it('502: the provider refuses our key', async () => {
    upstream.script([{ kind: 'status', status: 401 }]);
    await send({ ...ROUTES.chat, body: { ...CHAT, model: 'fake-gpt' } }, 502);
  });

  it('every route of the document was called', () => {
    expect([...seen.keys()].sort()).toEqual(
      Object.entries(doc.paths as Record<string, Json>)
        .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
        .sort(),
    );
  });
});

describe('the reference page', () => {
  it('/docs is an HTML page, and needs no key', async () => {
    const response = await fetch(`${gateway.origin}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(await response.text()).toContain('swagger-ui');
  });
});
