/**
 * Anthropic's Message Batches API with the official @anthropic-ai/sdk against web and worker
 * processes: a batch created, polled to its end, its results read back through `results()` (every
 * custom_id once); paging; cancel and expiry mid-way (the unrun lines `canceled`, `expired`);
 * delete; the requests refused before anything is kept, in Anthropic's error shape; another
 * tenant's batch and an OpenAI batch unknown here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic, { type APIError } from '@anthropic-ai/sdk';
import type { MessageBatch, MessageBatchIndividualResponse } from '@anthropic-ai/sdk/resources/messages/batches';
import OpenAI, { toFile } from 'openai';
import type { WrittenCatalog } from '../../src/domain/catalog/schema.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { call, eventually } from '../helpers/http.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

// No test here calls an upstream of the fake kind: the simulator answers every request.
const NO_UPSTREAM = 'http://127.0.0.1:9';

// WORKER_CONCURRENCY 8: two lines of a tenant at a time, so that a batch of slow lines takes long enough to cancel mid-way.
const ENV = { BATCH_SUPERVISE_INTERVAL_MS: '200', WORKER_CONCURRENCY: '8', BODY_LIMIT_BYTES: '65536', BATCH_MAX_LINES: '50' };

let gateway: GatewayUnderTest;
let secret: string;
let client: Anthropic;
let other: Anthropic;

/** `sim-crawl`: the simulator at 300 ms a request. */
function catalog(): WrittenCatalog {
  const base = testCatalog(NO_UPSTREAM);
  base.models['sim-crawl'] = { ...(base.models.sim as object), simulator: { completion_tokens: 4, latency_ms: 300 } } as (typeof base.models)[string];
  return base;
}

function sdk(of: GatewayUnderTest, apiKey: string): Anthropic {
  return new Anthropic({ baseURL: of.origin, apiKey, maxRetries: 0 });
}

beforeAll(async () => {
  gateway = await startGateway({ catalog: catalog(), env: ENV });
  secret = (await gateway.issueKey('acme', 'app')).secret;
  client = sdk(gateway, secret);
  other = sdk(gateway, (await gateway.issueKey('globex', 'app')).secret);
});

afterAll(async () => {
  await gateway?.close();
});

type Request = Anthropic.Messages.BatchCreateParams.Request;

function request(customId: string, model = 'sim'): Request {
  return { custom_id: customId, params: { model, max_tokens: 64, messages: [{ role: 'user', content: `Say ${customId}` }] } };
}

async function ended(id: string, api = client, timeoutMs = 20_000): Promise<MessageBatch> {
  let batch: MessageBatch | undefined;
  await eventually(async () => (batch = await api.messages.batches.retrieve(id)).processing_status === 'ended', timeoutMs, `batch ${id} to end`);
  return batch as MessageBatch;
}

async function results(id: string, api = client): Promise<MessageBatchIndividualResponse[]> {
  const lines: MessageBatchIndividualResponse[] = [];
  for await (const line of await api.messages.batches.results(id)) lines.push(line);
  return lines;
}

/** The Anthropic.APIError a call ends with; fails the test when it succeeds or throws anything else. */
async function failure(pending: Promise<unknown>): Promise<APIError> {
  const error = await pending.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Anthropic.APIError);
  return error as APIError;
}

/** The error body of a refusal, checked to be Anthropic's envelope. */
function anthropicError(error: APIError): { type: string; message: string; code: string; param: string | null } {
  const body = error.error as { type: string; error: { type: string; message: string; code: string; param: string | null }; request_id: string };
  expect(body).toMatchObject({ type: 'error', request_id: expect.stringMatching(/^req_/) });
  return body.error;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe('a message batch', () => {
  it('runs every request once: polled to its end, its results read with results(), each custom_id with its message', async () => {
    const requests = [
      ...Array.from({ length: 5 }, (_, i) => request(`req-${i}`)),
      { ...request('too-long'), params: { ...request('x').params, max_tokens: 100_000 } },
    ];
    const created = await client.messages.batches.create({ requests });
    expect(created).toEqual({
      id: expect.stringMatching(/^msgbatch_/),
      type: 'message_batch',
      processing_status: 'in_progress',
      request_counts: { processing: 6, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      ended_at: null,
      created_at: expect.stringMatching(RFC3339),
      expires_at: expect.stringMatching(RFC3339),
      archived_at: null,
      cancel_initiated_at: null,
      results_url: null,
    });
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(86_400_000);

    const done = await ended(created.id);
    expect(done).toMatchObject({
      processing_status: 'ended',
      request_counts: { processing: 0, succeeded: 5, errored: 1, canceled: 0, expired: 0 },
      ended_at: expect.stringMatching(RFC3339),
      results_url: `/v1/messages/batches/${created.id}/results`,
    });
    const lines = await results(created.id);
    expect(lines.map((line) => line.custom_id).sort()).toEqual(requests.map((r) => r.custom_id).sort());
    for (const line of lines.filter((l) => l.custom_id !== 'too-long')) {
      expect(line.result).toMatchObject({ type: 'succeeded', message: { type: 'message', role: 'assistant', model: 'sim', content: [{ type: 'text' }] } });
    }
    const errored = lines.find((line) => line.custom_id === 'too-long');
    expect(errored?.result).toMatchObject({ type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: expect.any(String) } } });
  });

  it('streams the results as JSON Lines, with request-id, and refuses them (400) while the batch still runs', async () => {
    const running = await client.messages.batches.create({ requests: Array.from({ length: 6 }, (_, i) => request(`wait-${i}`, 'sim-crawl')) });
    const early = await call(gateway.origin, secret, 'GET', `/v1/messages/batches/${running.id}/results`);
    expect(early.status).toBe(400);
    expect(early.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('still processing') } });

    const done = await ended(running.id);
    const response = await fetch(`${gateway.origin}${done.results_url}`, { headers: { 'x-api-key': secret, 'anthropic-version': '2023-06-01' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/x-jsonl/);
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    const text = await response.text();
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(text.endsWith('\n')).toBe(true);
    expect(
      text
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { custom_id: string }).custom_id),
    ).toEqual(Array.from({ length: 6 }, (_, i) => `wait-${i}`));
  });

  it('takes a create body larger than BODY_LIMIT_BYTES: a batch is bounded by FILE_MAX_BYTES', async () => {
    const padding = 'x'.repeat(2_000);
    const requests = Array.from({ length: 40 }, (_, i) => ({ custom_id: `big-${i}`, params: { ...request('big').params, system: padding } }));
    const created = await client.messages.batches.create({ requests });
    expect(created.request_counts.processing).toBe(40);
    expect((await ended(created.id)).request_counts).toMatchObject({ succeeded: 40 });
  });

  it('lists the batches newest first, a page at a time with after_id, and back with before_id', async () => {
    const mine: string[] = [];
    for (let i = 0; i < 3; i++) mine.push((await client.messages.batches.create({ requests: [request(`page-${i}`)] })).id);
    const first = await client.messages.batches.list({ limit: 2 });
    expect(first.data.map((batch) => batch.id)).toEqual([mine[2], mine[1]]);
    expect(first).toMatchObject({ has_more: true, first_id: mine[2], last_id: mine[1] });
    expect(first.data[0]).toMatchObject({ type: 'message_batch', request_counts: expect.any(Object) });

    const all: string[] = [];
    for await (const batch of client.messages.batches.list({ limit: 2 })) all.push(batch.id);
    expect(new Set(all).size).toBe(all.length);
    expect(all.slice(0, 3)).toEqual([mine[2], mine[1], mine[0]]);
    // Only this tenant's, only Anthropic's.
    expect((await other.messages.batches.list()).data.map((batch) => batch.id)).not.toEqual(expect.arrayContaining([mine[0]]));

    const back = await client.messages.batches.list({ before_id: mine[0] as string, limit: 1 });
    expect(back.data.map((batch) => batch.id)).toEqual([mine[1]]);
    expect(back.has_more).toBe(true);
    expect((await client.messages.batches.list({ before_id: mine[0] as string, limit: 5 })).data.map((batch) => batch.id)).toEqual([mine[2], mine[1]]);
    const both = anthropicError(await failure(client.messages.batches.list({ before_id: mine[0] as string, after_id: mine[2] as string })));
    expect(both).toMatchObject({ type: 'invalid_request_error', param: 'before_id' });
    const limit = await failure(client.messages.batches.list({ limit: 1001 }));
    expect(limit.status).toBe(400);
  });
});

describe('refused requests', () => {
  const messages = [{ role: 'user' as const, content: 'hi' }];
  const cases: Array<[string, unknown, string, string]> = [
    ['no requests', [], 'requests', 'invalid_value'],
    ['a duplicate custom_id', [request('same'), request('same')], 'requests.1.custom_id', 'invalid_value'],
    ['a custom_id with a space', [request('a b')], 'requests.0.custom_id', 'invalid_value'],
    ['a custom_id of 65 characters', [request('x'.repeat(65))], 'requests.0.custom_id', 'invalid_value'],
    ['an unknown model', [request('ok'), request('unknown', 'no-such-model')], 'requests.1.params.model', 'model_not_found'],
    ['params without messages', [{ custom_id: 'm', params: { model: 'sim', max_tokens: 10 } }], 'requests.0.params.messages', 'invalid_value'],
    ['a streamed request', [{ custom_id: 's', params: { model: 'sim', max_tokens: 10, messages, stream: true } }], 'requests.0.params.stream', 'invalid_value'],
    ['no params', [{ custom_id: 'p' }], 'requests.0.params', 'missing_required_field'],
  ];
  it.each(cases)('%s: 400 in Anthropic’s shape, naming the request, and no batch made', async (_, requests, param, code) => {
    const before = (await client.messages.batches.list({ limit: 1 })).data[0]?.id;
    const error = await failure(client.messages.batches.create({ requests } as Anthropic.Messages.BatchCreateParams));
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(anthropicError(error)).toMatchObject({ type: 'invalid_request_error', param, code, message: expect.stringContaining(param) });
    expect((await client.messages.batches.list({ limit: 1 })).data[0]?.id).toBe(before);
  });

  it('refuses more requests than BATCH_MAX_LINES, an unknown field, and an anthropic-version that is no date', async () => {
    const many = await failure(client.messages.batches.create({ requests: Array.from({ length: 51 }, (_, i) => request(`many-${i}`)) }));
    expect(anthropicError(many)).toMatchObject({ param: 'requests', message: expect.stringContaining('at most 50') });
    const extra = await call(gateway.origin, secret, 'POST', '/v1/messages/batches', { requests: [request('a')], extra: true });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toMatchObject({ param: 'extra' });
    const version = await call(gateway.origin, secret, 'POST', '/v1/messages/batches', { requests: [request('a')] }, { 'anthropic-version': 'latest' });
    expect(version.status).toBe(400);
    expect(version.body).toMatchObject({ type: 'error', error: { param: 'anthropic-version' } });
  });
});

describe('cancel and delete', () => {
  it('cancels mid-way: canceling, then ended; what ran succeeded, the rest canceled', async () => {
    const requests = Array.from({ length: 20 }, (_, i) => request(`slow-${i}`, 'sim-crawl'));
    const created = await client.messages.batches.create({ requests });
    // Once a request has run: a batch cancelled before it was validated would have no request to cancel.
    await eventually(async () => (await client.messages.batches.retrieve(created.id)).request_counts.succeeded > 0, 10_000, 'a first result');
    const cancelling = await client.messages.batches.cancel(created.id);
    expect(['canceling', 'ended']).toContain(cancelling.processing_status);
    expect(cancelling.cancel_initiated_at).toMatch(RFC3339);
    expect((await client.messages.batches.cancel(created.id)).cancel_initiated_at).toBe(cancelling.cancel_initiated_at);

    const done = await ended(created.id);
    const counts = done.request_counts;
    expect(counts).toMatchObject({ processing: 0, errored: 0, expired: 0 });
    expect(counts.canceled).toBeGreaterThan(0);
    expect(counts.succeeded + counts.canceled).toBe(20);
    const lines = await results(created.id);
    expect(lines.map((line) => line.custom_id).sort()).toEqual(requests.map((r) => r.custom_id).sort());
    expect(lines.filter((line) => line.result.type === 'canceled')).toHaveLength(counts.canceled);
    expect(lines.filter((line) => line.result.type === 'succeeded')).toHaveLength(counts.succeeded);
  });

  it('deletes an ended batch with its files; one still processing is refused', async () => {
    const running = await client.messages.batches.create({ requests: Array.from({ length: 4 }, (_, i) => request(`del-${i}`, 'sim-crawl')) });
    const refused = anthropicError(await failure(client.messages.batches.delete(running.id)));
    expect(refused).toMatchObject({ type: 'invalid_request_error' });

    const done = await ended(running.id);
    const stored = await gateway.repository.batches.get('acme', done.id);
    expect(await client.messages.batches.delete(done.id)).toEqual({ id: done.id, type: 'message_batch_deleted' });
    expect(await gateway.repository.files.get('acme', stored?.inputFileId as string)).toBeNull();
    expect(await gateway.repository.files.get('acme', stored?.outputFileId as string)).toBeNull();
    for (const gone of [
      () => client.messages.batches.retrieve(done.id),
      () => client.messages.batches.delete(done.id),
      () => client.messages.batches.cancel(done.id),
    ]) {
      expect(anthropicError(await failure(gone()))).toMatchObject({ type: 'not_found_error' });
    }
    expect((await call(gateway.origin, secret, 'GET', `/v1/messages/batches/${done.id}/results`)).status).toBe(404);
  });
});

describe('isolation', () => {
  it('does not know another tenant’s batch, nor an OpenAI batch', async () => {
    const mine = await client.messages.batches.create({ requests: [request('private')] });
    await ended(mine.id);
    for (const attempt of [
      () => other.messages.batches.retrieve(mine.id),
      () => other.messages.batches.cancel(mine.id),
      () => other.messages.batches.delete(mine.id),
      () => other.messages.batches.results(mine.id),
    ]) {
      const error = await failure(attempt());
      expect(error.status).toBe(404);
      expect(anthropicError(error).type).toBe('not_found_error');
    }
    expect((await call(gateway.origin, secret, 'GET', `/v1/batches/${mine.id}`)).status).toBe(404);

    const openai = new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 });
    const line = { custom_id: 'o', method: 'POST', url: '/v1/chat/completions', body: { model: 'sim', messages: [{ role: 'user', content: 'hi' }] } };
    const file = await openai.files.create({ file: await toFile(Buffer.from(`${JSON.stringify(line)}\n`), 'o.jsonl'), purpose: 'batch' });
    const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect((await failure(client.messages.batches.retrieve(batch.id))).status).toBe(404);
    expect((await client.messages.batches.list({ limit: 1000 })).data.map((b) => b.id)).not.toContain(batch.id);
  });
});

describe('the OpenAPI document', () => {
  it('documents every route, with x-api-key, Anthropic’s error envelope, and 405 for other methods', async () => {
    const doc = (await (await fetch(`${gateway.origin}/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> };
    const documented = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/v1/messages/batches'))
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    expect(documented.sort()).toEqual(
      [
        'POST /v1/messages/batches',
        'GET /v1/messages/batches',
        'GET /v1/messages/batches/{id}',
        'DELETE /v1/messages/batches/{id}',
        'POST /v1/messages/batches/{id}/cancel',
        'GET /v1/messages/batches/{id}/results',
      ].sort(),
    );
    const create = doc.paths['/v1/messages/batches']?.post;
    expect(create.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(create.responses[400].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/AnthropicErrorEnvelope' });
    const put = await call(gateway.origin, secret, 'PUT', '/v1/messages/batches/msgbatch_x');
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, DELETE');
  });
});

describe('expiry', () => {
  let short: GatewayUnderTest;
  let api: Anthropic;

  beforeAll(async () => {
    // The window is the web tier's: it sets each batch's expires_at.
    short = await startGateway({ catalog: catalog(), env: { ...ENV, BATCH_COMPLETION_WINDOW_MS: '1500', WORKER_CONCURRENCY: '4' } });
    api = sdk(short, (await short.issueKey('acme', 'app')).secret);
  });
  afterAll(async () => {
    await short?.close();
  });

  it('expires: what ran succeeded, the rest expired', async () => {
    const requests = Array.from({ length: 20 }, (_, i) => request(`late-${i}`, 'sim-crawl'));
    const created = await api.messages.batches.create({ requests });
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(1_500);
    const done = await ended(created.id, api);
    const counts = done.request_counts;
    expect(counts).toMatchObject({ processing: 0, errored: 0, canceled: 0 });
    expect(counts.expired).toBeGreaterThan(0);
    expect(counts.succeeded).toBeGreaterThan(0);
    expect(counts.succeeded + counts.expired).toBe(20);
    expect(done.cancel_initiated_at).toBeNull();
    const lines = await results(created.id, api);
    expect(lines).toHaveLength(20);
    expect(lines.filter((line) => line.result.type === 'expired')).toHaveLength(counts.expired);
  });
});
