/**
 * Background responses whose Redis restarted without its data: the store still says they are
 * queued or running, Redis knows nothing of them and their jobs are gone. A worker's reaper
 * (every RESPONSES_REAP_INTERVAL_MS) ends each failed with `response_lost` within twice that
 * interval, and nothing runs them afterwards. Web and worker processes against a private
 * redis-server the test restarts, the openai SDK as client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import OpenAI, { APIError } from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { startGateway, stopProcess, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { freePort } from '../helpers/free-port.ts';
import { startRedisServer } from '../helpers/restartable-redis.ts';
import { eventually } from '../helpers/http.ts';
import { settleAll } from '../helpers/background-responses.ts';

const REAP_INTERVAL_MS = 500;
/** The documented bound (twice the interval), with room for the polls and a loaded machine. */
const REAP_BOUND_MS = 2 * REAP_INTERVAL_MS + 1500;

let port: number;
let redisServer: ChildProcess;
let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let client: OpenAI;

/** Kills the private Redis and starts an empty one on the same port. */
async function restartRedisEmpty(): Promise<void> {
  redisServer.kill('SIGKILL');
  await once(redisServer, 'exit');
  redisServer = await startRedisServer(port);
}

beforeAll(async () => {
  port = await freePort();
  redisServer = await startRedisServer(port);
  upstream = await startFakeUpstream();
  // No worker at first: the jobs wait in the queue; one job per request, a running one holds the only slot.
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    workers: 0,
    env: {
      REDIS_URL: `redis://127.0.0.1:${port}`,
      RESPONSES_REAP_INTERVAL_MS: String(REAP_INTERVAL_MS),
      QUEUE_BATCH_MAX: '1',
      WORKER_CONCURRENCY: '1',
      RETRY_MAX_ATTEMPTS: '1',
      // The worker holding a hung request hands it back at once when the suite ends.
      SHUTDOWN_GRACE_MS: '500',
    },
  });
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('acme', 'app')).secret, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  redisServer?.kill('SIGKILL');
});

/** Opens a background stream and follows it to its end in the background; resolves with the response id once it opened. */
async function openStream(input: string): Promise<{ id: string; ended: Promise<unknown> }> {
  const stream = await client.responses.create({ model: 'fake-gpt', input, background: true, stream: true });
  const iterator = stream[Symbol.asyncIterator]();
  const first = (await iterator.next()).value as ResponseStreamEvent;
  if (first.type !== 'response.queued') throw new Error(`the stream opened with ${first.type}`);
  const ended = (async () => {
    while (!(await iterator.next()).done);
  })().catch((error: unknown) => error);
  return { id: first.response.id, ended };
}

async function storedStatus(id: string): Promise<string | undefined> {
  return (await gateway.repository.responses.get('acme', id))?.status;
}

describe('background responses lost with Redis', () => {
  it('queued ones end failed with response_lost within twice the reap interval of a worker starting, and it never runs them', async () => {
    const polled = await Promise.all(
      Array.from({ length: 8 }, (_, i) => client.responses.create({ model: 'fake-gpt', input: `queued ${i}`, background: true })),
    );
    const streams = await Promise.all([0, 1].map((i) => openStream(`queued stream ${i}`)));
    const ids = [...polled.map((response) => response.id), ...streams.map((stream) => stream.id)];
    for (const id of ids) expect(await storedStatus(id)).toBe('queued');

    await restartRedisEmpty();
    // Redis has forgotten them; the store still holds them queued, and so does a poll (once the web process is back on Redis).
    await eventually(
      async () => (await client.responses.retrieve(ids[0] as string).catch(() => null))?.status === 'queued',
      5000,
      'a poll answered from the store',
    );
    const worker = await gateway.startWorker();
    const readyAt = Date.now();
    const done = await settleAll(client, ids, REAP_BOUND_MS);
    const took = Date.now() - readyAt;
    for (const id of ids) expect(done.get(id)).toMatchObject({ id, status: 'failed', background: true, error: { code: 'response_lost' } });
    for (const id of ids) expect(await storedStatus(id)).toBe('failed');
    expect(took).toBeLessThan(REAP_BOUND_MS);
    // The streams' clients were not left waiting either: their stream ended with the error event of a request lost with Redis.
    for (const stream of streams) {
      const error = await stream.ended;
      expect(error).toBeInstanceOf(APIError);
      expect((error as APIError).error).toMatchObject({ code: expect.stringMatching(/^(service_unavailable|response_lost)$/) });
    }

    // Nothing brings them back or runs them: not this worker after a few more rounds, nor one started now.
    await stopProcess(worker);
    gateway.workers.splice(gateway.workers.indexOf(worker), 1);
    await gateway.startWorker();
    await new Promise((resolve) => setTimeout(resolve, 3 * REAP_INTERVAL_MS));
    for (const id of ids) expect((await client.responses.retrieve(id)).status).toBe('failed');
    expect(upstream.requests).toHaveLength(0);
    expect(worker.output()).toContain('background responses lost with Redis ended failed');
  });

  it('with a worker running, a running one and those queued behind it end failed with response_lost within twice the interval of the restart', async () => {
    // One worker, running the first response and holding its only slot.
    for (const worker of gateway.workers.splice(0)) await stopProcess(worker);
    await gateway.startWorker();
    upstream.reset();
    upstream.script([{ kind: 'hang' }]);
    const running = await client.responses.create({ model: 'fake-gpt', input: 'running', background: true });
    await eventually(async () => upstream.requests.length === 1, 5000, 'the first response at the upstream');
    const queued = await Promise.all([0, 1, 2].map((i) => client.responses.create({ model: 'fake-gpt', input: `behind ${i}`, background: true })));
    const ids = [running.id, ...queued.map((response) => response.id)];
    expect((await client.responses.retrieve(running.id)).status).toBe('in_progress');
    for (const response of queued) expect((await client.responses.retrieve(response.id)).status).toBe('queued');

    // Older than one interval, as the reaper requires of what it fails (a younger one's state may be on its way).
    await new Promise((resolve) => setTimeout(resolve, REAP_INTERVAL_MS));
    await restartRedisEmpty();
    const restartedAt = Date.now();
    const done = await settleAll(client, ids, REAP_BOUND_MS);
    expect(Date.now() - restartedAt).toBeLessThan(REAP_BOUND_MS);
    for (const id of ids) expect(done.get(id)).toMatchObject({ status: 'failed', error: { code: 'response_lost' } });
    await new Promise((resolve) => setTimeout(resolve, 3 * REAP_INTERVAL_MS));
    for (const id of ids) expect((await client.responses.retrieve(id)).status).toBe('failed');
    expect(upstream.requests).toHaveLength(1);
  });

  it('a lost response stays failed when its worker finishes it afterwards: charged for what it made, never completed', async () => {
    for (const worker of gateway.workers.splice(0)) await stopProcess(worker);
    await gateway.startWorker();
    upstream.reset();
    // Answered 3 s after it is asked, well after the reaper failed it.
    upstream.script([{ kind: 'slow-stream', chunkDelayMs: 300, chunks: 10 }]);
    const late = await client.responses.create({ model: 'fake-gpt', input: 'late', background: true });
    await eventually(async () => upstream.requests.length === 1, 5000, 'the response at the upstream');
    await new Promise((resolve) => setTimeout(resolve, REAP_INTERVAL_MS));
    await restartRedisEmpty();
    const failed = await settleAll(client, [late.id], REAP_BOUND_MS);
    expect(failed.get(late.id)).toMatchObject({ status: 'failed', error: { code: 'response_lost' } });
    // The worker's end: its usage record reaches the store, the response stays failed there and in Redis.
    const requestId = late.id.slice('resp_'.length);
    await eventually(
      async () =>
        (await gateway.repository.usage.list({ tenantId: 'acme', since: new Date(0), until: new Date(Date.now() + 60_000) }, 100, null)).some(
          (record) => record.requestId === requestId,
        ),
      10_000,
      'the usage record of the late response',
    );
    expect((await client.responses.retrieve(late.id)).status).toBe('failed');
    expect((await gateway.repository.responses.get('acme', late.id))?.status).toBe('failed');
  });
});
