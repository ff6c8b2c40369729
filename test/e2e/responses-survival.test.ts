/**
 * Background responses survive what the web tier goes through: the web process killed (SIGKILL)
 * and stopped (SIGTERM) while 120 of them wait for a worker loses none, runs none twice and
 * charges each once; a response whose job waited past BACKGROUND_QUEUE_DEADLINE_MS ends failed
 * with `queue_timeout` without calling the upstream. Web and worker processes, the openai SDK.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { spawnEntry, startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { call, eventually } from '../helpers/http.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { budgetNow, requestIdOf, settleAll, settledBudget, usageOfAll } from '../helpers/background-responses.ts';

/** Ends the web process with `signal` and starts another on the same port and environment; resolves once it is ready. */
async function restartWeb(gateway: GatewayUnderTest, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
  const slot = gateway.webs[0] as GatewayUnderTest['webs'][number];
  slot.process.child.kill(signal);
  const exit = await slot.process.exited;
  // SIGTERM drains and exits 0; SIGKILL leaves no say.
  expect(exit).toBe(signal === 'SIGTERM' ? 0 : 'SIGKILL');
  const next = spawnEntry('src/server.ts', gateway.env);
  // The gateway's close() stops the processes of `webs`: the new one replaces the old there.
  slot.process = next;
  await eventually(
    async () => {
      if (next.child.exitCode !== null) throw new Error(`the new web process exited:\n${next.output()}`);
      return (await fetch(`${gateway.origin}/readyz`).catch(() => null))?.status === 200;
    },
    20_000,
    'the new web process to be ready',
  );
}

/** The user message of each upstream call, in arrival order. */
function inputsCalled(upstream: FakeUpstream): string[] {
  return upstream.requests.map((request) => {
    const messages = (request.body as { messages: Array<{ content: unknown }> }).messages;
    return String(messages.at(-1)?.content);
  });
}

describe('a web process killed while background responses wait for a worker', () => {
  let upstream: FakeUpstream;
  let gateway: GatewayUnderTest;
  let client: OpenAI;
  let admin: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    // No worker: every job waits in the queue while the web processes come and go.
    gateway = await startGateway({ catalog: testCatalog(upstream.url), workers: 0, env: { SETTINGS_CACHE_TTL_MS: '100' } });
    admin = (await gateway.issueKey('acme', 'admin')).secret;
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('acme', 'app')).secret, maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('loses none of 120 across a SIGKILL and a SIGTERM: each completes once, with one usage record, charged once', async () => {
    expect((await call(gateway.origin, admin, 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 1_000_000_000 })).status).toBe(201);
    // The web tier's settings cache (100 ms) must see the budget, so that each request reserves against it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await budgetNow(gateway.origin, admin)).toMatchObject({ spent_micros: 0, reserved_micros: 0 });
    const create = (i: number) => client.responses.create({ model: 'fake-gpt', input: `job ${i}`, background: true });

    const first = await Promise.all(Array.from({ length: 100 }, (_, i) => create(i)));
    expect(first.map((response) => response.status)).toEqual(first.map(() => 'queued'));
    // Each holds its reservation while it waits.
    expect((await budgetNow(gateway.origin, admin)).reserved_micros).toBeGreaterThan(0);
    await restartWeb(gateway, 'SIGKILL');
    // The new process knows every one of them, still queued.
    const seen = await Promise.all(first.map((response) => client.responses.retrieve(response.id)));
    expect(seen.map((response) => response.status)).toEqual(first.map(() => 'queued'));

    const second = await Promise.all(Array.from({ length: 20 }, (_, i) => create(100 + i)));
    await restartWeb(gateway, 'SIGTERM');
    const ids = [...first, ...second].map((response) => response.id);
    expect(new Set(ids).size).toBe(120);
    expect(upstream.requests).toHaveLength(0);

    await gateway.startWorker();
    const done = await settleAll(client, ids, 20_000);
    for (const id of ids) expect(done.get(id)).toMatchObject({ id, status: 'completed', background: true, output_text: 'Hello from the fake upstream.' });
    // One upstream call each: none lost, none run twice.
    const called = inputsCalled(upstream).sort();
    expect(called).toEqual(Array.from({ length: 120 }, (_, i) => `job ${i}`).sort());

    const rows = await usageOfAll(gateway.origin, admin, ids.map(requestIdOf));
    const mine = rows.filter((row) => ids.includes(row.response_id ?? ''));
    expect(mine).toHaveLength(120);
    expect(new Set(mine.map((row) => row.request_id)).size).toBe(120);
    for (const row of mine) expect(row).toMatchObject({ status: 'succeeded', error_code: null, response_id: `resp_${row.request_id}` });
    expect(mine.every((row) => row.cost_micros > 0)).toBe(true);
    // Settled once each: the budget's spend is exactly the records' cost.
    const budget = await settledBudget(gateway.origin, admin);
    expect(budget.spent_micros).toBe(rows.reduce((sum, row) => sum + row.cost_micros, 0));
    expect(upstream.requests).toHaveLength(120);
  });
});

describe('a background response whose job waited past BACKGROUND_QUEUE_DEADLINE_MS', () => {
  let upstream: FakeUpstream;
  let gateway: GatewayUnderTest;
  let client: OpenAI;
  let admin: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    gateway = await startGateway({ catalog: testCatalog(upstream.url), workers: 0, env: { BACKGROUND_QUEUE_DEADLINE_MS: '300' } });
    admin = (await gateway.issueKey('acme', 'admin')).secret;
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('acme', 'app')).secret, maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('ends failed with queue_timeout once a worker takes it, without calling the upstream or charging', async () => {
    const polled = await Promise.all([0, 1].map((i) => client.responses.create({ model: 'fake-gpt', input: `late ${i}`, background: true })));
    const stream = await client.responses.create({ model: 'fake-gpt', input: 'late stream', background: true, stream: true });
    const events: ResponseStreamEvent[] = [];
    const streamed = (async () => {
      for await (const event of stream) events.push(event);
    })().then(
      () => null,
      (error: unknown) => error,
    );
    await eventually(async () => events.length > 0, 5000, 'the stream to open');
    const opening = events[0] as ResponseStreamEvent & { response: { id: string } };
    expect(opening).toMatchObject({ type: 'response.queued', sequence_number: 0 });
    const ids = [...polled.map((response) => response.id), opening.response.id];
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await client.responses.retrieve(ids[0] as string)).status).toBe('queued');

    await gateway.startWorker();
    const done = await settleAll(client, ids, 10_000);
    for (const id of ids) {
      expect(done.get(id)).toMatchObject({ id, status: 'failed', error: { code: 'queue_timeout' } });
    }
    // The stream's client is told too: the SDK throws the error event's APIError.
    const error = await streamed;
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).error).toMatchObject({ code: 'queue_timeout' });
    expect(upstream.requests).toHaveLength(0);

    const rows = await usageOfAll(gateway.origin, admin, ids.map(requestIdOf));
    for (const id of ids) {
      expect(rows.find((row) => row.response_id === id)).toMatchObject({ status: 'failed', error_code: 'queue_timeout', cost_micros: 0 });
    }
  });
});
