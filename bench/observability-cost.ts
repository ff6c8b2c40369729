/**
 * What Prometheus metrics and OpenTelemetry tracing cost on the hot path: chat completions,
 * non-streamed and streamed, through three stacks started side by side, each with every feature on
 * (bench/all-features.ts) and its own private Redis, web and worker: `off` (no METRICS_PORT, no
 * OTEL_*: no metrics kept, no tracing), `metrics` (METRICS_PORT=0) and `metrics+tracing` (the same,
 * and traces exported over OTLP/HTTP JSON to a sink in this process). Per request: web and worker
 * CPU (/proc), Redis commands and CPU (INFO), each with its ratio to `off` of the same case. One
 * stack is loaded at a time; the cells take turns, forward in odd rounds and backward in even ones,
 * so that drift weighs on each alike. After the rounds each process's /metrics is scraped once, to
 * show that metrics were kept, and what a scrape weighs.
 *
 *   node bench/observability-cost.ts [--conns N] [--dur S] [--warm S] [--rounds R] [--json]
 *
 * Defaults: --conns 32, --dur 5, --warm 2, --rounds 2 (~2 minutes on 2 cores).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import type { GatewayProcess } from '../test/helpers/gateway-processes.ts';
import type { BenchStack } from './stack.ts';
import { gatewayHeaders, requestBody, startAllFeaturesStack } from './all-features.ts';
import { readListeningPorts } from './proc-stats.ts';
import { describeCheckout } from './base-worktree.ts';
import { summariseLogs } from './child-logs.ts';
import { CleanupStack, runBench } from './cleanup-stack.ts';
import { num, table } from './report-format.ts';
import {
  costHeader,
  costRow,
  emptyTally,
  inRoundOrder,
  LOAD_OPTIONS,
  measure,
  prime,
  readLoadSettings,
  summarise,
  type LoadSettings,
  type LoopRequest,
  type RequestCost,
  type Tally,
} from './request-cost.ts';

/** A set-up of the gateway: its environment over every feature's, given the trace sink's URL. */
interface Config {
  name: string;
  /** The processes keep metrics and have an operations listener to scrape. */
  metrics: boolean;
  env: (sinkUrl: string) => Record<string, string>;
}

const REFERENCE = 'off';
const CONFIGS: readonly Config[] = [
  { name: REFERENCE, metrics: false, env: () => ({}) },
  // 0: web and worker share one environment, so each must pick a free port of its own.
  { name: 'metrics', metrics: true, env: () => ({ METRICS_PORT: '0' }) },
  {
    name: 'metrics+tracing',
    metrics: true,
    env: (sinkUrl) => ({ METRICS_PORT: '0', OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }),
  },
];

/** Operation-cost's two chat cases: the same bodies, the answers checked by checkAnswer. */
const CASES = [
  { name: 'chat', stream: false },
  { name: 'chat-stream', stream: true },
] as const;
type Case = (typeof CASES)[number];

/** What each process's /metrics must show once requests went through. */
const COUNTERS = { web: 'gateway_http_requests_total', worker: 'gateway_completions_total' } as const;

const settings = (() => {
  try {
    return readLoadSettings(parseArgs({ options: LOAD_OPTIONS }).values);
  } catch (error) {
    process.stderr.write(
      `${error instanceof Error ? error.message : String(error)}\nusage: node bench/observability-cost.ts [--conns N] [--dur S] [--warm S] [--rounds R] [--json]\n`,
    );
    process.exit(2);
  }
})();
const cleanups = new CleanupStack('observability-cost');
const CELLS = CASES.length * CONFIGS.length;
// The stacks' start-up, the priming, then each cell's warm-up, window and drain, the scrapes and the clean-up.
const budgetMs = (30 + CONFIGS.length * 60 + CELLS * (settings.warmS + 5 + settings.rounds * (settings.warmS + settings.durS + 10)) + 60) * 1000;

/** What the trace sink received so far. */
interface SinkCount {
  requests: number;
  bytes: number;
}

/** Stands in for an OTLP collector: takes any POST whole and answers an empty success, so the exporters never retry. */
async function startTraceSink(): Promise<{ url: string; received: () => SinkCount; close: () => Promise<void> }> {
  const count: SinkCount = { requests: 0, bytes: 0 };
  const server = createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    req.on('data', (chunk: Buffer) => (count.bytes += chunk.length));
    req.on('end', () => {
      count.requests++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => ({ ...count }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The loop of a case on a stack, its window and probe aside. */
function load(stack: BenchStack, c: Case, loadSettings: LoadSettings): LoopRequest {
  return {
    url: `${stack.gatewayUrl}/chat/completions`,
    headers: gatewayHeaders(stack),
    body: requestBody(c.stream),
    stream: c.stream,
    connections: loadSettings.connections,
  };
}

/** The operations listener of a process started with METRICS_PORT=0: its one listening port besides the API's. */
async function opsUrlOf(proc: GatewayProcess, apiPort: number): Promise<string> {
  const ports = (await readListeningPorts(proc.child.pid as number)).filter((port) => port !== apiPort);
  if (ports.length !== 1)
    throw new Error(`expected one operations listener of pid ${proc.child.pid}; it listens on ${ports.join(', ') || 'nothing'} besides ${apiPort}`);
  return `http://127.0.0.1:${ports[0]}`;
}

/** The sum of a metric's series in Prometheus's text format; null when it has none. */
function sumSeries(text: string, name: string): number | null {
  const series = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'gm');
  const values = [...text.matchAll(series)].map((match) => Number(match[1]));
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0);
}

/** One scrape of a process's /metrics. */
interface Scrape {
  config: string;
  process: 'web' | 'worker';
  counter: string;
  value: number | null;
  bytes: number;
  ms: number;
}

async function scrape(config: string, role: Scrape['process'], url: string): Promise<Scrape> {
  const startedAt = performance.now();
  const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  const ms = performance.now() - startedAt;
  if (response.status !== 200) throw new Error(`${config} ${role} /metrics: status ${response.status}: ${text.slice(0, 200)}`);
  return { config, process: role, counter: COUNTERS[role], value: sumSeries(text, COUNTERS[role]), bytes: Buffer.byteLength(text), ms };
}

/** Scrapes the web and worker of a stack that keeps metrics. */
async function scrapeStack(config: string, stack: BenchStack): Promise<Scrape[]> {
  const { web, workers } = stack.processes;
  const apiPort = Number(stack.env.PORT);
  return [await scrape(config, 'web', await opsUrlOf(web, apiPort)), await scrape(config, 'worker', await opsUrlOf(workers[0] as GatewayProcess, apiPort))];
}

/** Starts every configuration's stack, loads every cell in turn, round after round, then scrapes and reads the sink. */
async function measureAll() {
  const label = await describeCheckout(fileURLToPath(new URL('../', import.meta.url)));
  // Registered first, so undone last: the tracing processes' final export at their stop still gets an answer.
  const sink = await startTraceSink();
  cleanups.register(sink.close);
  const started: Array<{ config: Config; stack: BenchStack; monitor: Redis }> = [];
  for (const config of CONFIGS) {
    cleanups.throwIfStopping();
    process.stderr.write(`  starting ${config.name}…\n`);
    const { redisServer, stack } = await startAllFeaturesStack(cleanups, { root: undefined, connections: settings.connections, env: config.env(sink.url) });
    const monitor = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
    cleanups.register(async () => monitor.disconnect());
    started.push({ config, stack, monitor });
  }
  // Case-major, so that the configurations compared with each other are measured next to each other.
  const cells = CASES.flatMap((c) => started.map((one) => ({ c, ...one, tally: emptyTally() })));
  // Every path of every stack warmed before any window opens, so that no cell is charged for a process's warm-up.
  process.stderr.write(`  priming every cell for ${Math.max(1, settings.warmS)} s…\n`);
  for (const cell of cells) {
    cleanups.throwIfStopping();
    await prime(load(cell.stack, cell.c, settings), settings, cell.tally);
  }
  for (let round = 1; round <= settings.rounds; round++) {
    for (const { c, config, stack, monitor, tally } of inRoundOrder(cells, round)) {
      cleanups.throwIfStopping();
      process.stderr.write(`  round ${round} ${c.name} ${config.name} ×${settings.connections} … `);
      const [errorsBefore, completedBefore] = [tally.errors, tally.completed];
      await measure(stack, monitor, load(stack, c, settings), settings, tally);
      process.stderr.write(`${tally.completed - completedBefore} requests, ${tally.errors - errorsBefore} errors\n`);
    }
  }
  const received = sink.received();
  const scrapes: Scrape[] = [];
  for (const { config, stack } of started) if (config.metrics) scrapes.push(...(await scrapeStack(config.name, stack)));
  const logs = started.map(({ config, stack: { processes } }) => ({
    config: config.name,
    logs: summariseLogs([processes.web, ...processes.workers].map((p) => p.output()).join('\n')),
  }));
  const tallies = new Map(
    CASES.map((c) => [c.name, new Map(cells.filter((cell) => cell.c === c).map((cell): [string, Tally] => [cell.config.name, cell.tally]))]),
  );
  return { label, tallies, scrapes, received, logs };
}

function report(results: Map<string, Map<string, RequestCost>>, scrapes: Scrape[], received: SinkCount, label: string): string {
  const caseTables = [...results].flatMap(([name, byConfig]) => {
    const rows = [...byConfig].map(([config, r]) => costRow(config, r, config === REFERENCE ? null : byConfig.get(REFERENCE)));
    return [`${name}:`, '', table(costHeader('configuration', REFERENCE), rows), ''];
  });
  const scrapeRows = scrapes.map((s) => [s.config, s.process, s.counter, num(s.value ?? undefined, 0), num(s.bytes, 0), num(s.ms, 1)]);
  return [
    `Cost of metrics and tracing at ${label}, ${settings.connections} connections, ${settings.rounds} round(s) of ${settings.durS} s per case and configuration after ${settings.warmS} s of warm-up; every feature on, one stack (private Redis, web, worker) per configuration.`,
    `CPU µs per request (web, worker, Redis); ÷ ${REFERENCE} is the ratio to ${REFERENCE} of the same case (target: req/s at least 0.97 with metrics); other % is busy time of the machine outside the loaded stack's processes, its upstream and the load generator (the idle stacks among it), in % of one core.`,
    '',
    ...caseTables,
    "Each process's /metrics, scraped once after the rounds (the counter summed over its series; bytes of the text; ms to fetch it whole):",
    '',
    table(['configuration', 'process', 'counter', 'value', 'bytes', 'ms'], scrapeRows),
    '',
    `Trace sink (OTLP/HTTP JSON of metrics+tracing's web and worker, until the end of the rounds): ${num(received.requests, 0)} export requests, ${num(received.bytes, 0)} bytes${received.requests === 0 ? ' — nothing was exported' : ''}.`,
  ].join('\n');
}

async function main(): Promise<number> {
  process.stderr.write(
    `observability-cost: bounded to ${Math.round(budgetMs / 1000)} s; starting ${CONFIGS.length} stacks (private Redis, upstream, database, web and worker each)…\n`,
  );
  const disarm = cleanups.guard(budgetMs);
  let measured: Awaited<ReturnType<typeof measureAll>>;
  // A scope, so that an abort waits for a stack half-way up and undoes it too.
  try {
    measured = await cleanups.scope(measureAll);
  } finally {
    disarm();
  }
  const { label, tallies, scrapes, received, logs } = measured;
  const results = new Map([...tallies].map(([name, byConfig]) => [name, new Map([...byConfig].map(([config, tally]) => [config, summarise(tally)]))]));
  const all = [...results].flatMap(([name, byConfig]) => [...byConfig].map(([config, r]) => ({ cell: `${name} ${config}`, r })));
  for (const { cell, r } of all) if (r.errors > 0) process.stderr.write(`${cell}: ${r.errors} errors, first: ${r.firstError}\n`);
  process.stdout.write(`\n${report(results, scrapes, received, label)}\n`);
  for (const { config, logs: lines } of logs)
    if (lines !== '') process.stdout.write(`\n${config} web/worker log lines at warn and above (count × process level message):\n${lines}\n`);
  if (settings.json) {
    const { json: _json, ...rest } = settings;
    const cases = Object.fromEntries([...results].map(([name, byConfig]) => [name, Object.fromEntries(byConfig)]));
    process.stdout.write(`${JSON.stringify({ checkout: label, settings: rest, cases, scrapes, traceSink: received })}\n`);
  }
  return all.some(({ r }) => r.errors > 0 || r.completed === 0) ? 1 : 0;
}

runBench('observability-cost', cleanups, main);
