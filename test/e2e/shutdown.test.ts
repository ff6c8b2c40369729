/** SIGTERM drains: the worker finishes its running job, the web process finishes its open stream. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, stopProcess, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let client: OpenAI;
const hello = [{ role: 'user' as const, content: 'Say hello' }];
const SHORT_GRACE_MS = 1_000;
/** What a stop may take past its grace period (the process's own margin is 5 s). */
const STOP_MARGIN_MS = 6_000;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({ catalog: testCatalog(upstream.url), env: { SHUTDOWN_GRACE_MS: '10000' } });
  const { secret } = await gateway.issueKey('acme', 'app');
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('graceful shutdown', () => {
  it('a worker told to stop finishes its running job first', async () => {
    upstream.script([{ kind: 'slow-stream', chunkDelayMs: 100, chunks: 10 }]);
    const pending = client.chat.completions.create({ model: 'fake-gpt', messages: hello });
    while (upstream.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const worker = gateway.workers.shift();
    worker?.child.kill('SIGTERM');
    const data = await pending;
    expect(data.choices[0]?.message.content).toBe('w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 ');
    expect(await worker?.exited).toBe(0);
    expect(upstream.requests).toHaveLength(1);
    await gateway.startWorker();
  });

  it('a worker whose running job outlasts the grace period hands it back and exits in time', async () => {
    for (const running of gateway.workers.splice(0)) await stopProcess(running);
    const worker = await gateway.startWorker({ SHUTDOWN_GRACE_MS: String(SHORT_GRACE_MS) });
    upstream.reset();
    upstream.script([{ kind: 'hang' }]);
    const abandoned = new AbortController();
    const pending = client.chat.completions.create({ model: 'fake-gpt', messages: hello }, { signal: abandoned.signal }).catch(() => undefined);
    while (upstream.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const since = Date.now();
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(Date.now() - since).toBeLessThan(SHORT_GRACE_MS + STOP_MARGIN_MS);
    expect(worker.output()).toContain('grace period over; handing running jobs back to the queue');
    abandoned.abort();
    await pending;
    gateway.workers.splice(gateway.workers.indexOf(worker), 1);
    await gateway.startWorker();
  });

  it('a web process told to stop finishes its open stream, then exits', async () => {
    upstream.reset();
    upstream.script([{ kind: 'slow-stream', chunkDelayMs: 100, chunks: 15 }]);
    const stream = await client.chat.completions.create({ model: 'fake-gpt', messages: hello, stream: true });
    let text = '';
    for await (const chunk of stream) {
      if (text === '') gateway.web.child.kill('SIGTERM');
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe(Array.from({ length: 15 }, (_, i) => `w${i} `).join(''));
    expect(await gateway.web.exited).toBe(0);
    const refused = await fetch(`${gateway.origin}/healthz`).then(
      () => false,
      () => true,
    );
    expect(refused).toBe(true);
  });
});
