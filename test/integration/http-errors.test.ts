/** Every non-2xx answer is the spec's envelope: the web tier through `inject`, with real Redis and PostgreSQL. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Redis } from 'ioredis';
import { connect } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config.ts';
import { startWebTier, type WebTier } from '../../src/web/web-tier.ts';
import { generateApiKey } from '../../src/domain/access/api-key-secret.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { deletePrefix, spawnEntry, TEST_REDIS_URL } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

let database: TestDatabase;
let web: WebTier;
let dir: string;
let secret: string;
let keyId: string;
const prefix = `t${Date.now().toString(36)}`;
const KEY_TTL_MS = 300;

beforeAll(async () => {
  database = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'gw-errors-'));
  await writeFile(join(dir, 'catalog.json'), JSON.stringify(testCatalog('http://127.0.0.1:9/v1')));
  const config = loadConfig({
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    DATABASE_URL: database.url,
    CATALOG: join(dir, 'catalog.json'),
    BODY_LIMIT_BYTES: '2048',
    KEY_CACHE_TTL_MS: String(KEY_TTL_MS),
  });
  web = await startWebTier(config, pino({ level: 'silent' }));
  await web.repository.migrate();
  await web.repository.tenants.create({ id: 'acme', name: 'Acme' });
  const key = generateApiKey();
  await web.repository.apiKeys.create({ id: key.id, tenantId: 'acme', role: 'developer', secretHash: key.secretHash });
  secret = key.secret;
  keyId = key.id;
});

afterAll(async () => {
  await web?.close();
  const redis = new Redis(TEST_REDIS_URL);
  await deletePrefix(redis, prefix);
  redis.disconnect();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

function post(payload: string, headers: Record<string, string> = {}) {
  return web.app.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
    payload,
  });
}

function expectEnvelope(response: Awaited<ReturnType<typeof post>>, status: number, code: string, param: string | null = null) {
  expect(response.statusCode).toBe(status);
  const body = response.json();
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toMatchObject({ code, param });
  expect(['invalid_request_error', 'authentication_error', 'rate_limit_error', 'api_error']).toContain(body.error.type);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.request_id).toMatch(/^req_/);
  expect(response.headers['x-request-id']).toBe(body.error.request_id);
  return body.error as { message: string; type: string };
}

describe('request validation', () => {
  it('malformed JSON → 400 invalid_json', async () => {
    expectEnvelope(await post('{"model": "fake-gpt",'), 400, 'invalid_json');
  });

  it('an empty body → 400 invalid_json', async () => {
    expectEnvelope(await post(''), 400, 'invalid_json');
  });

  it('a body that is not an object → 400 invalid_value', async () => {
    expectEnvelope(await post('[1,2]'), 400, 'invalid_value');
  });

  it('missing model → 400 missing_required_field with param', async () => {
    const error = expectEnvelope(await post('{"messages":[{"role":"user","content":"hi"}]}'), 400, 'missing_required_field', 'model');
    expect(error.message).toContain("'model'");
  });

  it('missing messages → 400 missing_required_field with param', async () => {
    expectEnvelope(await post('{"model":"fake-gpt"}'), 400, 'missing_required_field', 'messages');
  });

  it('a bad nested value names its path', async () => {
    expectEnvelope(await post('{"model":"fake-gpt","messages":[{"role":"robot","content":"hi"}]}'), 400, 'invalid_value', 'messages[0].role');
    expectEnvelope(await post('{"model":"fake-gpt","messages":[{"role":"user"}]}'), 400, 'missing_required_field', 'messages[0].content');
  });

  it('a wrongly typed parameter is not coerced', async () => {
    expectEnvelope(await post('{"model":"fake-gpt","max_tokens":"12","messages":[{"role":"user","content":"hi"}]}'), 400, 'invalid_value', 'max_tokens');
    expectEnvelope(await post('{"model":42,"messages":[{"role":"user","content":"hi"}]}'), 400, 'invalid_value', 'model');
  });

  it('an oversized body → 413 request_too_large', async () => {
    expectEnvelope(await post(JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: 'x'.repeat(4096) }] })), 413, 'request_too_large');
  });

  it('a body that is not JSON → 415', async () => {
    expectEnvelope(await post('model=fake-gpt', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type', 'Content-Type');
  });
});

describe('routes', () => {
  it('an unknown route → 404 not_found', async () => {
    expectEnvelope(await web.app.inject({ method: 'GET', url: '/v1/nothing-here' }), 404, 'not_found');
  });

  it('a wrong method → 405 with Allow', async () => {
    const response = await web.app.inject({ method: 'GET', url: '/v1/chat/completions', headers: { authorization: `Bearer ${secret}` } });
    expectEnvelope(response, 405, 'method_not_allowed');
    expect(response.headers.allow).toBe('POST');
  });

  it('health and readiness answer', async () => {
    expect((await web.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await web.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });
});

/** Sends raw bytes to the listening app and reads the answer until the server closes or ends it. */
async function raw(request: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { port } = web.app.server.address() as AddressInfo;
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (data: string) => (received += data));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: headers['transfer-encoding'] === 'chunked' ? (body.split('\r\n')[1] ?? '') : body };
}

function expectRawEnvelope(response: Awaited<ReturnType<typeof raw>>, status: number, code: string): void {
  expect(response.status).toBe(status);
  const body = JSON.parse(response.body) as { error: { code: string; request_id: string; type: string } };
  expect(body.error).toMatchObject({ code, type: 'invalid_request_error', param: null });
  expect(body.error.request_id).toMatch(/^req_/);
  expect(response.headers['x-request-id']).toBe(body.error.request_id);
}

describe('requests that fail before any route, over a real connection', () => {
  beforeAll(async () => {
    await web.app.listen({ port: 0, host: '127.0.0.1' });
  });

  it('a path that is not valid percent-encoding → 400 malformed_request', async () => {
    expectRawEnvelope(
      await raw(`GET /v1/prompts/%E0%A4%A HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nConnection: close\r\n\r\n`),
      400,
      'malformed_request',
    );
  });

  it("a message batch's path that is not valid percent-encoding → 400 in Anthropic's envelope", async () => {
    const answer = await raw(`GET /v1/messages/batches/%zz HTTP/1.1\r\nHost: x\r\nx-api-key: ${secret}\r\nConnection: close\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'malformed_request' } });
  });

  it('a path segment over the router limit → 414 uri_too_long', async () => {
    expectRawEnvelope(
      await raw(`GET /v1/prompts/${'a'.repeat(300)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nConnection: close\r\n\r\n`),
      414,
      'uri_too_long',
    );
  });

  it('a bare CR in a header → 400 malformed_request', async () => {
    expectRawEnvelope(await raw('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Odd: a\rb\r\n\r\n'), 400, 'malformed_request');
  });

  // A client sends its whole body before it reads the answer (fetch, curl and the SDKs do): a server
  // that answers 413 and closes while the body still comes makes the client's writes fail and
  // the reset discards the answer unread. The refused body is read and thrown away, then answered.
  const OVERSIZED_BYTES = 10 * 1024 * 1024;
  const CHUNK = Buffer.alloc(64 * 1024, 'x');

  /** Writes the request head, then the body chunk by chunk as a client does; returns the first write error and the answer. */
  async function sendOversized(chunked: boolean): Promise<{ writeError: string | null; answer: string }> {
    const { port } = web.app.server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let answer = '';
    socket.setEncoding('utf8').on('data', (data: string) => (answer += data));
    // A write that fails is reported by its callback; the socket's error event needs a listener too.
    socket.on('error', () => undefined);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    const write = (data: string | Buffer) => new Promise<string | null>((resolve) => socket.write(data, (error) => resolve(error ? String(error) : null)));
    const length = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${OVERSIZED_BYTES}`;
    let writeError = await write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\n${length}\r\n\r\n`,
    );
    for (let sent = 0; sent < OVERSIZED_BYTES && writeError === null; sent += CHUNK.length) {
      writeError = await write(chunked ? Buffer.concat([Buffer.from(`${CHUNK.length.toString(16)}\r\n`), CHUNK, Buffer.from('\r\n')]) : CHUNK);
    }
    if (chunked && writeError === null) writeError = await write('0\r\n\r\n');
    await closed;
    return { writeError, answer };
  }

  for (const chunked of [true, false]) {
    it(`a 10 MB body ${chunked ? 'sent chunked (no Content-Length)' : 'with its Content-Length'} is read to its end, then answered 413 request_too_large and closed`, async () => {
      const { writeError, answer } = await sendOversized(chunked);
      expect(writeError).toBeNull();
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 413 /);
      expect(head.toLowerCase()).toContain('connection: close');
      expect(JSON.parse(body).error).toMatchObject({ code: 'request_too_large', type: 'invalid_request_error', param: null });
    });
  }

  it('headers over the size limit (an Authorization header of 20 KB) → 431 headers_too_large', async () => {
    expectRawEnvelope(
      await raw(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'k'.repeat(20_000)}\r\nContent-Length: 2\r\n\r\n{}`),
      431,
      'headers_too_large',
    );
  });
});

describe('authentication', () => {
  it('no key → 401 missing_api_key', async () => {
    const response = await web.app.inject({ method: 'POST', url: '/v1/chat/completions', payload: {} });
    expectEnvelope(response, 401, 'missing_api_key');
    expect(response.json().error.type).toBe('authentication_error');
  });

  it('a malformed Authorization header → 401 invalid_api_key', async () => {
    expectEnvelope(await post('{}', { authorization: 'Basic abc' }), 401, 'invalid_api_key');
  });

  it('authenticates before parsing the body', async () => {
    expectEnvelope(await post('{not json', { authorization: 'Bearer gwk_unknown' }), 401, 'invalid_api_key');
  });

  it('a revoked key stops working within the cache TTL', async () => {
    const valid = await post('{"model":"auto","messages":[{"role":"user","content":"hi"}]}');
    expect(valid.statusCode).toBe(400);
    await web.repository.apiKeys.revoke(keyId);
    await new Promise((resolve) => setTimeout(resolve, KEY_TTL_MS + 50));
    expectEnvelope(await post('{"model":"auto","messages":[{"role":"user","content":"hi"}]}'), 401, 'invalid_api_key');
  });
});

describe('configuration', () => {
  it.each([
    [{ PORT: 'abc' }, /^web: Invalid environment variable PORT: .*"abc"/],
    [{ REDIS_URL: '' }, /^web: Invalid environment variable REDIS_URL: .*not set/],
    [{ DATABASE_URL: '' }, /^web: Invalid environment variable DATABASE_URL/],
    [{ WORKER_CONCURRENCY: '0' }, /^web: Invalid environment variable WORKER_CONCURRENCY/],
  ])('a bad or missing variable stops the process with one line naming it (%o)', async (override, expected) => {
    const env = { REDIS_URL: TEST_REDIS_URL, DATABASE_URL: database.url, CATALOG: join(dir, 'catalog.json'), ...override };
    const proc = spawnEntry('src/server.ts', Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
    expect(await proc.exited).toBe(1);
    expect(proc.output().trim().split('\n')).toHaveLength(1);
    expect(proc.output()).toMatch(expected);
  });

  it('a worker with a broken catalog stops with the file and field named', async () => {
    await writeFile(join(dir, 'bad.json'), JSON.stringify({ models: {}, tiers: { 'svc-flash': ['nope'], 'svc-standard': [], 'svc-pro': [] } }));
    const proc = spawnEntry('workers/main.ts', { REDIS_URL: TEST_REDIS_URL, DATABASE_URL: database.url, CATALOG: join(dir, 'bad.json') });
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toMatch(/Catalog .*bad\.json: \/tiers\/svc-/);
  });
});
