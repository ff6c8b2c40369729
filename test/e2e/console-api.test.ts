/**
 * What the web console needs from the server, against real web and worker processes: who the caller
 * is and what it may do (/internal/v1/me, for API keys and a JWT), the prompt list, the catalog with
 * its circuit breakers, the queue shards and workers, another tenant's budgets and plan for the
 * operator, and /console itself: 503 until it is built, then its files with their headers, the
 * single-page fallback, and no way out of its folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startJwksServer, type JwksServer } from '../helpers/jwks-server.ts';
import { scriptedTestRedis } from '../helpers/scripted-test-redis.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually, type JsonResponse } from '../helpers/http.ts';
import { reportBreaker } from '../../src/infra/redis/breaker-states.ts';
import type { WrittenCatalog } from '../../src/domain/catalog/schema.ts';
import type { Role } from '../../src/infra/store/repository.ts';

const ROLES = ['admin', 'developer', 'app', 'auditor'] as const satisfies readonly Role[];
/** The provider key's variable of the pooled alias: neither it nor its value may reach an answer. */
const KEY_VARIABLE = 'CONSOLE_TEST_PROVIDER_KEY';
const KEY_VALUE = 'sk-console-secret-value';
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'";

let upstream: FakeUpstream;
let idp: JwksServer;
let gateway: GatewayUnderTest;
let consoleDir: string;
// Long enough to be worth compressing, as a real bundle is.
const SCRIPT = 'export function greet(name){return `hello ${name}`}\n'.repeat(50);
const acme = {} as Record<Role, string>;
let operatorAdmin: string;
const { redis: scripted } = scriptedTestRedis('console');

function catalog(url: string): WrittenCatalog {
  const base = testCatalog(url);
  const deployment = (id: string) => ({ id, provider: 'openai-compatible' as const, upstream_model: `${id}-model`, base_url: url, api_key_env: KEY_VARIABLE });
  return {
    ...base,
    models: {
      ...base.models,
      pooled: {
        context_window: 4096,
        max_output_tokens: 256,
        input_price_per_mtok: 1,
        output_price_per_mtok: 2,
        routing: 'least-busy',
        deployments: [
          { ...deployment('pool-a'), weight: 2, rpm: 60 },
          { ...deployment('pool-b'), tpm: 1000 },
        ],
      },
    },
  };
}

/** GET over a raw socket, the path sent as written (fetch would resolve `..` first). */
function rawGet(path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { hostname, port } = new URL(gateway.origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A GET with the headers given and the body's bytes as they came: node:http decodes no content encoding. */
function getBytes(path: string, headers: Record<string, string>): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const { hostname, port } = new URL(gateway.origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

function expectEnvelope(response: JsonResponse, status: number, code: string): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error).toMatchObject({ code, request_id: response.headers.get('x-request-id') });
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  idp = await startJwksServer();
  consoleDir = await mkdtemp(join(tmpdir(), 'gw-console-'));
  gateway = await startGateway({
    catalog: catalog(upstream.url),
    env: {
      CONSOLE_DIR: consoleDir,
      QUEUE_SHARDS: '2',
      JWT_ISSUERS: idp.issuer,
      JWKS_REFETCH_INTERVAL_MS: '0',
      SETTINGS_CACHE_TTL_MS: '100',
      [KEY_VARIABLE]: KEY_VALUE,
    },
  });
  await gateway.repository.tenants.create({ id: 'acme', name: 'Acme Corp' });
  for (const role of ROLES) acme[role] = (await gateway.issueKey('acme', role)).secret;
  operatorAdmin = (await gateway.issueKey('operator', 'admin')).secret;
});

afterAll(async () => {
  await gateway?.close();
  await idp?.close();
  await upstream?.close();
  if (consoleDir) await rm(consoleDir, { recursive: true, force: true });
});

describe('GET /internal/v1/me', () => {
  const ROUTE_AND_MODEL = ['batches.read', 'batches.write', 'chat.create', 'embeddings.create', 'files.read', 'files.write', 'messages.create'];
  const EXPECTED: Record<Role, string[]> = {
    admin: [
      ...['audit.read', 'audit.verify', ...ROUTE_AND_MODEL, 'budgets.read', 'budgets.write', 'keys.read', 'keys.write'],
      ...['models.read', 'policies.write', 'prompts.read', 'prompts.write', 'responses.create', 'session.read', 'usage.read', 'webhooks.manage'],
    ].sort(),
    developer: [...ROUTE_AND_MODEL, 'budgets.read', 'models.read', 'prompts.read', 'responses.create', 'session.read', 'usage.read'].sort(),
    app: [...ROUTE_AND_MODEL, 'models.read', 'responses.create', 'session.read'].sort(),
    auditor: ['audit.read', 'audit.verify', 'budgets.read', 'session.read', 'usage.read'],
  };

  it.each(ROLES)("acme's %s key: its tenant, role, key and sorted permissions, no operator one", async (role) => {
    const keyId = (await gateway.repository.apiKeys.listByTenant('acme')).find((key) => key.role === role)?.id;
    const me = await call(gateway.origin, acme[role], 'GET', '/internal/v1/me');
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body).toEqual({
      object: 'principal',
      tenant: { id: 'acme', name: 'Acme Corp', operator: false },
      role,
      key_id: keyId,
      subject: null,
      auth: 'api_key',
      permissions: EXPECTED[role],
    });
  });

  it("the operator tenant's admin holds the operator permissions besides an admin's", async () => {
    const me = await call(gateway.origin, operatorAdmin, 'GET', '/internal/v1/me');
    expect(me.status).toBe(200);
    expect(me.body.tenant).toEqual({ id: 'operator', name: 'operator', operator: true });
    const operatorOnly = ['catalog.read', 'queues.read', 'tenants.operate', 'tenants.read', 'tenants.write'];
    expect(me.body.permissions).toEqual([...EXPECTED.admin, ...operatorOnly].sort());
    const operatorDeveloper = await call(gateway.origin, (await gateway.issueKey('operator', 'developer')).secret, 'GET', '/internal/v1/me');
    expect(operatorDeveloper.body.permissions).toEqual(EXPECTED.developer);
  });

  it('a JWT principal: auth jwt, no key id, its subject; a tenant the store does not know has no name', async () => {
    const token = await idp.sign(idp.claims({ tenant: 'jwt-co', role: 'auditor', sub: 'user-7' }));
    const me = await call(gateway.origin, token, 'GET', '/internal/v1/me');
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body).toEqual({
      object: 'principal',
      tenant: { id: 'jwt-co', name: null, operator: false },
      role: 'auditor',
      key_id: null,
      subject: 'user-7',
      auth: 'jwt',
      permissions: EXPECTED.auditor,
    });
    const operatorToken = await idp.sign(idp.claims({ tenant: 'operator', role: 'admin', sub: 'ops' }));
    expect((await call(gateway.origin, operatorToken, 'GET', '/internal/v1/me')).body.permissions).toContain('catalog.read');
  });

  it('needs a credential', async () => {
    const response = await fetch(`${gateway.origin}/internal/v1/me`);
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('missing_api_key');
  });
});

describe('GET /internal/v1/prompts', () => {
  it("lists the tenant's prompts by name to whoever reads prompts, who may read their versions too", async () => {
    const version = (content: string) => ({ messages: [{ role: 'user', content }], model: 'sim' });
    for (const [name, content] of [
      ['welcome', 'Hi {{name}}'],
      ['answer', 'Answer {{question}}'],
      ['welcome', 'Hello {{name}}'],
    ] as const) {
      expect((await call(gateway.origin, acme.admin, 'POST', `/internal/v1/prompts/${name}/versions`, version(content))).status).toBe(201);
    }
    const list = await call(gateway.origin, acme.developer, 'GET', '/internal/v1/prompts');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      object: 'list',
      data: [
        { object: 'prompt', name: 'answer', active_version: 1, latest_version: 1, updated_at: expect.any(String) },
        { object: 'prompt', name: 'welcome', active_version: 1, latest_version: 2, updated_at: expect.any(String) },
      ],
    });
    const versions = await call(gateway.origin, acme.developer, 'GET', '/internal/v1/prompts/welcome/versions');
    expect(versions.status).toBe(200);
    expect(versions.body.data.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(versions.body.data[0].created_at).toBe(list.body.data[1].updated_at);
    expectEnvelope(await call(gateway.origin, acme.developer, 'POST', '/internal/v1/prompts/welcome/activate', { version: 2 }), 403, 'permission_denied');
    for (const role of ['app', 'auditor'] as const) {
      expectEnvelope(await call(gateway.origin, acme[role], 'GET', '/internal/v1/prompts'), 403, 'permission_denied');
      expectEnvelope(await call(gateway.origin, acme[role], 'GET', '/internal/v1/prompts/welcome/versions'), 403, 'permission_denied');
    }
    expect((await call(gateway.origin, operatorAdmin, 'GET', '/internal/v1/prompts')).body).toEqual({ object: 'list', data: [] });
  });
});

describe('GET /internal/v1/catalog', () => {
  it('lists every alias with its deployments and their breakers, an open one with when it reopens; no key nor its variable', async () => {
    const opened = await reportBreaker(
      scripted,
      gateway.keys.breaker('pool-b'),
      { failureRate: 0.5, minCalls: 1, windowMs: 60_000, cooldownMs: 60_000, maxCooldownMs: 600_000 },
      { calls: 1, failures: 1, probe: null, pauseUntilMs: 0 },
      Date.now(),
    );
    expect(opened.state).toBe('open');
    const response = await call(gateway.origin, operatorAdmin, 'GET', '/internal/v1/catalog');
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const text = JSON.stringify(response.body);
    for (const secret of [KEY_VARIABLE, KEY_VALUE, 'api_key', upstream.url]) expect(text).not.toContain(secret);
    const byAlias = new Map<string, any>(response.body.data.map((entry: { alias: string }) => [entry.alias, entry]));
    expect([...byAlias.keys()]).toEqual(Object.keys(catalog(upstream.url).models));
    expect(byAlias.get('pooled')).toEqual({
      alias: 'pooled',
      kind: 'chat',
      provider: 'openai-compatible',
      upstream_model: 'pool-a-model',
      context_window: 4096,
      routing: 'least-busy',
      deployments: [
        {
          id: 'pool-a',
          provider: 'openai-compatible',
          upstream_model: 'pool-a-model',
          weight: 2,
          rpm: 60,
          tpm: null,
          circuit: 'closed',
          reopens_at: null,
          paused_until: null,
        },
        {
          id: 'pool-b',
          provider: 'openai-compatible',
          upstream_model: 'pool-b-model',
          weight: 1,
          rpm: null,
          tpm: 1000,
          circuit: 'open',
          reopens_at: new Date(opened.openUntilMs).toISOString(),
          paused_until: null,
        },
      ],
    });
    expect(byAlias.get('sim-embed')).toMatchObject({
      kind: 'embeddings',
      provider: 'simulator',
      routing: 'weighted',
      deployments: [{ id: 'sim-embed', weight: 1, circuit: 'closed' }],
    });
  });

  it("lists the tiers in the catalog's order, each with its candidate aliases in the order they are tried", async () => {
    const response = await call(gateway.origin, operatorAdmin, 'GET', '/internal/v1/catalog');
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.tiers).toEqual([
      { name: 'svc-flash', candidates: ['fake-gpt'] },
      { name: 'svc-standard', candidates: ['fake-gpt', 'fake-backup'] },
      { name: 'svc-pro', candidates: ['fake-reasoning', 'fake-gpt'] },
    ]);
    const aliases = new Set(response.body.data.map((entry: { alias: string }) => entry.alias));
    for (const tier of response.body.tiers) for (const candidate of tier.candidates) expect(aliases).toContain(candidate);
  });
});

describe('GET /internal/v1/queues', () => {
  it('counts each shard and lists the workers connected to it, with the heartbeat and the board', async () => {
    let queues: JsonResponse | undefined;
    await eventually(
      async () => {
        queues = await call(gateway.origin, operatorAdmin, 'GET', '/internal/v1/queues');
        return queues.status === 200 && queues.body.workers.length === 2;
      },
      10_000,
      'the worker on both shards',
    );
    const body = (queues as JsonResponse).body;
    expect(body).toEqual({
      object: 'queues',
      shards: [0, 1].map((shard) => ({ shard, waiting: 0, prioritized: 0, active: 0, delayed: 0, failed: 0, workers: 1 })),
      workers: [0, 1].map((shard) => ({ id: expect.stringMatching(/^\d+$/), shard, addr: expect.stringMatching(/:\d+$/), last_seen: expect.any(String) })),
      last_heartbeat: expect.any(String),
      board: '/internal/queues',
    });
    for (const seen of [body.last_heartbeat, ...body.workers.map((worker: { last_seen: string }) => worker.last_seen)]) {
      expect(Math.abs(Date.now() - Date.parse(seen))).toBeLessThan(30_000);
    }
  });
});

describe("another tenant's budgets and plan", () => {
  it('the operator reads them; an unknown tenant is 404', async () => {
    const before = await call(gateway.origin, operatorAdmin, 'GET', '/internal/v1/tenants/acme/budgets');
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ object: 'list', data: [], credit: null });
    expect((await call(gateway.origin, operatorAdmin, 'POST', '/internal/v1/tenants/acme/credits', { amount_micros: 5_000_000 })).status).toBe(201);
    expect((await call(gateway.origin, acme.admin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 9_000_000 })).status).toBe(201);
    await eventually(
      async () => (await call(gateway.origin, operatorAdmin, 'GET', '/internal/v1/tenants/acme/budgets')).body.credit !== null,
      5_000,
      'the credit account',
    );
    const after = await call(gateway.origin, operatorAdmin, 'GET', '/internal/v1/tenants/acme/budgets');
    expect(after.body).toEqual((await call(gateway.origin, acme.admin, 'GET', '/v1/budgets')).body);
    expect(after.body.credit).toEqual({ balance_micros: 5_000_000, reserved_micros: 0 });
    expect(after.body.data).toHaveLength(1);

    const none = {
      requests_per_minute: null,
      tokens_per_minute: null,
      key_requests_per_minute: null,
      key_tokens_per_minute: null,
      max_queued: null,
      cache_hit_price_micros: null,
    };
    expect((await call(gateway.origin, operatorAdmin, 'GET', '/internal/v1/tenants/acme/plan')).body).toEqual({ object: 'plan', tenant: 'acme', ...none });
    expect((await call(gateway.origin, operatorAdmin, 'PUT', '/internal/v1/tenants/acme/plan', { requests_per_minute: 600 })).status).toBe(200);
    expect((await call(gateway.origin, operatorAdmin, 'GET', '/internal/v1/tenants/acme/plan')).body).toEqual({
      object: 'plan',
      tenant: 'acme',
      ...none,
      requests_per_minute: 600,
    });
    for (const path of ['/internal/v1/tenants/nobody/budgets', '/internal/v1/tenants/nobody/plan'])
      expectEnvelope(await call(gateway.origin, operatorAdmin, 'GET', path), 404, 'not_found');
  });
});

describe('operator routes', () => {
  it.each(['/internal/v1/catalog', '/internal/v1/queues', '/internal/v1/tenants/acme/budgets', '/internal/v1/tenants/acme/plan'])(
    '%s: 403 to every role of another tenant',
    async (path) => {
      for (const role of ROLES) {
        const response = await call(gateway.origin, acme[role], 'GET', path);
        expectEnvelope(response, 403, 'permission_denied');
      }
      const auditor = await call(gateway.origin, (await gateway.issueKey('operator', 'auditor')).secret, 'GET', path);
      expectEnvelope(auditor, 403, 'permission_denied');
    },
  );
});

describe('/console', () => {
  it('is 503 with the envelope while not built, without a credential', async () => {
    for (const path of ['/console', '/console/', '/console/usage']) {
      const response = await fetch(`${gateway.origin}${path}`);
      const body = (await response.json()) as { error: Record<string, unknown> };
      expect(response.status).toBe(503);
      expect(body.error).toMatchObject({
        type: 'api_error',
        code: 'service_unavailable',
        message: 'The console is not built: run `npm run build:console`.',
        request_id: response.headers.get('x-request-id'),
      });
      expect(response.headers.get('retry-after')).toBeNull();
    }
  });

  it('serves the build once there, with its content types, headers, caching and the single-page fallback', async () => {
    const page = '<!doctype html><title>Console</title><script type="module" src="/console/assets/app-1a2b3c.js"></script>';
    await mkdir(join(consoleDir, 'assets'));
    // A build being written: index.html before the script it names is no build yet (it would be kept as it is).
    await writeFile(join(consoleDir, 'index.html'), page);
    expect((await fetch(`${gateway.origin}/console/`)).status).toBe(503);
    await writeFile(join(consoleDir, 'assets', 'app-1a2b3c.js'), SCRIPT);
    await writeFile(join(consoleDir, 'assets', 'app-1a2b3c.css'), 'body{margin:0}');
    const get = async (path: string) => {
      const response = await fetch(`${gateway.origin}${path}`);
      return { response, text: await response.text() };
    };
    for (const path of ['/console', '/console/', '/console/usage', '/console/prompts/welcome', '/console/queue?tab=1']) {
      const { response, text } = await get(path);
      expect(response.status, path).toBe(200);
      expect(text).toBe(page);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(response.headers.get('content-security-policy')).toBe(CSP);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const script = await get('/console/assets/app-1a2b3c.js');
    expect(script.response.status).toBe(200);
    expect(script.text).toBe(SCRIPT);
    expect(script.response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(script.response.headers.get('content-security-policy')).toBe(CSP);
    const style = await get('/console/assets/app-1a2b3c.css');
    expect(style.response.headers.get('content-type')).toBe('text/css; charset=utf-8');
    const missing = await get('/console/assets/gone-000.js');
    expect(missing.response.status).toBe(404);
    expect(JSON.parse(missing.text).error.code).toBe('not_found');
    const posted = await fetch(`${gateway.origin}/console/usage`, { method: 'POST' });
    expect(posted.status).toBe(405);
  });

  it('sends a text file in the encoding the request prefers, compressed once, with Vary: Accept-Encoding', async () => {
    const path = '/console/assets/app-1a2b3c.js';
    const plain = await getBytes(path, {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('accept-encoding');
    expect(plain.body.toString()).toBe(SCRIPT);
    const br = await getBytes(path, { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toBe('accept-encoding');
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(brotliDecompressSync(br.body).toString()).toBe(SCRIPT);
    expect(br.body.length).toBeLessThan(SCRIPT.length / 10);
    const gzip = await getBytes(path, { 'accept-encoding': 'br;q=0, gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.body).toString()).toBe(SCRIPT);
    expect((await getBytes(path, { 'accept-encoding': 'identity' })).headers['content-encoding']).toBeUndefined();
  });

  it('never serves a file outside its folder, however the path is written', async () => {
    await writeFile(join(consoleDir, 'index.html'), '<!doctype html>');
    for (const path of [
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/%2E%2E%2Fpackage.json',
      '/console/assets/..%2f..%2fpackage.json',
      '/console/..%5cpackage.json',
      '/console/./index.html',
    ]) {
      const response = await rawGet(path);
      expect(response.status, `${path}: ${response.body}`).toBe(404);
      expect(response.body).not.toContain('llm-gateway');
      expect(JSON.parse(response.body).error.code).toBe('not_found');
    }
    // The request bounds refuse a NUL in any path parameter before the route runs.
    const nul = await rawGet('/console/%00');
    expect(nul.status).toBe(400);
    expect(JSON.parse(nul.body).error.code).toBe('invalid_value');
  });
});
