/**
 * Several requests in one queue job (src/infra/queue/job-batcher.ts), end to end: each keeps its own
 * answer, cancellation, settlement and usage record. A gather window makes the sharing certain.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { Queue } from 'bullmq';
import { REQUEST_QUEUE } from '../../src/infra/redis/keys.ts';
import type { JobBatch } from '../../src/infra/queue/job.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayProcess, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually } from '../helpers/http.ts';

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let queue: Queue<JobBatch>;
let worker: GatewayProcess | null = null;
let tenantNumber = 0;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  // No worker until a test starts one, so that the job waits while its clients come and go.
  gateway = await startGateway({ catalog: testCatalog(upstream.url), env: { QUEUE_BATCH_WINDOW_MS: '300', QUEUE_DEADLINE_MS: '20000' }, workers: 0 });
});

afterAll(async () => {
  await queue?.close();
  await gateway?.close();
  await upstream?.close();
});

beforeEach(async () => {
  worker?.child.kill('SIGTERM');
  await worker?.exited;
  worker = null;
  upstream.reset();
});

async function tenant(): Promise<{ id: string; app: OpenAI; developer: string }> {
  const id = `shared${++tenantNumber}`;
  const app = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey(id, 'app')).secret, maxRetries: 0 });
  queue ??= new Queue<JobBatch>(REQUEST_QUEUE, { connection: gateway.redis, prefix: gateway.keys.queuePrefix(gateway.keys.shardOf(id)) });
  return { id, app, developer: (await gateway.issueKey(id, 'developer')).secret };
}

async function waitingJobs(tenantId: string): Promise<string[][]> {
  const shardQueue = new Queue<JobBatch>(REQUEST_QUEUE, { connection: gateway.redis, prefix: gateway.keys.queuePrefix(gateway.keys.shardOf(tenantId)) });
  const jobs = await shardQueue.getJobs(['waiting', 'prioritized']);
  await shardQueue.close();
  return jobs.map((job) => job.data.requests.map((request) => request.requestId));
}

function ask(client: OpenAI, signal?: AbortSignal) {
  return client.chat.completions.create({ model: 'fake-gpt', messages: [{ role: 'user', content: 'hi' }] }, { signal });
}

describe('requests sharing a job', () => {
  it('one client going away while the job waits: the others are answered, it is settled as cancelled and never sent upstream', async () => {
    const { id, app, developer } = await tenant();
    const leaving = new AbortController();
    const staying = [ask(app), ask(app)];
    const left = ask(app, leaving.signal).catch((error: unknown) => error);
    await eventually(async () => (await waitingJobs(id)).some((job) => job.length === 3), 5_000, 'one job of three requests');
    leaving.abort();
    expect(await left).toBeInstanceOf(Error);
    // The web tier marks the request cancelled on its shard; a worker that takes the job later reads the mark.
    await new Promise((resolve) => setTimeout(resolve, 300));
    worker = await gateway.startWorker();
    const answers = await Promise.all(staying);
    expect(answers.map((answer) => answer.choices[0]?.message.content)).toEqual(['Hello from the fake upstream.', 'Hello from the fake upstream.']);
    expect(upstream.requests).toHaveLength(2);
    await eventually(
      async () => (await call(gateway.origin, developer, 'GET', '/v1/usage?since=2000-01-01')).body.data.length === 3,
      10_000,
      'three usage records',
    );
    const records = (await call(gateway.origin, developer, 'GET', '/v1/usage?since=2000-01-01')).body.data as Array<{ status: string; cost_micros: number }>;
    expect(records.map((record) => record.status).sort()).toEqual(['cancelled', 'succeeded', 'succeeded']);
    expect(records.find((record) => record.status === 'cancelled')?.cost_micros).toBe(0);
    expect(await gateway.redis.zcard(gateway.keys.outstanding(id))).toBe(0);
  });

  it('every client going away while the job waits: the job is removed, the reservations freed, nothing recorded or sent', async () => {
    const { id, app, developer } = await tenant();
    const controllers = [new AbortController(), new AbortController()];
    const gone = controllers.map((controller) => ask(app, controller.signal).catch((error: unknown) => error));
    await eventually(async () => (await waitingJobs(id)).some((job) => job.length === 2), 5_000, 'one job of two requests');
    expect(await gateway.redis.zcard(gateway.keys.outstanding(id))).toBe(2);
    for (const controller of controllers) controller.abort();
    await Promise.all(gone);
    await eventually(async () => (await waitingJobs(id)).length === 0, 5_000, 'the job removed');
    await eventually(async () => (await gateway.redis.zcard(gateway.keys.outstanding(id))) === 0, 5_000, 'reservations freed');
    worker = await gateway.startWorker();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(upstream.requests).toHaveLength(0);
    expect((await call(gateway.origin, developer, 'GET', '/v1/usage?since=2000-01-01')).body.data).toEqual([]);
  });
});
