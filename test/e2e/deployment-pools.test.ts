/**
 * Deployment pools and circuit breakers, end to end: one web and two worker processes, a loopback
 * fake upstream per deployment, the openai SDK and plain fetch as clients.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { type APIError } from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { opsUrl, startGateway, type GatewayProcess, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import type { WrittenCatalog } from '../../src/domain/catalog/schema.ts';
import { requestIdOf, usageRecordOf } from '../helpers/sdk-calls.ts';

const hello = [{ role: 'user' as const, content: 'Say hello' }];
const ALIAS = { context_window: 8192, max_output_tokens: 1024, input_price_per_mtok: 1, output_price_per_mtok: 2 };
const NAMES = ['east', 'west', 'flakyA', 'flakyB', 'doomed', 'steady', 'limited', 'hasty', 'quotaA', 'quotaB', 'busyA', 'busyB', 'latA', 'latB'] as const;
type Name = (typeof NAMES)[number];

function deployment(id: string, upstream: FakeUpstream, extra: Record<string, unknown> = {}) {
  return { id, provider: 'openai-compatible' as const, upstream_model: `${id}-model`, base_url: upstream.url, ...extra };
}

function catalog(up: Record<Name, FakeUpstream>): WrittenCatalog {
  return {
    models: {
      weighted: {
        ...ALIAS,
        deployments: [deployment('east', up.east, { weight: 3 }), deployment('west', up.west)],
        breaker: { min_calls: 1_000_000 },
      },
      flaky: {
        ...ALIAS,
        deployments: [deployment('flaky-a', up.flakyA), deployment('flaky-b', up.flakyB)],
        breaker: { failure_rate: 0.5, min_calls: 4, window_s: 60, cooldown_s: 3 },
      },
      doomed: { ...ALIAS, deployments: [deployment('doomed-1', up.doomed)], breaker: { min_calls: 2, cooldown_s: 30 } },
      steady: { ...ALIAS, provider: 'openai-compatible', upstream_model: 'steady-model', base_url: up.steady.url },
      quota: {
        ...ALIAS,
        deployments: [deployment('quota-a', up.quotaA, { weight: 100, rpm: 5 }), deployment('quota-b', up.quotaB)],
        breaker: { min_calls: 1_000_000 },
      },
      busy: {
        ...ALIAS,
        routing: 'least-busy',
        deployments: [deployment('busy-a', up.busyA), deployment('busy-b', up.busyB)],
        breaker: { min_calls: 1_000_000 },
      },
      quick: {
        ...ALIAS,
        routing: 'latency',
        deployments: [deployment('lat-a', up.latA), deployment('lat-b', up.latB)],
        breaker: { min_calls: 1_000_000 },
      },
      hasty: {
        ...ALIAS,
        provider: 'openai-compatible',
        upstream_model: 'hasty-model',
        base_url: up.hasty.url,
        timeouts: { first_token_ms: 200 },
        breaker: { min_calls: 1_000_000 },
      },
      narrow: {
        ...ALIAS,
        context_window: 64,
        context_window_fallback: 'steady',
        provider: 'openai-compatible',
        upstream_model: 'narrow-model',
        base_url: up.steady.url,
      },
      limited: { ...ALIAS, deployments: [deployment('limited-1', up.limited)], breaker: { min_calls: 1_000_000 } },
    },
    tiers: { 'svc-flash': ['steady'], 'svc-standard': ['steady'], 'svc-pro': ['doomed', 'steady'] },
  };
}

let up: Record<Name, FakeUpstream>;
let gateway: GatewayUnderTest;
let client: OpenAI;
let secret: string;

beforeAll(async () => {
  up = Object.fromEntries(await Promise.all(NAMES.map(async (name) => [name, await startFakeUpstream()] as const))) as Record<Name, FakeUpstream>;
  gateway = await startGateway({
    catalog: catalog(up),
    workers: 2,
    env: {
      RETRY_BASE_MS: '50',
      RETRY_MAX_ATTEMPTS: '3',
      RETRY_BUDGET_MS: '4000',
      UPSTREAM_HEADERS_TIMEOUT_MS: '2000',
      WORKER_CONCURRENCY: '64',
      // 10,000 requests in seconds: no rate limit of the tenant or the key in the way.
      TENANT_RPM: '0',
      TENANT_TPM: '0',
      KEY_RPM: '0',
      KEY_TPM: '0',
    },
  });
  secret = (await gateway.issueKey('acme', 'app')).secret;
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 });
}, 60_000);
afterAll(async () => {
  await gateway?.close();
  await Promise.all(Object.values(up ?? {}).map((upstream) => upstream.close()));
});
beforeEach(() => {
  for (const name of NAMES) {
    up[name].reset();
    up[name].answerByDefault({ kind: 'ok', text: `from ${name}` });
  }
});

/** Sends `count` completions for `model`, `concurrency` at a time; each answer's deployment header and text. */
async function burst(model: string, count: number, concurrency: number): Promise<Array<{ status: number; deployment: string | null; text: string }>> {
  const answers: Array<{ status: number; deployment: string | null; text: string }> = [];
  let next = 0;
  const body = JSON.stringify({ model, messages: hello });
  const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        const response = await fetch(`${gateway.baseURL}/chat/completions`, { method: 'POST', headers, body });
        const json = (await response.json()) as { choices?: Array<{ message: { content: string } }> };
        answers.push({ status: response.status, deployment: response.headers.get('x-gateway-deployment'), text: json.choices?.[0]?.message.content ?? '' });
      }
    }),
  );
  return answers;
}

async function metricsOf(worker: GatewayProcess): Promise<string> {
  return (await fetch(`${opsUrl(worker)}/metrics`)).text();
}

async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a pooled alias', () => {
  it('spreads 10,000 requests over its deployments by weight (±5 %), across two workers, naming each in the header', async () => {
    const answers = await burst('weighted', 10_000, 64);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    for (const answer of answers) expect(answer.text).toBe(answer.deployment === 'east' ? 'from east' : 'from west');
    const east = answers.filter((answer) => answer.deployment === 'east').length;
    expect(east).toBeGreaterThanOrEqual(7_500 * 0.95);
    expect(east).toBeLessThanOrEqual(7_500 * 1.05);
    expect(up.east.requests.length + up.west.requests.length).toBe(10_000);
    expect(up.east.requests[0]?.body).toMatchObject({ model: 'east-model' });
    // Both workers served.
    for (const worker of gateway.workers) {
      const served = [...(await metricsOf(worker)).matchAll(/gateway_completions_total\{[^}]*model="weighted"[^}]*\} (\d+)/g)];
      expect(served.reduce((sum, match) => sum + Number(match[1]), 0)).toBeGreaterThan(0);
    }
  }, 120_000);

  it('names the deployment in the usage record, and in the header of a stream', async () => {
    const { data: completion, response } = await client.chat.completions.create({ model: 'weighted', messages: hello }).withResponse();
    const deployment = response.headers.get('x-gateway-deployment');
    expect(['east', 'west']).toContain(deployment);
    const reader = (await gateway.issueKey('acme', 'developer')).secret;
    expect(await usageRecordOf(gateway, reader, requestIdOf(completion))).toMatchObject({ model: 'weighted', deployment });
    const streamed = await client.chat.completions.create({ model: 'weighted', messages: hello, stream: true }).withResponse();
    expect(['east', 'west']).toContain(streamed.response.headers.get('x-gateway-deployment'));
    let text = '';
    for await (const chunk of streamed.data) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(`from ${streamed.response.headers.get('x-gateway-deployment')}`);
  });

  it('names the alias as the deployment of a model written as one target', async () => {
    const { response } = await client.chat.completions.create({ model: 'steady', messages: hello }).withResponse();
    expect(response.headers.get('x-gateway-deployment')).toBe('steady');
  });
});

describe('circuit breakers', () => {
  it('open on failures, move traffic, let exactly one probe through, double the cooldown when it fails, and close when one succeeds', async () => {
    up.flakyA.answerByDefault({ kind: 'status', status: 503 });
    // Every request succeeds: a retry goes at once to the other deployment.
    const first = await burst('flaky', 40, 1);
    expect(first.every((answer) => answer.status === 200 && answer.deployment === 'flaky-b')).toBe(true);
    // Four calls in the window, all failed: open, and no more calls.
    expect(up.flakyA.requests).toHaveLength(4);
    for (const worker of gateway.workers) {
      await eventually(
        async () => (await metricsOf(worker)).includes('gateway_circuit_state{alias="flaky",deployment="flaky-a"} 1'),
        'the open state in each worker',
      );
      const ready = (await (await fetch(`${opsUrl(worker)}/readyz`)).json()) as { status: string; checks: { circuits: { unavailable: unknown[] } } };
      expect(ready.status).toBe('ready');
      expect(ready.checks.circuits.unavailable).toEqual([{ alias: 'flaky', deployment: 'flaky-a', state: 'open', reopens_at: expect.any(String) }]);
    }
    // The cooldown (3 s) ends: of twenty requests at once, across both workers, one probes; it fails.
    await sleep(3_200);
    const probing = await burst('flaky', 20, 20);
    expect(probing.every((answer) => answer.status === 200)).toBe(true);
    expect(up.flakyA.requests).toHaveLength(5);
    // Reopened for twice the cooldown: nothing goes at 3 s, one probe after 6 s, which succeeds and closes it.
    up.flakyA.answerByDefault({ kind: 'ok', text: 'from flakyA' });
    await sleep(3_200);
    await burst('flaky', 20, 20);
    expect(up.flakyA.requests).toHaveLength(5);
    await sleep(3_000);
    await burst('flaky', 20, 20);
    expect(up.flakyA.requests.length).toBeGreaterThanOrEqual(6);
    const afterProbe = up.flakyA.requests.length;
    for (const worker of gateway.workers) {
      await eventually(
        async () => (await metricsOf(worker)).includes('gateway_circuit_state{alias="flaky",deployment="flaky-a"} 0'),
        'the closed state in each worker',
      );
    }
    const closed = await burst('flaky', 40, 4);
    expect(closed.filter((answer) => answer.deployment === 'flaky-a').length).toBeGreaterThan(0);
    expect(up.flakyA.requests.length).toBeGreaterThan(afterProbe);
    const metrics = (await Promise.all(gateway.workers.map(metricsOf))).join('\n');
    const transitions = (to: string) =>
      [...metrics.matchAll(new RegExp(`gateway_circuit_transitions_total\\{alias="flaky",deployment="flaky-a",to="${to}"\\} (\\d+)`, 'g'))].reduce(
        (sum, match) => sum + Number(match[1]),
        0,
      );
    expect({ open: transitions('open'), half_open: transitions('half_open'), closed: transitions('closed') }).toEqual({ open: 2, half_open: 2, closed: 1 });
    const logs = gateway.workers.map((worker) => worker.output()).join('\n');
    expect(logs).toContain("circuit breaker of deployment 'flaky-a' is now open");
    expect(logs).toContain("circuit breaker of deployment 'flaky-a' is now half-open");
    expect(logs).toContain("circuit breaker of deployment 'flaky-a' is now closed");
  }, 60_000);

  it("with every deployment open, passes to the tier's next candidate, or answers 503 with Retry-After at once", async () => {
    up.doomed.answerByDefault({ kind: 'status', status: 500 });
    const failed = (await client.chat.completions.create({ model: 'doomed', messages: hello }).catch((error: unknown) => error)) as APIError;
    expect(failed.status).toBe(502);
    // Opened after two failures: the tier goes straight to its next candidate.
    const viaTier = await client.chat.completions.create({ model: 'svc-pro', messages: hello }).withResponse();
    expect(viaTier.data.model).toBe('steady');
    expect(viaTier.response.headers.get('x-gateway-deployment')).toBe('steady');
    const calls = up.doomed.requests.length;
    const timings: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const response = await fetch(`${gateway.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'doomed', messages: hello }),
      });
      timings.push(performance.now() - started);
      expect(response.status).toBe(503);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(20);
      expect(await response.json()).toMatchObject({ error: { type: 'api_error', code: 'provider_unavailable' } });
    }
    expect(timings.sort((a, b) => a - b)[2]).toBeLessThan(50);
    expect(up.doomed.requests).toHaveLength(calls);
  });
});

describe('provider backpressure', () => {
  it("a 429's Retry-After pauses the deployment in every worker: a burst waits in the queue and none of it fails", async () => {
    up.limited.script([{ kind: 'status', status: 429, headers: { 'retry-after': '1' } }]);
    const first = burst('limited', 1, 1);
    await eventually(async () => up.limited.requests.length === 1, 'the 429');
    const limitedAt = up.limited.requests[0]?.receivedAt as number;
    // The worker that got it has told the others by now (a pub/sub message, well within a second).
    await sleep(100);
    const rest = await burst('limited', 30, 30);
    expect([...(await first), ...rest].every((answer) => answer.status === 200)).toBe(true);
    expect(up.limited.requests).toHaveLength(32);
    for (const request of up.limited.requests.slice(1)) expect(request.receivedAt - limitedAt).toBeGreaterThanOrEqual(950);
  });
});

describe('context-window fallback', () => {
  it('sends a prompt too long for a model to the larger one the catalog names, and says which answered', async () => {
    const short = await client.chat.completions.create({ model: 'narrow', messages: hello });
    expect(short.model).toBe('narrow');
    const long = [{ role: 'user' as const, content: 'hello '.repeat(200) }];
    const { data, response } = await client.chat.completions.create({ model: 'narrow', messages: long }).withResponse();
    expect(data.model).toBe('steady');
    expect(response.headers.get('x-gateway-deployment')).toBe('steady');
    expect(up.steady.requests.map((request) => (request.body as { model: string }).model)).toEqual(['narrow-model', 'steady-model']);
  });
});

describe("a model's own timeouts", () => {
  it('end an attempt at its first_token_ms, well inside the retry budget, and retry as any timeout', async () => {
    up.hasty.answerByDefault({ kind: 'hang' });
    const started = performance.now();
    const error = (await client.chat.completions.create({ model: 'hasty', messages: hello }).catch((e: unknown) => e)) as APIError;
    expect(error.status).toBe(504);
    expect(error.code).toBe('provider_timeout');
    // Three attempts of 200 ms and two short backoffs, against a 4 s budget.
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(up.hasty.requests).toHaveLength(3);
  });
});

describe('deployment quotas', () => {
  it('steer calls away from a deployment at its rpm, counted across both workers, before it refuses any', async () => {
    const answers = await burst('quota', 20, 2);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(up.quotaA.requests).toHaveLength(5);
    expect(up.quotaB.requests).toHaveLength(15);
    expect(answers.filter((answer) => answer.deployment === 'quota-a')).toHaveLength(5);
  });
});

describe('routing by load', () => {
  it('least-busy: calls go where fewest are in flight, across both workers', async () => {
    // busy-a holds each call for a second, busy-b answers at once.
    up.busyA.answerByDefault({ kind: 'slow-stream', chunkDelayMs: 100, chunks: 10 });
    const answers = await burst('busy', 30, 6);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(up.busyA.requests.length).toBeGreaterThanOrEqual(1);
    expect(up.busyA.requests.length).toBeLessThanOrEqual(8);
    expect(up.busyB.requests.length).toBe(30 - up.busyA.requests.length);
  });

  it('latency: calls go to the deployment quickest to its first token, once each was measured', async () => {
    up.latA.answerByDefault({ kind: 'slow-stream', chunkDelayMs: 30, chunks: 10 });
    const answers = await burst('quick', 30, 1);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    // Measured by one worker or both, then left alone.
    expect(up.latA.requests.length).toBeGreaterThanOrEqual(1);
    expect(up.latA.requests.length).toBeLessThanOrEqual(2);
    expect(up.latB.requests.length).toBe(30 - up.latA.requests.length);
  });
});
