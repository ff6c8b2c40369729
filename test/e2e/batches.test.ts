/**
 * OpenAI's Batch API with the official `openai` SDK against web and worker processes: a file
 * uploaded, a batch run to its end in the workers' batch lane, its output and error files read
 * back, every line once; the usage records of its lines (batch id, custom id, the batch price);
 * validation failures before any line runs; bad input; paging; cancel and expiry mid-way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import type { Batch } from 'openai/resources/batches';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { call, eventually } from '../helpers/http.ts';
import { startWebhookReceiver, unwrap, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { apiFailure } from '../helpers/sdk-calls.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

let upstream: FakeUpstream;
let hook: WebhookReceiver;
let gateway: GatewayUnderTest;
let client: OpenAI;
let other: OpenAI;

beforeAll(async () => {
  [upstream, hook] = await Promise.all([startFakeUpstream(), startWebhookReceiver()]);
  const catalog = testCatalog(upstream.url);
  (catalog.models.sim as Record<string, unknown>).batch_price = 0.5;
  gateway = await startGateway({
    catalog,
    env: {
      BATCH_SUPERVISE_INTERVAL_MS: '200',
      BATCH_SEGMENT_LINES: '7',
      WORKER_CONCURRENCY: '8',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      SETTINGS_CACHE_TTL_MS: '100',
    },
  });
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('acme', 'app')).secret, maxRetries: 0 });
  other = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('globex', 'app')).secret, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([upstream?.close(), hook?.close()]);
});

type Line = { custom_id: string; method: string; url: string; body: Record<string, unknown> };

function chatLine(customId: string, model = 'sim', content = `Say ${customId}`): Line {
  return { custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content }] } };
}

async function upload(lines: ReadonlyArray<Line | string>, api = client): Promise<string> {
  const text = lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n';
  const file = await api.files.create({ file: await toFile(Buffer.from(text), 'input.jsonl'), purpose: 'batch' });
  return file.id;
}

async function ended(id: string, timeoutMs = 20_000): Promise<Batch> {
  let batch: Batch | undefined;
  await eventually(
    async () => {
      batch = await client.batches.retrieve(id);
      return ['completed', 'failed', 'expired', 'cancelled'].includes(batch.status);
    },
    timeoutMs,
    `batch ${id} to end`,
  );
  return batch as Batch;
}

/** The lines of a batch's output or error file, read as `api`'s tenant; none when the batch has no such file. */
async function jsonl(fileId: string | null | undefined, api = client): Promise<Array<Record<string, any>>> {
  if (!fileId) return [];
  const text = await (await api.files.content(fileId)).text();
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, any>);
}

describe('a batch of chat completions', () => {
  it('runs every line once: the output file has each custom_id with its answer, counts and usage summed', async () => {
    const lines = Array.from({ length: 20 }, (_, i) => chatLine(`line-${i}`));
    const inputFileId = await upload(lines);
    const created = await client.batches.create({
      input_file_id: inputFileId,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { run: 'one' },
    });
    expect(created).toMatchObject({ object: 'batch', status: 'validating', input_file_id: inputFileId, completion_window: '24h', metadata: { run: 'one' } });
    expect(created.id).toMatch(/^batch_/);
    const done = await ended(created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 20, completed: 20, failed: 0 }, error_file_id: null });
    for (const field of ['in_progress_at', 'finalizing_at', 'completed_at', 'expires_at'] as const) expect(done[field]).toEqual(expect.any(Number));
    const output = await jsonl(done.output_file_id);
    expect(output.map((line) => line.custom_id).sort()).toEqual(lines.map((line) => line.custom_id).sort());
    for (const line of output) {
      expect(line).toMatchObject({ error: null, response: { status_code: 200, request_id: line.id } });
      expect(line.response.body).toMatchObject({ object: 'chat.completion', model: 'sim' });
    }
    const tokens = output.reduce((sum, line) => sum + line.response.body.usage.total_tokens, 0);
    expect(done.usage?.total_tokens).toBe(tokens);
    const file = await client.files.retrieve(done.output_file_id as string);
    expect(file).toMatchObject({ purpose: 'batch_output' });
  });

  it("records each line's usage once, with its batch and custom id, at the catalog's batch price", async () => {
    const inputFileId = await upload([chatLine('priced-a'), chatLine('priced-b')]);
    const done = await ended((await client.batches.create({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' })).id);
    expect(done.status).toBe('completed');
    let records: Array<Record<string, any>> = [];
    await eventually(
      async () => {
        const result = await gateway.repository.usage.list({ tenantId: 'acme', since: new Date(0), until: new Date(Date.now() + 60_000) }, 1000, null);
        records = result.filter((record) => record.batchId === done.id);
        return records.length === 2;
      },
      5_000,
      'the usage records',
    );
    expect(records.map((record) => record.customId).sort()).toEqual(['priced-a', 'priced-b']);
    for (const record of records) {
      // sim costs 0.1 and 0.4 per million tokens: at half price, exactly half of that, rounded.
      expect(record.costMicros).toBe(Math.round((record.promptTokens * 0.1 + record.completionTokens * 0.4) * 0.5));
    }
  });

  it('puts a failed line in the error file with its status and envelope, the rest in the output', async () => {
    const inputFileId = await upload([
      chatLine('good'),
      { ...chatLine('bad'), body: { model: 'sim', messages: [{ role: 'user', content: 'x' }], max_tokens: 100_000 } },
    ]);
    const done = await ended((await client.batches.create({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' })).id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 1, failed: 1 } });
    expect((await jsonl(done.output_file_id)).map((line) => line.custom_id)).toEqual(['good']);
    const errors = await jsonl(done.error_file_id);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ custom_id: 'bad', response: { status_code: 422, body: { error: { type: 'invalid_request_error' } } } });
  });

  it('runs embeddings and responses lines too', async () => {
    const embeddings = await upload([{ custom_id: 'e1', method: 'POST', url: '/v1/embeddings', body: { model: 'sim-embed', input: 'hello' } }]);
    const e = await ended((await client.batches.create({ input_file_id: embeddings, endpoint: '/v1/embeddings', completion_window: '24h' })).id);
    expect(e.status).toBe('completed');
    expect((await jsonl(e.output_file_id))[0]).toMatchObject({ custom_id: 'e1', response: { status_code: 200, body: { object: 'list' } } });
    const responses = await upload([{ custom_id: 'r1', method: 'POST', url: '/v1/responses', body: { model: 'sim', input: 'hello' } }]);
    const r = await ended((await client.batches.create({ input_file_id: responses, endpoint: '/v1/responses', completion_window: '24h' })).id);
    expect(r.status).toBe('completed');
    expect((await jsonl(r.output_file_id))[0]).toMatchObject({
      custom_id: 'r1',
      response: { status_code: 200, body: { object: 'response', status: 'completed' } },
    });
  });
});

describe('admission of each line', () => {
  it('fails the lines past an exhausted budget with budget_exceeded, charges none of them, and lets the batch finish', async () => {
    const tenant = 'thrifty';
    const admin = (await gateway.issueKey(tenant, 'admin')).secret;
    const api = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey(tenant, 'app')).secret, maxRetries: 0 });
    // A line costs about 3 micros at the batch price: the budget covers a few of the 30.
    expect((await call(gateway.origin, admin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 12 })).status).toBe(201);
    const lines = Array.from({ length: 30 }, (_, i) => ({
      ...chatLine(`b-${i}`),
      body: { model: 'sim', max_tokens: 12, messages: [{ role: 'user', content: 'hi' }] },
    }));
    const file = await api.files.create({ file: await toFile(Buffer.from(lines.map((line) => JSON.stringify(line)).join('\n')), 'b.jsonl'), purpose: 'batch' });
    const batch = await api.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    let done = batch;
    await eventually(async () => (done = await api.batches.retrieve(batch.id)).status === 'completed', 20_000, 'the batch to complete');
    const output = await jsonl(done.output_file_id, api);
    const errors = await jsonl(done.error_file_id, api);
    expect(output.length).toBeGreaterThan(0);
    expect(errors.length).toBeGreaterThan(0);
    expect(output.length + errors.length).toBe(30);
    for (const line of errors) expect(line.response).toMatchObject({ status_code: 402, body: { error: { code: 'budget_exceeded' } } });
    await eventually(
      async () => {
        const records = await gateway.repository.usage.list({ tenantId: tenant, since: new Date(0), until: new Date(Date.now() + 60_000) }, 1000, null);
        return records.filter((record) => record.batchId === batch.id).length === output.length;
      },
      5_000,
      'one usage record per line that ran, none for the refused',
    );
  });

  it('sends batch.completed and batch.failed to the webhooks subscribed, signed for the SDK', async () => {
    const tenant = 'hooked';
    const admin = (await gateway.issueKey(tenant, 'admin')).secret;
    const api = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey(tenant, 'app')).secret, maxRetries: 0 });
    const registered = await call(gateway.origin, admin, 'POST', '/internal/v1/webhooks', {
      url: `${hook.origin}/hooks`,
      events: ['batch.completed', 'batch.failed'],
    });
    expect(registered.status).toBe(201);
    const secret = registered.body.secret as string;
    const good = await api.files.create({ file: await toFile(Buffer.from(JSON.stringify(chatLine('w1'))), 'w.jsonl'), purpose: 'batch' });
    const completed = await api.batches.create({ input_file_id: good.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const [first] = await hook.waitFor(1, 15_000);
    expect(await unwrap(first!, secret)).toMatchObject({ object: 'event', type: 'batch.completed', data: { id: completed.id } });
    const bad = await api.files.create({ file: await toFile(Buffer.from('not json'), 'bad.jsonl'), purpose: 'batch' });
    const failed = await api.batches.create({ input_file_id: bad.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const deliveries = await hook.waitFor(2, 15_000);
    expect(await unwrap(deliveries[1]!, secret)).toMatchObject({ type: 'batch.failed', data: { id: failed.id } });
  });
});

describe('validation', () => {
  const cases: Array<[string, Array<Line | string>, string, number]> = [
    ['a line that is not JSON', [chatLine('a'), '{"custom_id": "b", '], 'invalid_json_line', 2],
    ['a duplicate custom_id', [chatLine('a'), chatLine('a')], 'duplicate_custom_id', 2],
    ['a url other than the endpoint', [chatLine('a'), { ...chatLine('b'), url: '/v1/embeddings' }], 'invalid_url', 2],
    ['an unknown model', [chatLine('a', 'no-such-model')], 'model_not_found', 1],
  ];
  it.each(cases)('%s fails the batch, naming the line, before any line runs', async (_, lines, code, line) => {
    upstream.reset();
    const inputFileId = await upload(lines);
    const done = await ended((await client.batches.create({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' })).id);
    expect(done.status).toBe('failed');
    expect(done.failed_at).toEqual(expect.any(Number));
    expect(done.errors?.data).toEqual(expect.arrayContaining([expect.objectContaining({ code, line })]));
    expect(done.request_counts).toMatchObject({ completed: 0, failed: 0 });
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('bad input', () => {
  it('names the offending param', async () => {
    const inputFileId = await upload([chatLine('a')]);
    const create = (body: Record<string, unknown>) =>
      apiFailure(client.batches.create({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h', ...body } as never));
    expect((await create({ endpoint: '/v1/completions' })).error).toMatchObject({ code: 'invalid_value', param: 'endpoint' });
    expect((await create({ completion_window: '48h' })).error).toMatchObject({ code: 'invalid_value', param: 'completion_window' });
    expect((await create({ input_file_id: 'file-nope' })).status).toBe(404);
    expect((await create({ input_file_id: 'file-nope' })).error).toMatchObject({ param: 'input_file_id' });
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    expect((await create({ metadata: many })).error).toMatchObject({ param: 'metadata' });
    expect((await create({ metadata: { ['k'.repeat(65)]: 'v' } })).error).toMatchObject({ param: 'metadata' });
    expect((await create({ metadata: { k: 'v'.repeat(513) } })).error).toMatchObject({ param: 'metadata' });
    const notBatch = await client.files.create({ file: await toFile(Buffer.from('{}\n'), 'data.jsonl'), purpose: 'user_data' });
    expect((await create({ input_file_id: notBatch.id })).error).toMatchObject({ param: 'input_file_id' });
  });

  it("keeps one tenant's files and batches from another", async () => {
    const inputFileId = await upload([chatLine('a')]);
    const batch = await client.batches.create({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect((await apiFailure(other.batches.retrieve(batch.id))).status).toBe(404);
    expect((await apiFailure(other.batches.cancel(batch.id))).status).toBe(404);
    const theirs = await apiFailure(other.batches.create({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' }));
    expect(theirs.status).toBe(404);
    expect((await other.batches.list()).data.map((item) => item.id)).not.toContain(batch.id);
    await ended(batch.id);
  });
});

describe('listing', () => {
  it('pages newest first with after and limit, and the SDK walks every page', async () => {
    const ids: string[] = [];
    const inputFileId = await upload([chatLine('a')]);
    for (let i = 0; i < 3; i++)
      ids.push((await client.batches.create({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' })).id);
    const first = await client.batches.list({ limit: 2 });
    expect(first.data.map((batch) => batch.id)).toEqual([ids[2], ids[1]]);
    expect(first.has_more).toBe(true);
    const second = await client.batches.list({ limit: 2, after: ids[1] });
    expect(second.data[0]?.id).toBe(ids[0]);
    const all: string[] = [];
    for await (const batch of client.batches.list({ limit: 2 })) all.push(batch.id);
    expect(all).toEqual(expect.arrayContaining(ids));
    await Promise.all(ids.map((id) => ended(id)));
  });
});

describe('cancel and expiry', () => {
  it('cancels mid-way: cancelling, then cancelled; what ran is in the output, the rest in the error file', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => chatLine(`slow-${i}`, 'sim-slow'));
    const batch = await client.batches.create({ input_file_id: await upload(lines), endpoint: '/v1/chat/completions', completion_window: '24h' });
    await eventually(async () => (await client.batches.retrieve(batch.id)).request_counts!.completed > 0, 10_000, 'some lines to run');
    const cancelling = await client.batches.cancel(batch.id);
    expect(['cancelling', 'cancelled']).toContain(cancelling.status);
    const done = await ended(batch.id);
    expect(done.status).toBe('cancelled');
    expect(done.cancelled_at).toEqual(expect.any(Number));
    const output = await jsonl(done.output_file_id);
    const errors = await jsonl(done.error_file_id);
    expect(output.length).toBeLessThan(60);
    expect([...output, ...errors].map((line) => line.custom_id).sort()).toEqual(lines.map((line) => line.custom_id).sort());
    expect(errors.every((line) => line.response === null && line.error.code === 'batch_cancelled')).toBe(true);
  });
});

describe('a batch past its completion window', () => {
  let short: GatewayUnderTest;
  let api: OpenAI;

  beforeAll(async () => {
    short = await startGateway({
      catalog: testCatalog(upstream.url),
      env: { BATCH_SUPERVISE_INTERVAL_MS: '200', BATCH_COMPLETION_WINDOW_MS: '1500', WORKER_CONCURRENCY: '4' },
    });
    api = new OpenAI({ baseURL: short.baseURL, apiKey: (await short.issueKey('acme', 'app')).secret, maxRetries: 0 });
  });

  afterAll(async () => {
    await short?.close();
  });

  it('expires: what finished is in the output, the rest in the error file with batch_expired', async () => {
    const lines = Array.from({ length: 300 }, (_, i) => chatLine(`late-${i}`, 'sim-slow'));
    const file = await api.files.create({
      file: await toFile(Buffer.from(lines.map((line) => JSON.stringify(line)).join('\n')), 'late.jsonl'),
      purpose: 'batch',
    });
    const batch = await api.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    let done = batch;
    await eventually(
      async () => {
        done = await api.batches.retrieve(batch.id);
        return ['completed', 'failed', 'expired', 'cancelled'].includes(done.status);
      },
      20_000,
      'the batch to end',
    );
    expect(done.status).toBe('expired');
    expect(done.expired_at).toEqual(expect.any(Number));
    const output = await jsonl(done.output_file_id, api);
    const errors = await jsonl(done.error_file_id, api);
    expect(output.length).toBeGreaterThan(0);
    expect(errors.length).toBeGreaterThan(0);
    expect([...output, ...errors].map((line) => line.custom_id).sort()).toEqual(lines.map((line) => line.custom_id).sort());
    expect(errors.every((line) => line.response === null && line.error.code === 'batch_expired')).toBe(true);
    expect(done.request_counts).toMatchObject({ total: 300, completed: output.length, failed: errors.length });
  });
});

describe('spare capacity only', () => {
  let busy: GatewayUnderTest;
  let api: OpenAI;

  beforeAll(async () => {
    const catalog = testCatalog(upstream.url);
    catalog.models['sim-wait'] = {
      ...(catalog.models.sim as object),
      simulator: { completion_tokens: 4, latency_ms: 1_500 },
    } as (typeof catalog.models)[string];
    // Two live requests at once, a job each: the third and fourth wait in the queue while the first two run.
    // The lane may take both slots' worth of lines (share 1): only the live queue, or a 429, holds them back.
    busy = await startGateway({
      catalog,
      env: { BATCH_SUPERVISE_INTERVAL_MS: '200', WORKER_CONCURRENCY: '2', QUEUE_BATCH_MAX: '1', BATCH_LANE_SHARE: '1', BATCH_TENANT_SHARE: '1' },
    });
    api = new OpenAI({ baseURL: busy.baseURL, apiKey: (await busy.issueKey('acme', 'app')).secret, maxRetries: 0 });
  });

  afterAll(async () => {
    await busy?.close();
  });

  it('starts no line while live requests of its shard wait for a worker, and runs the batch once they are served', async () => {
    const live = Array.from({ length: 4 }, (_, i) => api.chat.completions.create({ model: 'sim-wait', messages: [{ role: 'user', content: `live ${i}` }] }));
    const file = await api.files.create({
      file: await toFile(Buffer.from([chatLine('s1'), chatLine('s2')].map((line) => JSON.stringify(line)).join('\n')), 's.jsonl'),
      purpose: 'batch',
    });
    const batch = await api.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await eventually(async () => (await api.batches.retrieve(batch.id)).status === 'in_progress', 5_000, 'the batch to be validated');
    // The lane has slots of its own: only the live queue holds its lines back.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect((await api.batches.retrieve(batch.id)).request_counts).toMatchObject({ completed: 0, failed: 0 });
    await Promise.all(live);
    await eventually(async () => (await api.batches.retrieve(batch.id)).status === 'completed', 10_000, 'the batch to complete');
  });

  it('slows its lines to a deployment that answered 429 until the Retry-After, while live requests to it go on', async () => {
    upstream.reset();
    upstream.script([{ kind: 'status', status: 429, headers: { 'retry-after': '2' }, body: { error: { message: 'slow down', type: 'rate_limit_error' } } }]);
    const lines = Array.from({ length: 3 }, (_, i) => chatLine(`limited-${i}`, 'fake-gpt'));
    const file = await api.files.create({ file: await toFile(Buffer.from(lines.map((line) => JSON.stringify(line)).join('\n')), 'l.jsonl'), purpose: 'batch' });
    const batch = await api.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await eventually(async () => upstream.requests.length >= 1, 5_000, 'the first line to reach the upstream');
    const refusedAt = Date.now();
    const answer = await api.chat.completions.create({ model: 'fake-gpt', messages: [{ role: 'user', content: 'live while the lane waits' }] });
    expect(answer.choices[0]?.message.content).toBeTruthy();
    expect(Date.now() - refusedAt).toBeLessThan(1_000);
    // A second on (within the Retry-After), the line after the two that started together has not reached the upstream; the live request has.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const asked = upstream.requests.map((request) => String((request.body as { messages: Array<{ content: unknown }> }).messages.at(-1)?.content));
    expect(asked).toContain('live while the lane waits');
    expect(asked).not.toContain('Say limited-2');
    await eventually(async () => (await api.batches.retrieve(batch.id)).status === 'completed', 15_000, 'the batch to complete');
    expect((await api.batches.retrieve(batch.id)).request_counts).toMatchObject({ completed: 3, failed: 0 });
  });
});
