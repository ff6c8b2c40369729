/**
 * Load benchmark of the gateway against its own loopback upstream, in one run: starts the stack
 * (bench/stack.ts), runs autocannon for {direct, gateway} × {json, stream} × connections, times
 * concurrency-1 latency and time to first token precisely, prints one report and cleans up.
 *
 *   node bench/gateway-load.ts [--json]
 *
 * Environment (defaults in brackets): BENCH_DURATION_S [8], BENCH_WARMUP_S [2], BENCH_CONNECTIONS [1,64,256],
 * BENCH_MODES [json,stream], BENCH_TARGETS [direct,gateway], BENCH_WORKERS [1] worker processes,
 * BENCH_SEQ_REQUESTS [300], BENCH_SEQ_WARMUP [100], BENCH_CPU_PROF [none; e.g. web,worker] writes V8
 * .cpuprofile files under BENCH_PROFILE_DIR [bench/profiles], BENCH_REDIS_URL [redis://127.0.0.1:6379].
 */
import { availableParallelism } from 'node:os';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runLoad } from './autocannon.ts';
import { startStack, BENCH_MODEL, type BenchStack } from './stack.ts';
import { measureSequential, percentile, type SequentialSamples, type SequentialTarget } from './sequential.ts';
import { CpuMeter, readMemory } from './proc-stats.ts';
import { readRedisPid } from './redis-stats.ts';
import { formatReport, verdicts, type BenchResults, type Cell, type Mode, type Precise, type Target } from './results.ts';
import { envList, envNumber } from './env.ts';
import { summariseLogs } from './child-logs.ts';

const durationS = envNumber('BENCH_DURATION_S', 8, 1, 60);
const warmupS = envNumber('BENCH_WARMUP_S', 2, 0, 30);
const connectionCounts = envList('BENCH_CONNECTIONS', '1,64,256').map(Number);
const modes = envList('BENCH_MODES', 'json,stream') as Mode[];
const targets = envList('BENCH_TARGETS', 'direct,gateway') as Target[];
const workerCount = envNumber('BENCH_WORKERS', 1, 1, 4);
const sequentialRequests = envNumber('BENCH_SEQ_REQUESTS', 300, 0, 10_000);
const sequentialWarmup = envNumber('BENCH_SEQ_WARMUP', 100, 0, 10_000);
const profiled = envList('BENCH_CPU_PROF', '');
const profileDir = process.env.BENCH_PROFILE_DIR ? resolve(process.env.BENCH_PROFILE_DIR) : fileURLToPath(new URL('./profiles', import.meta.url));
const redisUrl = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const printJson = process.argv.includes('--json');
const maxConnections = Math.max(...connectionCounts);
// Headroom over the largest connection count: a job cancelled at the end of a cell may still hold a slot briefly.
const workerConcurrency = maxConnections * 2;

if (connectionCounts.some((c) => !Number.isInteger(c) || c < 1 || c > 1024)) throw new Error('BENCH_CONNECTIONS must be integers in [1, 1024]');
if (modes.some((m) => m !== 'json' && m !== 'stream')) throw new Error('BENCH_MODES must be json and/or stream');
if (targets.some((t) => t !== 'direct' && t !== 'gateway')) throw new Error('BENCH_TARGETS must be direct and/or gateway');

// Every step is bounded on its own; this stops a run that hangs anyway (and still cleans up).
const SEQUENTIAL_DEADLINE_MS = 60_000;
const cells = modes.length * connectionCounts.length * targets.length;
const budgetMs = (cells * (durationS + warmupS + 3) + 90) * 1000 + (sequentialRequests > 0 ? modes.length * SEQUENTIAL_DEADLINE_MS : 0);

function requestBody(mode: Mode, model: string): string {
  const base = {
    model,
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hello to the benchmark.' },
    ],
    max_tokens: 64,
  };
  return JSON.stringify(mode === 'stream' ? { ...base, stream: true, stream_options: { include_usage: true } } : base);
}

function endpoint(stack: BenchStack, target: Target, mode: Mode): SequentialTarget {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (target === 'gateway') headers.authorization = `Bearer ${stack.apiKey}`;
  const baseUrl = target === 'gateway' ? stack.gatewayUrl : stack.upstreamUrl;
  return { name: target, baseUrl, headers, body: requestBody(mode, target === 'gateway' ? BENCH_MODEL : 'bench-upstream-model') };
}

async function runCell(stack: BenchStack, meter: CpuMeter, mode: Mode, connections: number, target: Target): Promise<Cell> {
  const e = endpoint(stack, target, mode);
  process.stderr.write(`  ${mode} ×${connections} → ${target} … `);
  const load = (duration: number) =>
    runLoad({ url: `${e.baseUrl}/chat/completions`, method: 'POST', headers: e.headers, body: e.body, connections, duration, timeout: 10 });
  // A separate warm-up run (not autocannon's `warmup` option) so that the CPU meter covers only the measured part.
  const warm = warmupS > 0 ? await load(warmupS) : null;
  await meter.begin();
  const r = await load(durationS);
  const cpu = await meter.end();
  process.stderr.write(`${r.requests.average.toFixed(0)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, errors ${r.errors}, non-2xx ${r.non2xx}\n`);
  const warmupFailures = warm ? warm.errors + warm.timeouts + warm.non2xx : 0;
  if (warmupFailures > 0) process.stderr.write(`    warm-up: ${warmupFailures} errors or non-2xx\n`);
  return {
    mode,
    connections,
    target,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    completed: r.latency.totalCount,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    warmupFailures,
    cpu,
  };
}

function summarise(what: Precise['what'], samples: Map<string, SequentialSamples>, pick: (s: SequentialSamples) => number[]): Precise {
  const stats = (name: Target) => {
    const values = pick(samples.get(name) as SequentialSamples);
    return { p50: percentile(values, 50), p99: percentile(values, 99), n: values.length };
  };
  return { what, direct: stats('direct'), gateway: stats('gateway') };
}

async function main(): Promise<number> {
  if (profiled.length > 0) await mkdir(profileDir, { recursive: true });
  // One directory per process kind; V8 names each file with its pid.
  const nodeOptions = (name: string) => (profiled.includes(name) ? `--cpu-prof --cpu-prof-dir=${join(profileDir, name)}` : '');
  process.stderr.write(`starting upstream, database, web and worker (run bounded to ${Math.round(budgetMs / 1000)} s)…\n`);
  // The default rate limits (KEY_RPM 3,000) would answer most of the load with 429; 0 = unlimited skips the limiter.
  const env = { TENANT_RPM: '0', TENANT_TPM: '0', KEY_RPM: '0', KEY_TPM: '0' };
  const stack = await startStack({
    redisUrl,
    workers: workerCount,
    workerConcurrency,
    upstreamConnections: workerConcurrency,
    nodeOptions: { web: nodeOptions('web'), worker: nodeOptions('worker') },
    env,
  });
  const watchdog = setTimeout(() => {
    process.stderr.write(`gateway-load: over its ${Math.round(budgetMs / 1000)} s budget; stopping\n`);
    void stack.close().finally(() => process.exit(2));
  }, budgetMs);
  watchdog.unref();
  const stopOnSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`gateway-load: ${signal}; cleaning up\n`);
    void stack.close().finally(() => process.exit(130));
  };
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  try {
    const { web, workers, upstream } = stack.processes;
    const pids = new Map<string, number>([
      ['bench', process.pid],
      ['upstream', upstream.child.pid as number],
      ['web', web.child.pid as number],
      ...workers.map((w, i): [string, number] => [i === 0 ? 'worker' : `worker${i + 1}`, w.child.pid as number]),
    ]);
    const redisPid = await readRedisPid(redisUrl);
    if (redisPid !== null) pids.set('redis', redisPid);
    const meter = new CpuMeter(pids);
    const memoryAtStart = new Map<string, number>();
    for (const [name, pid] of pids) memoryAtStart.set(name, (await readMemory(pid))?.currentKb ?? 0);

    const cellResults: Cell[] = [];
    for (const mode of modes) {
      for (const connections of connectionCounts) {
        for (const target of targets) {
          cellResults.push(await runCell(stack, meter, mode, connections, target));
          // Let cancelled in-flight jobs of the cell finish before the next one is measured.
          await new Promise((done) => setTimeout(done, 1_000));
        }
      }
    }

    const precise: Precise[] = [];
    const sequentialErrors: BenchResults['sequentialErrors'] = [];
    if (sequentialRequests > 0) {
      for (const mode of modes) {
        process.stderr.write(`  concurrency 1, ${mode}: ${sequentialWarmup} warm-up + ${sequentialRequests} requests per target…\n`);
        const samples = await measureSequential([endpoint(stack, 'direct', mode), endpoint(stack, 'gateway', mode)], {
          stream: mode === 'stream',
          warmup: sequentialWarmup,
          count: sequentialRequests,
          deadlineMs: SEQUENTIAL_DEADLINE_MS,
        });
        if (mode === 'json') precise.push(summarise('json latency', samples, (s) => s.totalMs));
        else
          precise.push(
            summarise('stream TTFT', samples, (s) => s.firstTokenMs),
            summarise('stream total', samples, (s) => s.totalMs),
          );
        for (const [target, s] of samples) sequentialErrors.push({ target, what: mode, errors: s.errors, firstError: s.firstError });
      }
    }

    const memory: BenchResults['memory'] = [];
    for (const [name, pid] of pids) {
      if (name === 'bench' || name === 'redis') continue;
      const use = await readMemory(pid);
      if (use) memory.push({ process: name, pid, startKb: memoryAtStart.get(name) ?? 0, ...use });
    }

    const results: BenchResults = {
      settings: {
        durationS,
        warmupS,
        sequentialRequests,
        workers: workerCount,
        workerConcurrency,
        upstreamConnections: workerConcurrency,
        cores: availableParallelism(),
      },
      cells: cellResults,
      precise,
      sequentialErrors,
      memory,
    };
    process.stdout.write(`\n${formatReport(results)}\n`);
    if (printJson) process.stdout.write(`${JSON.stringify({ ...results, verdicts: verdicts(results) })}\n`);
    const logged = summariseLogs([web, ...workers].map((p) => p.output()).join('\n'));
    if (logged !== '') process.stdout.write(`\nweb/worker log lines at warn and above (count × process level message):\n${logged}\n`);
    return 0;
  } finally {
    clearTimeout(watchdog);
    process.stderr.write('cleaning up…\n');
    await stack.close();
    if (profiled.length > 0) process.stderr.write(`CPU profiles in ${profileDir} (summarise with: node bench/cpu-profile-top.ts <file>)\n`);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`gateway-load failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
