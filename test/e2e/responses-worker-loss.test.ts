/**
 * Background responses whose worker is killed (SIGKILL) while they run: a polled one is run again
 * by the next worker and completes, a stream that had sent events ends failed with
 * `provider_failed`, and a job whose worker dies twice ends failed with `worker_lost`. None stays
 * in_progress, each has one usage record, and the budget is charged each request's cost once.
 * Web and worker processes, a loopback upstream, the openai SDK.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { call, eventually } from '../helpers/http.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { budgetNow, requestIdOf, settleAll, settledBudget, usageOfAll, type UsageRow } from '../helpers/background-responses.ts';

const LOCK_MS = 2000;
/** How long a killed worker's responses may stay unfinished: the lock lapses, the next stall check (every LOCK_MS / 2) moves the job, a worker runs it. */
const RECOVERY_BOUND_MS = 4 * LOCK_MS + 3000;

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let client: OpenAI;
let admin: string;
/** Every usage record these tests expect, by response id. */
const expected = new Map<string, Partial<UsageRow>>();

beforeAll(async () => {
  upstream = await startFakeUpstream();
  // A job per request, one attempt each (a re-run is the stall recovery's, not the retry loop's).
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    env: { WORKER_LOCK_MS: String(LOCK_MS), QUEUE_BATCH_MAX: '1', RETRY_MAX_ATTEMPTS: '1', UPSTREAM_HEADERS_TIMEOUT_MS: '30000', SETTINGS_CACHE_TTL_MS: '100' },
  });
  admin = (await gateway.issueKey('acme', 'admin')).secret;
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('acme', 'app')).secret, maxRetries: 0 });
  expect((await call(gateway.origin, admin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 1_000_000_000 })).status).toBe(201);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(await budgetNow(gateway.origin, admin)).toMatchObject({ spent_micros: 0, reserved_micros: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** SIGKILLs the oldest worker and starts another. */
async function replaceWorker(): Promise<void> {
  const victim = gateway.workers.shift();
  if (!victim) throw new Error('no worker to kill');
  victim.child.kill('SIGKILL');
  await victim.exited;
  await gateway.startWorker();
}

/** A background stream, read until `until` holds for an event, then left (its job goes on); returns the response id. */
async function streamUntil(input: string, until: (event: ResponseStreamEvent) => boolean): Promise<string> {
  const stream = await client.responses.create({ model: 'fake-gpt', input, background: true, stream: true });
  let id: string | undefined;
  for await (const event of stream) {
    if (event.type === 'response.queued') id = event.response.id;
    if (until(event)) break;
  }
  if (!id) throw new Error('the stream opened without response.queued');
  return id;
}

function polled(input: string): Promise<string> {
  return client.responses.create({ model: 'fake-gpt', input, background: true }).then((response) => response.id);
}

describe('a worker killed while background responses run', () => {
  it('runs a polled one again (completed) and ends a stream that had sent events (failed, provider_failed), each charged once', async () => {
    upstream.reset();
    // Each first run answers after 6 s (or streams for 6 s), long after the kill; a re-run gets the fake's default answer at once.
    upstream.script(Array.from({ length: 5 }, () => ({ kind: 'slow-stream' as const, chunkDelayMs: 200, chunks: 30 })));
    const polledIds = await Promise.all([0, 1, 2].map((i) => polled(`polled ${i}`)));
    const streamIds = await Promise.all([0, 1].map((i) => streamUntil(`stream ${i}`, (event) => event.type === 'response.output_text.delta')));
    await eventually(async () => upstream.requests.length === 5, 5000, 'every first run at the upstream');
    for (const id of [...polledIds, ...streamIds]) expect((await client.responses.retrieve(id)).status).toBe('in_progress');
    expect((await budgetNow(gateway.origin, admin)).reserved_micros).toBeGreaterThan(0);

    await replaceWorker();
    const done = await settleAll(client, [...polledIds, ...streamIds], RECOVERY_BOUND_MS);
    for (const id of polledIds) expect(done.get(id)).toMatchObject({ status: 'completed', error: null, output_text: 'Hello from the fake upstream.' });
    for (const id of streamIds) expect(done.get(id)).toMatchObject({ status: 'failed', error: { code: 'provider_failed' } });
    // The polled ones were called again, the streams were not.
    expect(upstream.requests).toHaveLength(8);
    const reruns = upstream.requests.slice(5).map((request) => String((request.body as { messages: Array<{ content: unknown }> }).messages.at(-1)?.content));
    expect(reruns.sort()).toEqual(['polled 0', 'polled 1', 'polled 2']);

    for (const id of polledIds) expected.set(id, { status: 'succeeded', error_code: null });
    for (const id of streamIds) expected.set(id, { status: 'failed', error_code: 'provider_failed' });
    const rows = await usageOfAll(gateway.origin, admin, [...expected.keys()].map(requestIdOf));
    // What a stream had sent is charged; a polled one's cost is its one answer's.
    for (const id of [...polledIds, ...streamIds]) expect(rows.find((row) => row.response_id === id)?.cost_micros).toBeGreaterThan(0);
    await expectChargedOnce(rows);
  });

  it('ends failed with worker_lost a job whose worker died twice, charging nothing and calling the upstream no third time', async () => {
    upstream.reset();
    upstream.script(Array.from({ length: 6 }, () => ({ kind: 'hang' as const })));
    const polledIds = await Promise.all([0, 1].map((i) => polled(`lost ${i}`)));
    const streamId = await streamUntil('lost stream', (event) => event.type === 'response.queued');
    const ids = [...polledIds, streamId];
    await eventually(async () => upstream.requests.length === 3, 5000, 'every first run at the upstream');
    await replaceWorker();
    await eventually(async () => upstream.requests.length === 6, RECOVERY_BOUND_MS, 'every second run at the upstream');
    for (const id of ids) expect((await client.responses.retrieve(id)).status).toBe('in_progress');
    expect((await budgetNow(gateway.origin, admin)).reserved_micros).toBeGreaterThan(0);
    await replaceWorker();

    const done = await settleAll(client, ids, RECOVERY_BOUND_MS);
    for (const id of ids) expect(done.get(id)).toMatchObject({ status: 'failed', error: { code: 'worker_lost' } });
    expect(upstream.requests).toHaveLength(6);
    for (const id of ids) expected.set(id, { status: 'failed', error_code: 'worker_lost', cost_micros: 0 });
    await expectChargedOnce(await usageOfAll(gateway.origin, admin, [...expected.keys()].map(requestIdOf)));
    // Ended for good: a later look finds the same.
    await new Promise((resolve) => setTimeout(resolve, LOCK_MS));
    for (const id of ids) expect((await client.responses.retrieve(id)).status).toBe('failed');
    expect(upstream.requests).toHaveLength(6);
  });
});

/** One usage record per request as expected, and the budget's spend exactly their cost (nothing settled twice, nothing left reserved). */
async function expectChargedOnce(rows: UsageRow[]): Promise<void> {
  expect(rows).toHaveLength(expected.size);
  expect(new Set(rows.map((row) => row.request_id)).size).toBe(expected.size);
  for (const [id, record] of expected) expect(rows.find((row) => row.response_id === id)).toMatchObject(record);
  const budget = await settledBudget(gateway.origin, admin);
  expect(budget.spent_micros).toBe(rows.reduce((sum, row) => sum + row.cost_micros, 0));
}
