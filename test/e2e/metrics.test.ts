/**
 * Prometheus metrics of web and worker processes, scraped from their own listeners after real
 * traffic through the openai SDK: the counters equal the requests sent, the histograms saw each
 * one, retries and fallbacks are counted, the tenant label is bounded, and /readyz names each
 * dependency with its state (the queue's from the workers' heartbeat).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { opsUrl, startGateway, stopProcess, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { drain } from '../helpers/sdk-calls.ts';
import { eventually } from '../helpers/http.ts';

const hello = [{ role: 'user' as const, content: 'Say hello' }];
const USAGE = { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 };

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let acme: OpenAI;
let globex: OpenAI;

/** One series of a scrape: its labels and value. */
interface Sample {
  labels: Record<string, string>;
  value: number;
}

function parse(text: string): Map<string, Sample[]> {
  const series = new Map<string, Sample[]>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] as string] = pair[2] as string;
    const samples = series.get(match[1] as string) ?? [];
    samples.push({ labels, value: Number(match[3]) });
    series.set(match[1] as string, samples);
  }
  return series;
}

async function scrape(origin: string): Promise<Map<string, Sample[]>> {
  const response = await fetch(`${origin}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return parse(await response.text());
}

/** The sum of a metric's series whose labels include `labels`. */
function total(scraped: Map<string, Sample[]>, name: string, labels: Record<string, string> = {}): number {
  return (scraped.get(name) ?? [])
    .filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}

const webOps = () => opsUrl(gateway.web);
const workerOps = () => opsUrl(gateway.workers[0] as NonNullable<GatewayUnderTest['workers'][number]>);

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    env: { METRICS_TENANTS: 'acme', RETRY_BASE_MS: '20', RETRY_MAX_ATTEMPTS: '2', READY_WORKER_WINDOW_MS: '1500' },
  });
  acme = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('acme', 'app')).secret, maxRetries: 0 });
  globex = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('globex', 'app')).secret, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('metrics of web and worker', () => {
  it('count every request the web answered and every completion the worker ran, with their tokens, cost and timings', async () => {
    upstream.answerByDefault({ kind: 'ok', text: 'one two three four five', usage: USAGE });
    for (let i = 0; i < 3; i++) await acme.chat.completions.create({ model: 'fake-gpt', messages: hello });
    for (let i = 0; i < 2; i++) await drain(await acme.chat.completions.create({ model: 'fake-gpt', messages: hello, stream: true }));
    await globex.chat.completions.create({ model: 'fake-gpt', messages: hello });
    const badKey = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'sk-not-a-key', maxRetries: 0 });
    await expect(badKey.chat.completions.create({ model: 'fake-gpt', messages: hello })).rejects.toMatchObject({ status: 401 });
    await expect(acme.chat.completions.create({ model: 'no-such-model', messages: hello })).rejects.toMatchObject({ status: 404 });

    const route = '/v1/chat/completions';
    await eventually(async () => total(await scrape(workerOps()), 'gateway_completions_total') === 6, 5000, 'the worker counted six completions');
    const web = await scrape(webOps());
    expect(total(web, 'gateway_http_requests_total', { route, status_class: '2xx', code: 'none', model: 'fake-gpt', tenant: 'acme' })).toBe(5);
    // A tenant not named in METRICS_TENANTS is counted with the others, never under its own id.
    expect(total(web, 'gateway_http_requests_total', { route, status_class: '2xx', tenant: 'other' })).toBe(1);
    expect((web.get('gateway_http_requests_total') ?? []).some((sample) => sample.labels.tenant === 'globex')).toBe(false);
    expect(total(web, 'gateway_http_requests_total', { route, status_class: '4xx', code: 'invalid_api_key', tenant: 'none' })).toBe(1);
    // A model the catalog does not know is not a label value of its own.
    expect(total(web, 'gateway_http_requests_total', { route, status_class: '4xx', code: 'model_not_found', model: 'other' })).toBe(1);
    expect(total(web, 'gateway_http_request_duration_seconds_count', { route, status_class: '2xx' })).toBe(6);
    expect(total(web, 'gateway_web_overhead_seconds_count', { route, phase: 'before_enqueue' })).toBe(6);
    expect(total(web, 'gateway_web_overhead_seconds_count', { route, phase: 'after_last_event' })).toBe(6);
    expect(total(web, 'gateway_web_overhead_seconds_sum', { route, phase: 'before_enqueue' })).toBeGreaterThan(0);
    expect(total(web, 'gateway_nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);

    const worker = await scrape(workerOps());
    const served = { operation: 'chat', model: 'fake-gpt', provider: 'openai-compatible', status: 'succeeded', code: 'none' };
    expect(total(worker, 'gateway_completions_total', { ...served, tenant: 'acme' })).toBe(5);
    expect(total(worker, 'gateway_completions_total', { ...served, tenant: 'other' })).toBe(1);
    expect(total(worker, 'gateway_tokens_total', { model: 'fake-gpt', direction: 'input' })).toBe(6 * USAGE.prompt_tokens);
    expect(total(worker, 'gateway_tokens_total', { model: 'fake-gpt', direction: 'output', tenant: 'acme' })).toBe(5 * USAGE.completion_tokens);
    // Prices of 1 and 2 per million tokens.
    expect(total(worker, 'gateway_cost_total', { model: 'fake-gpt' })).toBeCloseTo((6 * (USAGE.prompt_tokens * 1 + USAGE.completion_tokens * 2)) / 1e6, 12);
    expect(total(worker, 'gateway_queue_wait_seconds_count', { operation: 'chat' })).toBe(6);
    expect(total(worker, 'gateway_time_to_first_token_seconds_count', { operation: 'chat', model: 'fake-gpt' })).toBe(2);
    expect(total(worker, 'gateway_request_duration_seconds_count', { operation: 'chat', model: 'fake-gpt', status: 'succeeded' })).toBe(6);
    expect(total(worker, 'gateway_upstream_attempt_duration_seconds_count', { provider: 'openai-compatible', model: 'fake-gpt', outcome: 'ok' })).toBe(6);
    expect(total(worker, 'gateway_worker_running_requests')).toBe(0);
  });

  it('count retries, fallbacks and failed attempts by kind', async () => {
    const before = await scrape(workerOps());
    const failed = { kind: 'status' as const, status: 503, body: { error: { message: 'busy' } } };
    upstream.reset();
    upstream.script([failed, { kind: 'ok', text: 'after a retry', usage: USAGE }]);
    await acme.chat.completions.create({ model: 'fake-gpt', messages: hello });
    upstream.script([failed, failed, { kind: 'ok', text: 'from the backup', usage: USAGE }]);
    expect((await acme.chat.completions.create({ model: 'svc-standard', messages: hello })).model).toBe('fake-backup');

    const after = await scrape(workerOps());
    const delta = (name: string, labels: Record<string, string>) => total(after, name, labels) - total(before, name, labels);
    expect(delta('gateway_upstream_retries_total', { provider: 'openai-compatible', model: 'fake-gpt' })).toBe(2);
    expect(delta('gateway_fallbacks_total', { from_model: 'fake-gpt', to_model: 'fake-backup' })).toBe(1);
    expect(delta('gateway_upstream_attempt_duration_seconds_count', { model: 'fake-gpt', outcome: 'server_error' })).toBe(3);
    expect(delta('gateway_upstream_attempt_duration_seconds_count', { model: 'fake-backup', outcome: 'ok' })).toBe(1);
    expect(delta('gateway_completions_total', { model: 'fake-backup', status: 'succeeded' })).toBe(1);
  });

  it('count a stream whose client went away, and a stream that failed after its first event by its error code', async () => {
    const route = '/v1/chat/completions';
    const counted = async (labels: Record<string, string>) => total(await scrape(webOps()), 'gateway_http_requests_total', { route, ...labels });
    const [gone, failed] = [await counted({ status_class: '2xx', code: 'none' }), await counted({ status_class: '2xx', code: 'provider_failed' })];
    upstream.reset();
    upstream.script([{ kind: 'slow-stream', chunkDelayMs: 300, chunks: 20 }]);
    const controller = new AbortController();
    const stream = await acme.chat.completions.create({ model: 'fake-gpt', messages: hello, stream: true }, { signal: controller.signal });
    for await (const _chunk of stream) break;
    controller.abort();
    await eventually(async () => (await counted({ status_class: '2xx', code: 'none' })) === gone + 1, 5000, 'the abandoned stream counted');

    upstream.script([{ kind: 'break-after-first-chunk' }]);
    await expect(drain(await acme.chat.completions.create({ model: 'fake-gpt', messages: hello, stream: true }))).rejects.toThrow();
    await eventually(
      async () => (await counted({ status_class: '2xx', code: 'provider_failed' })) === failed + 1,
      5000,
      'the failed stream counted by its code',
    );
  });

  it('read the queue, the outbox and the round trips to Redis and the store at scrape time, in both processes', async () => {
    for (const origin of [webOps(), workerOps()]) {
      const scraped = await scrape(origin);
      const shards = Array.from({ length: gateway.keys.queueShards }, (_, shard) => String(shard));
      expect(new Set(scraped.get('gateway_queue_jobs')?.map((sample) => `${sample.labels.shard}/${sample.labels.state}`))).toEqual(
        new Set(shards.flatMap((shard) => ['waiting', 'prioritized', 'delayed', 'active'].map((state) => `${shard}/${state}`))),
      );
      expect(
        scraped
          .get('gateway_outbox_backlog')
          ?.map((sample) => sample.labels.shard)
          .sort(),
      ).toEqual(shards.sort());
      expect(total(scraped, 'gateway_dependency_round_trip_seconds', { dependency: 'redis' })).toBeGreaterThan(0);
      expect(total(scraped, 'gateway_dependency_round_trip_seconds', { dependency: 'store' })).toBeGreaterThan(0);
    }
  });

  it('are served on the operations listener only, never on the public port', async () => {
    expect((await fetch(`${gateway.origin}/metrics`)).status).toBe(404);
    expect(new URL(webOps()).port).not.toBe(new URL(gateway.origin).port);
  });
});

describe('/readyz', () => {
  it('names each dependency with its state; without a worker the web tier is degraded, not taken out of rotation', async () => {
    const ready = (await (await fetch(`${gateway.origin}/readyz`)).json()) as { checks: { queue: { worker_seen_ms_ago: number } } };
    expect(ready).toMatchObject({ status: 'ready', checks: { redis: { state: 'up' }, store: { state: 'up' }, queue: { state: 'up' } } });
    expect(ready.checks.queue.worker_seen_ms_ago).toBeLessThan(1500);
    expect(await (await fetch(`${workerOps()}/readyz`)).json()).toMatchObject({ status: 'ready', checks: { redis: { state: 'up' }, store: { state: 'up' } } });

    await stopProcess(gateway.workers.shift() as NonNullable<GatewayUnderTest['workers'][number]>);
    await eventually(
      async () => ((await (await fetch(`${gateway.origin}/readyz`)).json()) as { status: string }).status === 'degraded',
      4000,
      'the queue reported down',
    );
    const degraded = await fetch(`${webOps()}/readyz`);
    expect(degraded.status).toBe(200);
    expect(await degraded.json()).toMatchObject({
      status: 'degraded',
      checks: { redis: { state: 'up' }, queue: { state: 'down', error: expect.stringContaining('no worker') } },
    });

    await gateway.startWorker();
    await eventually(
      async () => ((await (await fetch(`${gateway.origin}/readyz`)).json()) as { status: string }).status === 'ready',
      4000,
      'the queue back up',
    );
  });
});
