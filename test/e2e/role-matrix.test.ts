/**
 * The role matrix as a table: every role of an ordinary tenant ('acme') and of the operator
 * tenant × every public and internal endpoint → allowed or 403 `permission_denied`, against
 * real web and worker processes. The table is written out here on purpose (not derived from
 * src/domain/access/roles.ts), so that a change to the matrix has to change this test too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually, type JsonResponse } from '../helpers/http.ts';
import type { Role } from '../../src/infra/store/repository.ts';

const ROLES = ['admin', 'developer', 'app', 'auditor'] as const satisfies readonly Role[];
const TENANTS = ['acme', 'operator'] as const;
type Tenant = (typeof TENANTS)[number];
/** The tenant the operator-only routes act on (neither caller's own). */
const TARGET = 'target-co';
const today = new Date().toISOString().slice(0, 10);

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
const keys = {} as Record<Tenant, Record<Role, string>>;
/** Tenants made by the matrix's allowed POST /internal/v1/tenants calls. */
let tenantsMade = 0;

/** A request of one endpoint; `prepare` makes per-call data (a budget or key to delete, a new tenant id) with the tenant's admin key. */
interface Endpoint {
  method: string;
  path: string;
  body?: unknown;
  /** Status of an allowed call with this (valid) request. */
  ok: number;
  /** Errors in Anthropic's shape (its Messages API). */
  anthropic?: true;
  /** A `multipart/form-data` body instead of JSON (an upload). */
  form?: () => FormData;
  prepare?: (tenant: Tenant) => Promise<{ path: string; body?: unknown }>;
}

const CHAT = { model: 'sim', messages: [{ role: 'user', content: 'hi' }] };
const MESSAGE_BATCH = { requests: [{ custom_id: 'req-1', params: { model: 'sim', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } }] };

/** A batch input file of one line, as POST /v1/files takes it. */
function batchInput(): FormData {
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([`${JSON.stringify({ custom_id: 'line-1', method: 'POST', url: '/v1/chat/completions', body: CHAT })}\n`]), 'input.jsonl');
  return form;
}

const ENDPOINTS: Record<string, Endpoint> = {
  'POST /v1/chat/completions': { method: 'POST', path: '/v1/chat/completions', body: { model: 'sim', messages: [{ role: 'user', content: 'hi' }] }, ok: 200 },
  'POST /v1/embeddings': { method: 'POST', path: '/v1/embeddings', body: { model: 'sim-embed', input: 'hi' }, ok: 200 },
  'POST /v1/messages': {
    method: 'POST',
    path: '/v1/messages',
    body: { model: 'sim', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
    ok: 200,
    anthropic: true,
  },
  'POST /v1/messages/count_tokens': {
    method: 'POST',
    path: '/v1/messages/count_tokens',
    body: { model: 'sim', messages: [{ role: 'user', content: 'hi' }] },
    ok: 200,
    anthropic: true,
  },
  'POST /v1/responses': { method: 'POST', path: '/v1/responses', body: { model: 'sim', input: 'hi' }, ok: 200 },
  'POST /v1/responses/compact': { method: 'POST', path: '/v1/responses/compact', body: { model: 'sim', input: 'hi' }, ok: 200 },
  // Allowed, and answered 404: the gateway stores no responses.
  'GET /v1/responses/{id}': { method: 'GET', path: '/v1/responses/resp_1', ok: 404 },
  'GET /v1/models': { method: 'GET', path: '/v1/models', ok: 200 },
  'GET /v1/models/{id}': { method: 'GET', path: '/v1/models/sim', ok: 200 },
  'GET /v1/prompts/{name}': { method: 'GET', path: '/v1/prompts/greet', ok: 200 },
  'GET /v1/usage': { method: 'GET', path: `/v1/usage?since=${today}`, ok: 200 },
  'GET /v1/budgets': { method: 'GET', path: '/v1/budgets', ok: 200 },
  'GET /v1/audit': { method: 'GET', path: '/v1/audit', ok: 200 },
  'POST /v1/files': { method: 'POST', path: '/v1/files', form: batchInput, ok: 200 },
  'GET /v1/files': { method: 'GET', path: '/v1/files', ok: 200 },
  'GET /v1/files/{id}': { method: 'GET', path: '/v1/files/{id}', ok: 200, prepare: async (tenant) => ({ path: `/v1/files/${await fileOf(tenant)}` }) },
  'GET /v1/files/{id}/content': {
    method: 'GET',
    path: '/v1/files/{id}/content',
    ok: 200,
    prepare: async (tenant) => ({ path: `/v1/files/${await fileOf(tenant)}/content` }),
  },
  'DELETE /v1/files/{id}': { method: 'DELETE', path: '/v1/files/{id}', ok: 200, prepare: async (tenant) => ({ path: `/v1/files/${await fileOf(tenant)}` }) },
  'POST /v1/batches': {
    method: 'POST',
    path: '/v1/batches',
    // The body of a refused call; an allowed one uploads its input file first.
    body: { input_file_id: 'file-none', endpoint: '/v1/chat/completions', completion_window: '24h' },
    ok: 200,
    prepare: async (tenant) => ({
      path: '/v1/batches',
      body: { input_file_id: await fileOf(tenant), endpoint: '/v1/chat/completions', completion_window: '24h' },
    }),
  },
  'GET /v1/batches': { method: 'GET', path: '/v1/batches', ok: 200 },
  'GET /v1/batches/{id}': { method: 'GET', path: '/v1/batches/{id}', ok: 200, prepare: async (tenant) => ({ path: `/v1/batches/${await batchOf(tenant)}` }) },
  'POST /v1/batches/{id}/cancel': {
    method: 'POST',
    path: '/v1/batches/{id}/cancel',
    ok: 200,
    prepare: async (tenant) => ({ path: `/v1/batches/${await batchOf(tenant)}/cancel` }),
  },
  'POST /v1/messages/batches': { method: 'POST', path: '/v1/messages/batches', body: MESSAGE_BATCH, ok: 200, anthropic: true },
  'GET /v1/messages/batches': { method: 'GET', path: '/v1/messages/batches', ok: 200, anthropic: true },
  'GET /v1/messages/batches/{id}': {
    method: 'GET',
    path: '/v1/messages/batches/{id}',
    ok: 200,
    anthropic: true,
    prepare: async (tenant) => ({ path: `/v1/messages/batches/${await messageBatchOf(tenant)}` }),
  },
  'POST /v1/messages/batches/{id}/cancel': {
    method: 'POST',
    path: '/v1/messages/batches/{id}/cancel',
    ok: 200,
    anthropic: true,
    prepare: async (tenant) => ({ path: `/v1/messages/batches/${await messageBatchOf(tenant)}/cancel` }),
  },
  // An ended batch: one still processing is neither deleted nor read (400).
  'DELETE /v1/messages/batches/{id}': {
    method: 'DELETE',
    path: '/v1/messages/batches/{id}',
    ok: 200,
    anthropic: true,
    prepare: async (tenant) => ({ path: `/v1/messages/batches/${await messageBatchOf(tenant, true)}` }),
  },
  'GET /v1/messages/batches/{id}/results': {
    method: 'GET',
    path: '/v1/messages/batches/{id}/results',
    ok: 200,
    anthropic: true,
    prepare: async (tenant) => ({ path: `/v1/messages/batches/${await messageBatchOf(tenant, true)}/results` }),
  },
  'POST /internal/v1/prompts/{name}/versions': {
    method: 'POST',
    path: '/internal/v1/prompts/greet/versions',
    body: { messages: [{ role: 'user', content: 'Hello {{name}}' }], model: 'sim' },
    ok: 201,
  },
  'POST /internal/v1/prompts/{name}/activate': { method: 'POST', path: '/internal/v1/prompts/greet/activate', body: { version: 1 }, ok: 200 },
  'GET /internal/v1/prompts/{name}/versions': { method: 'GET', path: '/internal/v1/prompts/greet/versions', ok: 200 },
  'GET /internal/v1/prompts': { method: 'GET', path: '/internal/v1/prompts', ok: 200 },
  'GET /internal/v1/me': { method: 'GET', path: '/internal/v1/me', ok: 200 },
  'GET /internal/v1/catalog': { method: 'GET', path: '/internal/v1/catalog', ok: 200 },
  'GET /internal/v1/queues': { method: 'GET', path: '/internal/v1/queues', ok: 200 },
  'GET /internal/v1/audit/verify': { method: 'GET', path: '/internal/v1/audit/verify', ok: 200 },
  'POST /internal/v1/budgets': { method: 'POST', path: '/internal/v1/budgets', body: { window: 'month', limit_micros: 1_000_000_000 }, ok: 201 },
  'DELETE /internal/v1/budgets/{id}': {
    method: 'DELETE',
    path: '/internal/v1/budgets/{id}',
    ok: 204,
    prepare: async (tenant) => {
      const created = await call(gateway.origin, keys[tenant].admin, 'POST', '/internal/v1/budgets', { window: 'hour', limit_micros: 1_000_000_000 });
      expect(created.status).toBe(201);
      return { path: `/internal/v1/budgets/${created.body.id as string}` };
    },
  },
  'GET /internal/v1/pii-policy': { method: 'GET', path: '/internal/v1/pii-policy', ok: 200 },
  'PUT /internal/v1/pii-policy': { method: 'PUT', path: '/internal/v1/pii-policy', body: { mode: 'flag' }, ok: 200 },
  'GET /internal/v1/data-policy': { method: 'GET', path: '/internal/v1/data-policy', ok: 200 },
  'PUT /internal/v1/data-policy': { method: 'PUT', path: '/internal/v1/data-policy', body: { store_responses: true, retention_days: 30 }, ok: 200 },
  'GET /internal/v1/cache-policy': { method: 'GET', path: '/internal/v1/cache-policy', ok: 200 },
  'PUT /internal/v1/cache-policy': {
    method: 'PUT',
    path: '/internal/v1/cache-policy',
    body: { enabled: false, default_ttl_s: 300, max_bytes: 1048576 },
    ok: 200,
  },
  // The queue board's JSON API; test/e2e/queue-board.test.ts covers its page, assets and other paths.
  'GET /internal/queues/api/queues': { method: 'GET', path: '/internal/queues/api/queues', ok: 200 },
  'POST /internal/v1/tenants/{tenant}/credits': {
    method: 'POST',
    path: `/internal/v1/tenants/${TARGET}/credits`,
    body: { amount_micros: 1_000_000_000 },
    ok: 201,
  },
  'PUT /internal/v1/tenants/{tenant}/plan': { method: 'PUT', path: `/internal/v1/tenants/${TARGET}/plan`, body: { requests_per_minute: 1000 }, ok: 200 },
  'POST /internal/v1/tenants': {
    method: 'POST',
    path: '/internal/v1/tenants',
    body: { id: 'matrix-new', name: 'Matrix' },
    ok: 201,
    prepare: async () => ({ path: '/internal/v1/tenants', body: { id: `matrix-${++tenantsMade}`, name: 'Matrix' } }),
  },
  'GET /internal/v1/tenants': { method: 'GET', path: '/internal/v1/tenants', ok: 200 },
  'GET /internal/v1/tenants/{tenant}/budgets': { method: 'GET', path: `/internal/v1/tenants/${TARGET}/budgets`, ok: 200 },
  'GET /internal/v1/tenants/{tenant}/plan': { method: 'GET', path: `/internal/v1/tenants/${TARGET}/plan`, ok: 200 },
  'PATCH /internal/v1/tenants/{tenant}': { method: 'PATCH', path: `/internal/v1/tenants/${TARGET}`, body: { name: 'Target Co' }, ok: 200 },
  'POST /internal/v1/keys': { method: 'POST', path: '/internal/v1/keys', body: { role: 'app', name: 'matrix' }, ok: 201 },
  'GET /internal/v1/keys': { method: 'GET', path: '/internal/v1/keys', ok: 200 },
  'PATCH /internal/v1/keys/{id}': {
    method: 'PATCH',
    path: '/internal/v1/keys/{id}',
    body: { rpm: 100 },
    ok: 200,
    prepare: async (tenant) => {
      const created = await call(gateway.origin, keys[tenant].admin, 'POST', '/internal/v1/keys', { role: 'app' });
      expect(created.status).toBe(201);
      return { path: `/internal/v1/keys/${created.body.id as string}` };
    },
  },
  'DELETE /internal/v1/keys/{id}': {
    method: 'DELETE',
    path: '/internal/v1/keys/{id}',
    ok: 200,
    prepare: async (tenant) => {
      const created = await call(gateway.origin, keys[tenant].admin, 'POST', '/internal/v1/keys', { role: 'app' });
      expect(created.status).toBe(201);
      return { path: `/internal/v1/keys/${created.body.id as string}` };
    },
  },
  'POST /internal/v1/webhooks': {
    method: 'POST',
    path: '/internal/v1/webhooks',
    body: { url: 'https://8.8.8.8/hook', events: ['response.completed'] },
    ok: 201,
  },
  'GET /internal/v1/webhooks': { method: 'GET', path: '/internal/v1/webhooks', ok: 200 },
  'PATCH /internal/v1/webhooks/{id}': {
    method: 'PATCH',
    path: '/internal/v1/webhooks/{id}',
    body: { enabled: false },
    ok: 200,
    prepare: async (tenant) => ({ path: `/internal/v1/webhooks/${await webhookOf(tenant)}` }),
  },
  'DELETE /internal/v1/webhooks/{id}': {
    method: 'DELETE',
    path: '/internal/v1/webhooks/{id}',
    ok: 200,
    prepare: async (tenant) => ({ path: `/internal/v1/webhooks/${await webhookOf(tenant)}` }),
  },
  'POST /internal/v1/webhooks/{id}/rotate-secret': {
    method: 'POST',
    path: '/internal/v1/webhooks/{id}/rotate-secret',
    ok: 200,
    prepare: async (tenant) => ({ path: `/internal/v1/webhooks/${await webhookOf(tenant)}/rotate-secret` }),
  },
  'GET /internal/v1/webhooks/{id}/deliveries': {
    method: 'GET',
    path: '/internal/v1/webhooks/{id}/deliveries',
    ok: 200,
    prepare: async (tenant) => ({ path: `/internal/v1/webhooks/${await webhookOf(tenant)}/deliveries` }),
  },
  // Allowed, and answered 404: no such delivery (test/e2e/webhooks.test.ts resends real ones).
  'POST /internal/v1/webhooks/{id}/deliveries/{delivery_id}/resend': {
    method: 'POST',
    path: '/internal/v1/webhooks/{id}/deliveries/whd_none/resend',
    ok: 404,
  },
};
type EndpointName = keyof typeof ENDPOINTS;

/** A new batch input file of the tenant, uploaded with its admin key. */
async function fileOf(tenant: Tenant): Promise<string> {
  const response = await fetch(`${gateway.origin}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keys[tenant].admin}` },
    body: batchInput(),
  });
  const body = (await response.json()) as { id: string };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.id;
}

/** A new batch of the tenant, made with its admin key. */
async function batchOf(tenant: Tenant): Promise<string> {
  const body = { input_file_id: await fileOf(tenant), endpoint: '/v1/chat/completions', completion_window: '24h' };
  const created = await call(gateway.origin, keys[tenant].admin, 'POST', '/v1/batches', body);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

/** A new message batch of the tenant, made with its admin key; `ended`: once the worker has run it. */
async function messageBatchOf(tenant: Tenant, ended = false): Promise<string> {
  const created = await call(gateway.origin, keys[tenant].admin, 'POST', '/v1/messages/batches', MESSAGE_BATCH);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const id = created.body.id as string;
  if (ended) {
    const status = async () => (await call(gateway.origin, keys[tenant].admin, 'GET', `/v1/messages/batches/${id}`)).body.processing_status;
    await eventually(async () => (await status()) === 'ended', 20_000, `${id} to end`);
  }
  return id;
}

/** A new webhook endpoint of the tenant, made with its admin key. */
async function webhookOf(tenant: Tenant): Promise<string> {
  const created = await call(gateway.origin, keys[tenant].admin, 'POST', '/internal/v1/webhooks', {
    url: 'https://8.8.8.8/hook',
    events: ['response.completed'],
  });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

const Y = 'allowed';
const N = 403;
type Outcome = typeof Y | typeof N;

// endpoint                                        acme:  admin developer app auditor   operator: admin developer app auditor
const MATRIX: Array<[EndpointName, Outcome, Outcome, Outcome, Outcome, Outcome, Outcome, Outcome, Outcome]> = [
  ['POST /v1/chat/completions', Y, Y, Y, N, Y, Y, Y, N],
  ['POST /v1/embeddings', Y, Y, Y, N, Y, Y, Y, N],
  ['POST /v1/messages', Y, Y, Y, N, Y, Y, Y, N],
  ['POST /v1/messages/count_tokens', Y, Y, Y, N, Y, Y, Y, N],
  ['POST /v1/responses', Y, Y, Y, N, Y, Y, Y, N],
  ['POST /v1/responses/compact', Y, Y, Y, N, Y, Y, Y, N],
  ['GET /v1/responses/{id}', Y, Y, Y, N, Y, Y, Y, N],
  ['GET /v1/models', Y, Y, Y, N, Y, Y, Y, N],
  ['GET /v1/models/{id}', Y, Y, Y, N, Y, Y, Y, N],
  ['GET /v1/prompts/{name}', Y, Y, N, N, Y, Y, N, N],
  ['GET /v1/usage', Y, Y, N, Y, Y, Y, N, Y],
  ['GET /v1/budgets', Y, Y, N, Y, Y, Y, N, Y],
  ['GET /v1/audit', Y, N, N, Y, Y, N, N, Y],
  ['POST /v1/files', Y, Y, Y, N, Y, Y, Y, N],
  ['GET /v1/files', Y, Y, Y, N, Y, Y, Y, N],
  ['GET /v1/files/{id}', Y, Y, Y, N, Y, Y, Y, N],
  ['GET /v1/files/{id}/content', Y, Y, Y, N, Y, Y, Y, N],
  ['DELETE /v1/files/{id}', Y, Y, Y, N, Y, Y, Y, N],
  ['POST /v1/batches', Y, Y, Y, N, Y, Y, Y, N],
  ['GET /v1/batches', Y, Y, Y, N, Y, Y, Y, N],
  ['GET /v1/batches/{id}', Y, Y, Y, N, Y, Y, Y, N],
  ['POST /v1/batches/{id}/cancel', Y, Y, Y, N, Y, Y, Y, N],
  ['POST /v1/messages/batches', Y, Y, Y, N, Y, Y, Y, N],
  ['GET /v1/messages/batches', Y, Y, Y, N, Y, Y, Y, N],
  ['GET /v1/messages/batches/{id}', Y, Y, Y, N, Y, Y, Y, N],
  ['POST /v1/messages/batches/{id}/cancel', Y, Y, Y, N, Y, Y, Y, N],
  ['DELETE /v1/messages/batches/{id}', Y, Y, Y, N, Y, Y, Y, N],
  ['GET /v1/messages/batches/{id}/results', Y, Y, Y, N, Y, Y, Y, N],
  ['POST /internal/v1/prompts/{name}/versions', Y, N, N, N, Y, N, N, N],
  ['POST /internal/v1/prompts/{name}/activate', Y, N, N, N, Y, N, N, N],
  ['GET /internal/v1/prompts/{name}/versions', Y, Y, N, N, Y, Y, N, N],
  ['GET /internal/v1/prompts', Y, Y, N, N, Y, Y, N, N],
  ['GET /internal/v1/me', Y, Y, Y, Y, Y, Y, Y, Y],
  ['GET /internal/v1/catalog', N, N, N, N, Y, N, N, N],
  ['GET /internal/v1/queues', N, N, N, N, Y, N, N, N],
  ['GET /internal/v1/audit/verify', Y, N, N, Y, Y, N, N, Y],
  ['POST /internal/v1/budgets', Y, N, N, N, Y, N, N, N],
  ['DELETE /internal/v1/budgets/{id}', Y, N, N, N, Y, N, N, N],
  ['GET /internal/v1/pii-policy', Y, N, N, N, Y, N, N, N],
  ['PUT /internal/v1/pii-policy', Y, N, N, N, Y, N, N, N],
  ['GET /internal/v1/data-policy', Y, N, N, N, Y, N, N, N],
  ['PUT /internal/v1/data-policy', Y, N, N, N, Y, N, N, N],
  ['GET /internal/v1/cache-policy', Y, N, N, N, Y, N, N, N],
  ['PUT /internal/v1/cache-policy', Y, N, N, N, Y, N, N, N],
  ['GET /internal/queues/api/queues', N, N, N, N, Y, N, N, N],
  ['POST /internal/v1/tenants/{tenant}/credits', N, N, N, N, Y, N, N, N],
  ['PUT /internal/v1/tenants/{tenant}/plan', N, N, N, N, Y, N, N, N],
  ['POST /internal/v1/tenants', N, N, N, N, Y, N, N, N],
  ['GET /internal/v1/tenants', N, N, N, N, Y, N, N, N],
  ['GET /internal/v1/tenants/{tenant}/budgets', N, N, N, N, Y, N, N, N],
  ['GET /internal/v1/tenants/{tenant}/plan', N, N, N, N, Y, N, N, N],
  ['PATCH /internal/v1/tenants/{tenant}', N, N, N, N, Y, N, N, N],
  ['POST /internal/v1/keys', Y, N, N, N, Y, N, N, N],
  ['GET /internal/v1/keys', Y, N, N, N, Y, N, N, N],
  ['PATCH /internal/v1/keys/{id}', Y, N, N, N, Y, N, N, N],
  ['DELETE /internal/v1/keys/{id}', Y, N, N, N, Y, N, N, N],
  ['POST /internal/v1/webhooks', Y, N, N, N, Y, N, N, N],
  ['GET /internal/v1/webhooks', Y, N, N, N, Y, N, N, N],
  ['PATCH /internal/v1/webhooks/{id}', Y, N, N, N, Y, N, N, N],
  ['DELETE /internal/v1/webhooks/{id}', Y, N, N, N, Y, N, N, N],
  ['POST /internal/v1/webhooks/{id}/rotate-secret', Y, N, N, N, Y, N, N, N],
  ['GET /internal/v1/webhooks/{id}/deliveries', Y, N, N, N, Y, N, N, N],
  ['POST /internal/v1/webhooks/{id}/deliveries/{delivery_id}/resend', Y, N, N, N, Y, N, N, N],
];

const CASES = MATRIX.flatMap(([endpoint, ...outcomes]) =>
  TENANTS.flatMap((tenant, t) => ROLES.map((role, r) => ({ endpoint, tenant, role, outcome: outcomes[t * ROLES.length + r] as Outcome }))),
);

async function send(tenant: Tenant, secret: string | null, endpoint: Endpoint, withPrepare: boolean): Promise<JsonResponse> {
  const prepared = withPrepare && endpoint.prepare ? await endpoint.prepare(tenant) : null;
  const path = prepared?.path ?? endpoint.path.replace('{id}', 'does_not_exist');
  const body = prepared?.body ?? endpoint.body;
  if (secret !== null && !endpoint.form) return call(gateway.origin, secret, endpoint.method, path, body);
  const response = await fetch(`${gateway.origin}${path}`, {
    method: endpoint.method,
    headers: {
      ...(secret === null ? {} : { authorization: `Bearer ${secret}` }),
      ...(body === undefined || endpoint.form ? {} : { 'content-type': 'application/json' }),
    },
    body: endpoint.form?.() ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
}

function expectEnvelope(response: JsonResponse, status: number, type: string, code: string): void {
  expect(response.status).toBe(status);
  expect(Object.keys(response.body)).toEqual(['error']);
  expect(response.body.error).toEqual({ type, code, message: expect.any(String), param: null, request_id: expect.any(String) });
  expect(response.body.error.request_id).toBe(response.headers.get('x-request-id') ?? response.body.error.request_id);
}

// Anthropic's error types of the statuses the matrix checks.
const ANTHROPIC_TYPES: Record<number, string> = { 401: 'authentication_error', 403: 'permission_error' };

/** The refusal in the endpoint's dialect: the spec's envelope, or Anthropic's body on its Messages API. */
function expectRefusal(endpoint: Endpoint, response: JsonResponse, status: number, type: string, code: string): void {
  if (!endpoint.anthropic) return expectEnvelope(response, status, type, code);
  expect(response.status).toBe(status);
  expect(response.body).toEqual({
    type: 'error',
    error: { type: ANTHROPIC_TYPES[status], code, message: expect.any(String), param: null },
    request_id: response.headers.get('x-request-id'),
  });
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  // BATCH_SUPERVISE_INTERVAL_MS: a message batch ends soon after its requests ran (the rows of an ended one wait for it).
  gateway = await startGateway({ catalog: testCatalog(upstream.url), env: { SETTINGS_CACHE_TTL_MS: '100', BATCH_SUPERVISE_INTERVAL_MS: '200' } });
  for (const tenant of TENANTS) {
    keys[tenant] = {} as Record<Role, string>;
    for (const role of ROLES) keys[tenant][role] = (await gateway.issueKey(tenant, role)).secret;
    // Each tenant has the prompt the prompt rows read and activate.
    const created = await call(gateway.origin, keys[tenant].admin, 'POST', '/internal/v1/prompts/greet/versions', {
      messages: [{ role: 'user', content: 'Hello {{name}}' }],
      model: 'sim',
    });
    expect(created.status).toBe(201);
  }
  await gateway.repository.tenants.create({ id: TARGET, name: TARGET });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('role × endpoint', () => {
  it('covers every role of both tenants on every endpoint', () => {
    expect(MATRIX.map(([endpoint]) => endpoint)).toEqual(Object.keys(ENDPOINTS));
    expect(CASES).toHaveLength(Object.keys(ENDPOINTS).length * ROLES.length * TENANTS.length);
  });

  it.each(CASES)('$tenant $role: $endpoint → $outcome', async ({ endpoint, tenant, role, outcome }) => {
    const spec = ENDPOINTS[endpoint] as Endpoint;
    const response = await send(tenant, keys[tenant][role], spec, outcome === Y);
    if (outcome === N) {
      expectRefusal(spec, response, 403, 'invalid_request_error', 'permission_denied');
      expect(response.body.error.message).toContain(role);
    } else {
      expect(response.status, JSON.stringify(response.body)).not.toBe(401);
      expect(response.status, JSON.stringify(response.body)).not.toBe(403);
      expect(response.status, JSON.stringify(response.body)).toBe(spec.ok);
    }
  });
});

describe('without credentials', () => {
  it.each(Object.keys(ENDPOINTS))('%s → 401 missing_api_key', async (endpoint) => {
    const spec = ENDPOINTS[endpoint] as Endpoint;
    expectRefusal(spec, await send('acme', null, spec, false), 401, 'authentication_error', 'missing_api_key');
  });
});

describe('operator-only routes', () => {
  it.each([
    ['POST', `/internal/v1/tenants/${TARGET}/credits`, { amount_micros: 1 }],
    ['PUT', `/internal/v1/tenants/${TARGET}/plan`, { requests_per_minute: 1 }],
    ['POST', '/internal/v1/tenants/acme/credits', { amount_micros: 1 }],
    ['PUT', '/internal/v1/tenants/acme/plan', { requests_per_minute: 1 }],
    ['POST', '/internal/v1/tenants/operator/credits', { amount_micros: 1 }],
    ['POST', '/internal/v1/tenants', { id: 'acme-two' }],
    ['PATCH', '/internal/v1/tenants/acme', { disabled: true }],
    ['POST', '/internal/v1/keys', { role: 'admin', tenant: TARGET }],
    ['GET', `/internal/v1/keys?tenant=${TARGET}`, undefined],
    ['GET', '/internal/v1/catalog', undefined],
    ['GET', '/internal/v1/queues', undefined],
    ['GET', '/internal/v1/tenants/acme/budgets', undefined],
    ['GET', '/internal/v1/tenants/acme/plan', undefined],
    ['DELETE', '/internal/v1/keys/key_any?tenant=operator', undefined],
  ])("acme's admin: %s %s → 403", async (method, path, body) => {
    const response = await call(gateway.origin, keys.acme.admin, method, path, body);
    expectEnvelope(response, 403, 'invalid_request_error', 'permission_denied');
    expect(response.body.error.message).toContain("tenant 'acme'");
  });

  it("the operator's admin acts on another tenant; the denials above changed nothing there", async () => {
    const plan = await call(gateway.origin, keys.operator.admin, 'PUT', '/internal/v1/tenants/acme/plan', { requests_per_minute: 5000 });
    expect(plan.status).toBe(200);
    expect(plan.body).toMatchObject({ tenant: 'acme', requests_per_minute: 5000 });
    const acmeCredit = (await call(gateway.origin, keys.acme.admin, 'GET', '/v1/budgets')).body.credit;
    expect(acmeCredit).toBeNull();
  });
});
