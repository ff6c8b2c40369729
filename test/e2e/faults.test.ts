/** Upstream and process faults, end to end: web and worker processes, a loopback upstream, the openai SDK. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { type APIError } from 'openai';
import { Queue } from 'bullmq';
import { REQUEST_QUEUE } from '../../src/infra/redis/keys.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

const FAST_FAULTS = {
  RETRY_BASE_MS: '100',
  RETRY_MAX_ATTEMPTS: '3',
  RETRY_BUDGET_MS: '4000',
  UPSTREAM_HEADERS_TIMEOUT_MS: '300',
  UPSTREAM_BODY_TIMEOUT_MS: '2000',
  QUEUE_DEADLINE_MS: '1500',
  WORKER_LOCK_MS: '2000',
};
const hello = [{ role: 'user' as const, content: 'Say hello' }];

async function clientFor(gateway: GatewayUnderTest): Promise<OpenAI> {
  const { secret } = await gateway.issueKey('acme', 'app');
  return new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 });
}

describe('upstream faults', () => {
  let upstream: FakeUpstream;
  let backup: FakeUpstream;
  let gateway: GatewayUnderTest;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    backup = await startFakeUpstream();
    gateway = await startGateway({ catalog: testCatalog(upstream.url, backup.url), env: FAST_FAULTS });
    client = await clientFor(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    await Promise.all([upstream?.close(), backup?.close()]);
  });
  beforeEach(() => {
    upstream.reset();
    backup.reset();
  });

  it('retries a 500 and answers once', async () => {
    upstream.script([
      { kind: 'status', status: 500 },
      { kind: 'ok', text: 'second time lucky' },
    ]);
    const data = await client.chat.completions.create({ model: 'fake-gpt', messages: hello });
    expect(data.choices[0]?.message.content).toBe('second time lucky');
    expect(upstream.requests).toHaveLength(2);
  });

  it("waits the upstream's Retry-After on a 429", async () => {
    upstream.script([{ kind: 'status', status: 429, headers: { 'retry-after': '1' } }, { kind: 'ok' }]);
    const started = Date.now();
    await client.chat.completions.create({ model: 'fake-gpt', messages: hello });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(upstream.requests).toHaveLength(2);
  });

  it('answers 504 provider_timeout when the upstream hangs past the retry budget', async () => {
    upstream.script([{ kind: 'hang' }, { kind: 'hang' }, { kind: 'hang' }]);
    const error = await client.chat.completions.create({ model: 'fake-gpt', messages: hello }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ status: 504, code: 'provider_timeout', type: 'api_error' });
    expect(upstream.requests.length).toBeGreaterThanOrEqual(2);
  });

  it("does not retry the upstream's refusal of the request: 400 with the provider's message", async () => {
    upstream.script([{ kind: 'status', status: 400, body: { error: { message: 'bad thing', type: 'invalid_request_error' } } }]);
    const error = await client.chat.completions.create({ model: 'fake-gpt', messages: hello }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: 'provider_invalid_request', type: 'invalid_request_error' });
    expect((error as Error).message).toContain('bad thing');
    expect(upstream.requests).toHaveLength(1);
  });

  it('falls back to the next candidate of a tier and names it', async () => {
    upstream.script([
      { kind: 'status', status: 503 },
      { kind: 'status', status: 503 },
      { kind: 'status', status: 503 },
    ]);
    const data = await client.chat.completions.create({ model: 'svc-standard', messages: hello });
    expect(data.model).toBe('fake-backup');
    expect(upstream.requests).toHaveLength(3);
    expect(backup.requests[0]?.body).toMatchObject({ model: 'fake-backup-model' });
  });

  it('retries a stream that failed before its first token', async () => {
    upstream.script([
      { kind: 'status', status: 502 },
      { kind: 'ok', text: 'streamed fine', chunks: 2 },
    ]);
    const stream = await client.chat.completions.create({ model: 'fake-gpt', messages: hello, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('streamed fine');
    expect(upstream.requests).toHaveLength(2);
  });

  it('ends a stream broken after its first token with an error event, without retrying', async () => {
    upstream.script([{ kind: 'break-after-first-chunk' }, { kind: 'ok' }]);
    const stream = await client.chat.completions.create({ model: 'fake-gpt', messages: hello, stream: true });
    const received: string[] = [];
    const error = await (async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    expect(received).toEqual(['Hello']);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as APIError).error).toMatchObject({ code: 'provider_failed', type: 'api_error' });
    expect(upstream.requests).toHaveLength(1);
  });
});

describe('the retry budget', () => {
  let upstream: FakeUpstream;
  let gateway: GatewayUnderTest;

  // The case that was found: each attempt may wait 3 s for headers, the request 5 s in all. The first
  // attempt ends after 3 to 4 s (undici's timers are coarse), and the second gets only what is left.
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    gateway = await startGateway({
      catalog: testCatalog(upstream.url),
      env: { RETRY_BUDGET_MS: '5000', UPSTREAM_HEADERS_TIMEOUT_MS: '3000', RETRY_BASE_MS: '100', RETRY_MAX_ATTEMPTS: '5' },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('answers 504 within the budget and a second when the upstream hangs (it took 7.1 s)', async () => {
    upstream.answerByDefault({ kind: 'hang' });
    const client = await clientFor(gateway);
    const started = Date.now();
    const error = await client.chat.completions.create({ model: 'fake-gpt', messages: hello }).catch((e: unknown) => e);
    const took = Date.now() - started;
    expect(error).toMatchObject({ status: 504, code: 'provider_timeout' });
    expect(took).toBeLessThan(5000 + 1000);
    expect(upstream.requests).toHaveLength(2);
  });
});

describe('client disconnects', () => {
  let upstream: FakeUpstream;
  let gateway: GatewayUnderTest;
  let client: OpenAI;

  // Long upstream timeouts, so that only a cancellation can close the upstream connection in time.
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    gateway = await startGateway({ catalog: testCatalog(upstream.url), env: { UPSTREAM_HEADERS_TIMEOUT_MS: '60000', UPSTREAM_BODY_TIMEOUT_MS: '60000' } });
    client = await clientFor(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  it('a client that disconnects from a stream aborts the upstream request', async () => {
    upstream.script([{ kind: 'slow-stream', chunkDelayMs: 100, chunks: 100 }]);
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ model: 'fake-gpt', messages: hello, stream: true }, { signal: controller.signal });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) break;
    }
    controller.abort();
    await upstream.waitForClose(0, 1500);
    expect(upstream.requests[0]?.clientClosed).toBe(true);
  });

  it('a client that disconnects from a non-streamed request aborts the upstream request', async () => {
    upstream.script([{ kind: 'slow-stream', chunkDelayMs: 100, chunks: 100 }]);
    const controller = new AbortController();
    const pending = client.chat.completions.create({ model: 'fake-gpt', messages: hello }, { signal: controller.signal }).catch((e: unknown) => e);
    while (upstream.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError);
    await upstream.waitForClose(0, 1500);
  });
});

describe('no worker running', () => {
  let upstream: FakeUpstream;
  let gateway: GatewayUnderTest;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    gateway = await startGateway({ catalog: testCatalog(upstream.url), env: FAST_FAULTS, workers: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('answers 503 with Retry-After after the pickup deadline and removes the job', async () => {
    const client = await clientFor(gateway);
    const started = Date.now();
    const { response } = await client.chat.completions
      .create({ model: 'fake-gpt', messages: hello })
      .withResponse()
      .catch((e: unknown) => ({ response: e }));
    const error = response as APIError;
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ status: 503, code: 'queue_timeout' });
    expect(Number(error.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    const queue = new Queue(REQUEST_QUEUE, { connection: gateway.redis, prefix: gateway.keys.queuePrefix(gateway.keys.shardOf('acme')) });
    expect(await queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed')).toEqual({ waiting: 0, prioritized: 0, active: 0, delayed: 0 });
    await queue.close();
    expect(upstream.requests).toHaveLength(0);
  });

  it('removes a waiting job when its client disconnects', async () => {
    const client = await clientFor(gateway);
    const queue = new Queue(REQUEST_QUEUE, { connection: gateway.redis, prefix: gateway.keys.queuePrefix(gateway.keys.shardOf('acme')) });
    const controller = new AbortController();
    const pending = client.chat.completions.create({ model: 'fake-gpt', messages: hello }, { signal: controller.signal }).catch((e: unknown) => e);
    // A job within its tenant's fair share waits plainly; beyond it, in the prioritized set.
    const queued = async () => (await queue.getJobCounts('waiting', 'prioritized')) as { waiting: number; prioritized: number };
    const total = async () => {
      const counts = await queued();
      return counts.waiting + counts.prioritized;
    };
    while ((await total()) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    await pending;
    const deadline = Date.now() + 1000;
    while ((await total()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await total()).toBe(0);
    await queue.close();
  });
});

describe('the openai SDK retrying our 503', () => {
  let upstream: FakeUpstream;
  let gateway: GatewayUnderTest;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    gateway = await startGateway({ catalog: testCatalog(upstream.url), env: { ...FAST_FAULTS, QUEUE_DEADLINE_MS: '1000' }, workers: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('waits Retry-After after a 503 and succeeds once a worker runs', async () => {
    const { secret } = await gateway.issueKey('acme', 'app');
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 2 });
    const started = Date.now();
    const pending = client.chat.completions.create({ model: 'fake-gpt', messages: hello });
    // The first attempt meets no worker and gets 503 after the 1 s deadline; the SDK then waits Retry-After (1 s).
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(upstream.requests).toHaveLength(0);
    await gateway.startWorker();
    const data = await pending;
    expect(data.choices[0]?.message.content).toBe('Hello from the fake upstream.');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(upstream.requests).toHaveLength(1);
  });
});

describe('a worker killed with SIGKILL mid-job', () => {
  let upstream: FakeUpstream;
  let gateway: GatewayUnderTest;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    gateway = await startGateway({
      catalog: testCatalog(upstream.url),
      env: { ...FAST_FAULTS, UPSTREAM_HEADERS_TIMEOUT_MS: '30000', QUEUE_DEADLINE_MS: '20000' },
    });
    client = await clientFor(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  async function killWorkerWhen(condition: () => boolean): Promise<void> {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
    const victim = gateway.workers.shift();
    victim?.child.kill('SIGKILL');
    await victim?.exited;
    await gateway.startWorker();
  }

  it('a non-streamed job is recovered and answered by another worker', async () => {
    upstream.script([{ kind: 'hang' }, { kind: 'ok', text: 'recovered answer' }]);
    const pending = client.chat.completions.create({ model: 'fake-gpt', messages: hello });
    await killWorkerWhen(() => upstream.requests.length === 1);
    const data = await pending;
    expect(data.choices[0]?.message.content).toBe('recovered answer');
    expect(upstream.requests).toHaveLength(2);
  });

  it('a stream that had reached the client ends with an error instead of hanging or repeating', async () => {
    upstream.script([{ kind: 'slow-stream', chunkDelayMs: 200, chunks: 100 }]);
    const stream = await client.chat.completions.create({ model: 'fake-gpt', messages: hello, stream: true });
    const received: string[] = [];
    // Assigned inside the async function below, which control-flow analysis does not follow: without the cast it stays `null` to the checker.
    let killed = null as Promise<void> | null;
    const error = await (async () => {
      for await (const chunk of stream) {
        received.push(chunk.choices[0]?.delta.content ?? '');
        killed ??= killWorkerWhen(() => true);
      }
    })().catch((e: unknown) => e);
    await killed;
    expect(received.length).toBeGreaterThanOrEqual(1);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    // For the client the provider call broke off: 502 provider_failed, as for any mid-stream failure.
    expect((error as APIError).error).toMatchObject({ code: 'provider_failed', type: 'api_error' });
    expect((error as Error).message).toMatch(/stream was interrupted/);
    expect(upstream.requests).toHaveLength(1);
  });
});
