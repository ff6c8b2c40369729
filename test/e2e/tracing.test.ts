/**
 * OpenTelemetry traces of web and worker as separate processes, exported over OTLP/HTTP (JSON) to
 * an in-test receiver: the client's traceparent is honoured, the trace crosses the queue, upstream
 * attempts follow the GenAI conventions, no message content is recorded, and off means off.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayProcess, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { eventually } from '../helpers/http.ts';

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

// Words no attribute may carry: the prompt's and the answers'.
const PROMPT = 'Tell me about the heron named Wilhelmina';
const ANSWER = 'Wilhelmina the heron fishes at dawn';

const TRACING_ENV = { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50', RETRY_BASE_MS: '20', RETRY_MAX_ATTEMPTS: '2' };

function traceparent(): { header: string; traceId: string; spanId: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

async function complete(
  gateway: GatewayUnderTest,
  secret: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; requestId: string }> {
  const response = await fetch(`${gateway.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ messages: [{ role: 'user', content: PROMPT }], ...body }),
  });
  return { status: response.status, text: await response.text(), requestId: response.headers.get('x-request-id') ?? '' };
}

/** The JSON log lines of a process that carry `msg`. */
function logLines(proc: GatewayProcess, msg: string): Array<Record<string, unknown>> {
  return proc
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === msg);
}

function only(spans: ReceivedSpan[], match: (span: ReceivedSpan) => boolean): ReceivedSpan {
  const found = spans.filter(match);
  expect(found, `exactly one span: ${JSON.stringify(spans.map((span) => span.name))}`).toHaveLength(1);
  return found[0] as ReceivedSpan;
}

/** Every attribute value (spans' and events'), as text. */
function allValues(spans: ReceivedSpan[]): string {
  return JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events]));
}

describe('tracing on', () => {
  let receiver: OtlpReceiver;
  let upstream: FakeUpstream;
  let gateway: GatewayUnderTest;
  let secret: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    upstream = await startFakeUpstream();
    // A gather window, so that requests sent together share a queue job.
    gateway = await startGateway({
      catalog: testCatalog(upstream.url),
      env: { ...TRACING_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, QUEUE_BATCH_WINDOW_MS: '100' },
    });
    ({ secret } = await gateway.issueKey('acme', 'app'));
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await receiver?.close();
  });

  beforeEach(() => upstream.reset());

  /** The web span of a request, and the spans of its trace once the attempts' count is reached. */
  async function traceOf(requestId: string, attempts: number): Promise<{ web: ReceivedSpan; spans: ReceivedSpan[] }> {
    const web = () => receiver.spans.find((span) => span.attributes['gateway.request_id'] === requestId && span.kind === SERVER);
    await receiver.waitFor(() => {
      const found = web();
      return (
        found !== undefined &&
        receiver.spans.filter((span) => span.traceId === found.traceId && span.kind === CLIENT).length >= attempts &&
        receiver.spans.some((span) => span.traceId === found.traceId && span.kind === CONSUMER)
      );
    });
    const found = web() as ReceivedSpan;
    return { web: found, spans: receiver.spans.filter((span) => span.traceId === found.traceId) };
  }

  it("continues the client's trace from web across the queue to the upstream call, with the GenAI attributes and no content", async () => {
    const parent = traceparent();
    upstream.script([{ kind: 'ok', text: ANSWER, usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } }]);
    const { status, requestId } = await complete(gateway, secret, { model: 'fake-gpt' }, { traceparent: parent.header });
    expect(status).toBe(200);
    const { web, spans } = await traceOf(requestId, 1);

    expect(web).toMatchObject({ service: 'llm-gateway-web', name: 'POST /v1/chat/completions', traceId: parent.traceId, parentSpanId: parent.spanId });
    expect(web.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'gateway.tenant_id': 'acme',
    });
    expect(web.events.map((event) => event.name)).toEqual([
      'gateway.authenticated',
      'gateway.resolved',
      'gateway.pii_screened',
      'gateway.admitted',
      'gateway.enqueued',
    ]);

    const run = only(spans, (span) => span.kind === CONSUMER);
    expect(run).toMatchObject({ service: 'llm-gateway-worker', name: 'chat fake-gpt', parentSpanId: web.spanId });
    expect(run.attributes).toMatchObject({
      'gateway.request_id': requestId,
      'gateway.status': 'succeeded',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 7,
    });

    const attempt = only(spans, (span) => span.kind === CLIENT);
    expect(attempt).toMatchObject({ service: 'llm-gateway-worker', name: 'chat fake-upstream-model', parentSpanId: run.spanId, statusCode: 0 });
    expect(attempt.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'fake-upstream-model',
      'gen_ai.response.model': 'fake-upstream-model',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 7,
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(upstream.url).port),
    });

    expect(allValues(spans)).not.toMatch(/Wilhelmina|heron/);
    // The worker's line of the completion names the request's trace, and the run's span.
    const [line] = logLines(gateway.workers[0] as GatewayProcess, 'completion finished').filter((entry) => entry.requestId === requestId);
    expect(line).toMatchObject({ trace_id: parent.traceId, span_id: run.spanId });
  });

  it('traces a streamed completion to its end, a root trace when the client sent no traceparent', async () => {
    upstream.script([{ kind: 'ok', text: ANSWER, chunks: 3, usage: { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 } }]);
    const { status, text, requestId } = await complete(gateway, secret, { model: 'fake-gpt', stream: true });
    expect(status).toBe(200);
    expect(text).toContain('data: [DONE]');
    const { web, spans } = await traceOf(requestId, 1);
    expect(web.parentSpanId).toBe('');
    expect(web.attributes['http.response.status_code']).toBe(200);
    const run = only(spans, (span) => span.kind === CONSUMER);
    expect(run.parentSpanId).toBe(web.spanId);
    const attempt = only(spans, (span) => span.kind === CLIENT);
    expect(attempt.parentSpanId).toBe(run.spanId);
    expect(attempt.attributes).toMatchObject({
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 9,
      'gen_ai.usage.output_tokens': 6,
      'gen_ai.response.model': 'fake-upstream-model',
    });
    expect(allValues(spans)).not.toMatch(/Wilhelmina|heron/);
  });

  it('gives each request of a shared job its own trace', async () => {
    const parents = [traceparent(), traceparent(), traceparent()];
    const answers = await Promise.all(parents.map((parent) => complete(gateway, secret, { model: 'fake-gpt' }, { traceparent: parent.header })));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    for (const [i, answer] of answers.entries()) {
      const { web, spans } = await traceOf(answer.requestId, 1);
      expect(web.traceId).toBe(parents[i]?.traceId);
      const run = only(spans, (span) => span.kind === CONSUMER);
      expect(run).toMatchObject({ parentSpanId: web.spanId, attributes: expect.objectContaining({ 'gateway.request_id': answer.requestId }) });
      expect(only(spans, (span) => span.kind === CLIENT).parentSpanId).toBe(run.spanId);
    }
  });

  it('shows retries and a fallback as sibling attempts under the request', async () => {
    upstream.script([
      { kind: 'status', status: 500 },
      { kind: 'status', status: 503 },
      { kind: 'ok', text: ANSWER },
    ]);
    const { status, requestId } = await complete(gateway, secret, { model: 'svc-standard' }, { traceparent: traceparent().header });
    expect(status).toBe(200);
    const { spans } = await traceOf(requestId, 3);
    const run = only(spans, (span) => span.kind === CONSUMER);
    expect(run.name).toBe('chat svc-standard');
    expect(run.attributes).toMatchObject({ 'gateway.model_alias': 'fake-backup', 'gateway.attempts': 3 });
    const attempts = spans.filter((span) => span.kind === CLIENT);
    expect(attempts.every((span) => span.parentSpanId === run.spanId)).toBe(true);
    expect(
      attempts.map((span) => [span.name, span.attributes['error.type'] ?? null, span.attributes['http.response.status_code'] ?? null, span.statusCode]).sort(),
    ).toEqual([
      ['chat fake-backup-model', null, null, 0],
      ['chat fake-upstream-model', 'server_error', 500, 2],
      ['chat fake-upstream-model', 'server_error', 503, 2],
    ]);
  });

  it('marks a failed request on every span and in the web log line of its 502', async () => {
    upstream.script([
      { kind: 'status', status: 500 },
      { kind: 'status', status: 500 },
    ]);
    const parent = traceparent();
    const { status, requestId } = await complete(gateway, secret, { model: 'fake-gpt' }, { traceparent: parent.header });
    expect(status).toBe(502);
    const { web, spans } = await traceOf(requestId, 2);
    expect(web).toMatchObject({ statusCode: 2, attributes: expect.objectContaining({ 'http.response.status_code': 502, 'error.type': 'provider_failed' }) });
    const run = only(spans, (span) => span.kind === CONSUMER);
    expect(run).toMatchObject({ statusCode: 2, attributes: expect.objectContaining({ 'gateway.status': 'failed', 'error.type': 'provider_failed' }) });
    await eventually(async () => logLines(gateway.web, 'request failed').some((line) => line.reqId === requestId), 5_000, 'the web log line');
    const [line] = logLines(gateway.web, 'request failed').filter((entry) => entry.reqId === requestId);
    expect(line).toMatchObject({ trace_id: parent.traceId, span_id: web.spanId });
  });

  it('traces a refusal at the door with its error code and no job', async () => {
    const { status, requestId } = await complete(gateway, secret, { model: 'no-such-model' });
    expect(status).toBe(404);
    const spans = await receiver.waitFor((all) => all.some((span) => span.attributes['gateway.request_id'] === requestId));
    const web = only(spans, (span) => span.attributes['gateway.request_id'] === requestId);
    // A 4xx is the client's failure: the server span's status stays unset.
    expect(web).toMatchObject({ statusCode: 0, attributes: expect.objectContaining({ 'http.response.status_code': 404, 'error.type': 'model_not_found' }) });
    expect(spans.filter((span) => span.traceId === web.traceId)).toHaveLength(1);
  });
});

describe('tracing off', () => {
  let receiver: OtlpReceiver;
  let upstream: FakeUpstream;
  let gateway: GatewayUnderTest;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    upstream = await startFakeUpstream();
    // The endpoint is set, but OTEL_SDK_DISABLED wins: nothing may reach the receiver.
    gateway = await startGateway({
      catalog: testCatalog(upstream.url),
      env: { ...TRACING_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true' },
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await receiver?.close();
  });

  it('sends nothing, and no log line carries a trace id', async () => {
    const { secret } = await gateway.issueKey('acme', 'app');
    const first = await complete(gateway, secret, { model: 'fake-gpt' }, { traceparent: traceparent().header });
    const second = await complete(gateway, secret, { model: 'fake-gpt', stream: true });
    expect([first.status, second.status]).toEqual([200, 200]);
    const worker = gateway.workers[0] as GatewayProcess;
    await eventually(async () => logLines(worker, 'completion finished').length >= 2, 5_000, 'the completions');
    // Several batch periods: a running SDK would have exported by now.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.requests).toBe(0);
    expect(`${gateway.web.output()}${worker.output()}`).not.toMatch(/trace_id|exporting traces/);
  });
});
