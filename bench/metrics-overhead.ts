/**
 * The in-process cost of the metrics per request, without the noise of a whole stack: the calls
 * web and worker make for one completion (WebMetrics.admitted and .responded; WorkerMetrics'
 * run, attempt and record calls) in a tight loop on this process, in µs per request. The stack
 * figures of bench/observability-cost.ts move by more than this between runs; this says how much
 * of a difference there can be the metrics' own.
 *
 *   node bench/metrics-overhead.ts [--requests N] [--rounds R]
 */
import { parseArgs } from 'node:util';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createMetricsRegistry } from '../src/infra/metrics/registry.ts';
import { WebMetrics } from '../src/infra/metrics/web-metrics.ts';
import { WorkerMetrics } from '../src/infra/metrics/worker-metrics.ts';
import { EventQueue } from '../src/infra/events/event-queue.ts';
import type { ProviderTarget } from '../src/providers/types.ts';
import type { UsageRecord } from '../src/infra/store/repository.ts';
import { num, table } from './report-format.ts';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '5' } } });
const requests = Number(values.requests);
const rounds = Number(values.rounds);

const registry = createMetricsRegistry();
const web = new WebMetrics(registry, { tenants: 'acme', models: new Set(['bench-gpt']) });
const worker = new WorkerMetrics(registry, { tenants: 'acme' });

// What the hooks read of Fastify's request and reply, as a chat completion leaves them.
const reply = { statusCode: 200, errorCode: null, elapsedTime: 1.5 } as unknown as FastifyReply;
const request = () =>
  ({ routeOptions: { url: '/v1/chat/completions' }, body: { model: 'bench-gpt' }, principal: { tenantId: 'acme' } }) as unknown as FastifyRequest;
const target = { alias: 'bench-gpt', provider: 'openai-compatible' } as ProviderTarget;
const record = {
  tenantId: 'acme',
  operation: 'chat',
  model: 'bench-gpt',
  provider: 'openai-compatible',
  status: 'succeeded',
  errorCode: null,
  promptTokens: 12,
  completionTokens: 20,
  costMicros: 52,
  queueWaitMs: 1,
  ttftMs: 4,
  latencyMs: 9,
  stream: true,
} as UsageRecord;

function webRequest(): void {
  const events = new EventQueue();
  const req = request();
  web.admitted(req, reply, events);
  events.push({ seq: 1, type: 'result', payload: '{}' });
  web.responded(req, reply);
}

/** What webRequest allocates besides the metrics, so that only the metrics are counted. */
function webBaseline(): void {
  new EventQueue().push({ seq: 1, type: 'result', payload: '{}' });
  request();
}

function workerRequest(): void {
  worker.runStarted();
  worker.attempting(target, null);
  worker.attempted(target, 0.004, undefined, false);
  worker.finished(record);
  worker.runEnded();
}

/** µs per request of `each`, minus a loop doing the same allocations without the metrics. */
function measure(each: () => void, baseline: () => void): number {
  const time = (fn: () => void) => {
    const started = process.cpuUsage();
    for (let i = 0; i < requests; i++) fn();
    const used = process.cpuUsage(started);
    return (used.user + used.system) / requests;
  };
  return time(each) - time(baseline);
}

const rows: string[][] = [];
const results = { web: [] as number[], worker: [] as number[] };
for (let round = 1; round <= rounds; round++) {
  results.web.push(measure(webRequest, webBaseline));
  results.worker.push(measure(workerRequest, () => {}));
}
// The first round pays for V8's optimisation; the median of the rest is the figure.
const median = (xs: number[]) => [...xs.slice(1)].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] as number;
for (const side of ['web', 'worker'] as const) rows.push([side, ...results[side].map((x) => num(x, 2)), num(median(results[side]), 2)]);
process.stdout.write(
  `Metrics calls per request, CPU µs (${requests.toLocaleString('en')} requests per round; the last column: median of rounds 2…${rounds})\n\n`,
);
process.stdout.write(`${table(['process', ...results.web.map((_, i) => `round ${i + 1}`), 'median'], rows)}\n`);
