/**
 * The gateway on one core: web, worker and a private Redis pinned to one CPU, the mock upstream and
 * the load generator (this process) to another. For this checkout and a base revision measured in
 * the same run, and for the upstream called directly: non-streamed completions/s of a closed loop,
 * and latency at concurrency 1, each with its ratio to the direct upstream.
 *
 *   node bench/one-core.ts [--base REV|none] [--conns 32] [--dur 10] [--warm 3] [--seq 300]
 *                          [--gateway-cpu 0] [--client-cpu 1] [--json]
 *
 * The gateway runs with every feature on, as bench/redis-cost.ts runs it. The base revision runs from
 * a temporary `git worktree` (this checkout's node_modules linked in), removed once measured.
 */
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { cpus, loadavg } from 'node:os';
import { startUpstream, type BenchStack } from './stack.ts';
import { runClosedLoop } from './closed-loop.ts';
import { measureSequential, percentile } from './sequential.ts';
import { sampleCpu, type CpuSample } from './proc-stats.ts';
import { addWorktree, describeCheckout } from './base-worktree.ts';
import { gatewayHeaders, rateLimitHeader, requestBody, startAllFeaturesStack } from './all-features.ts';
import { checkAffinity, checkPinning, pinSelf, type Pinned } from './cpu-pinning.ts';
import { CleanupStack, runBench } from './cleanup-stack.ts';
import { sideLogsReport, summariseLogs } from './child-logs.ts';
import {
  CLIENT_PROCESSES,
  GATEWAY_PROCESSES,
  formatReport,
  toJson,
  type CoreUse,
  type LoadResult,
  type MachineState,
  type RunSettings,
  type SeqResult,
  type SideResult,
} from './one-core-report.ts';
import { settingsOrExit } from './settings-or-exit.ts';

const CHECKOUT = fileURLToPath(new URL('../', import.meta.url));
const SEQ_WARMUP = 100;
const SEQ_DEADLINE_MS = 30_000;
const USAGE = 'usage: node bench/one-core.ts [--base REV|none] [--conns 32] [--dur 10] [--warm 3] [--seq 300] [--gateway-cpu 0] [--client-cpu 1] [--json]';

function readSettings(): RunSettings & { json: boolean } {
  const { values } = parseArgs({
    options: {
      base: { type: 'string', default: '4512ad3' },
      conns: { type: 'string', default: '32' },
      dur: { type: 'string', default: '10' },
      warm: { type: 'string', default: '3' },
      seq: { type: 'string', default: '300' },
      'gateway-cpu': { type: 'string', default: '0' },
      'client-cpu': { type: 'string', default: '1' },
      json: { type: 'boolean', default: false },
    },
  });
  const bounded = (name: string, raw: string, min: number, max: number, integer = true) => {
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value)))
      throw new Error(`--${name} must be ${integer ? 'an integer' : 'a number'} in [${min}, ${max}]; got ${raw}`);
    return value;
  };
  const lastCpu = cpus().length - 1;
  const gatewayCpu = bounded('gateway-cpu', values['gateway-cpu'], 0, lastCpu);
  const clientCpu = bounded('client-cpu', values['client-cpu'], 0, lastCpu);
  if (gatewayCpu === clientCpu) throw new Error('--gateway-cpu and --client-cpu must differ');
  return {
    base: values.base,
    json: values.json,
    connections: bounded('conns', values.conns, 1, 512),
    durS: bounded('dur', values.dur, 1, 120, false),
    warmS: bounded('warm', values.warm, 0, 60, false),
    seq: bounded('seq', values.seq, 1, 100_000),
    seqWarmup: SEQ_WARMUP,
    gatewayCpu,
    clientCpu,
  };
}

const settings = settingsOrExit(readSettings, USAGE);
const G = String(settings.gatewayCpu);
const C = String(settings.clientCpu);
// Direct: an upstream's start, the loop and the sequential requests; per side also Redis, the stack and the clean-up.
const loadS = settings.warmS + settings.durS + SEQ_DEADLINE_MS / 1000;
const budgetMs = (30 + loadS + (settings.base === 'none' ? 1 : 2) * (90 + loadS)) * 1000;
const cleanups = new CleanupStack('one-core');

/** Per completion µs of each process, and how busy each core was, between two samples. */
function cpuUse(before: CpuSample, after: CpuSample, windowS: number, completed: number): Pick<LoadResult, 'cpuUs' | 'cores'> {
  const cpuUs: Record<string, number> = {};
  for (const [name, end] of after.processes) cpuUs[name] = ((end - (before.processes.get(name) ?? 0)) * 1e6) / completed;
  const core = (cpu: number, names: readonly string[]): CoreUse => {
    const busy = (after.cores.get(cpu) ?? 0) - (before.cores.get(cpu) ?? 0);
    const charged = names.reduce((sum, name) => sum + ((cpuUs[name] ?? 0) * completed) / 1e6, 0);
    return { busyPercent: (100 * busy) / windowS, unchargedPercent: Math.max(0, (100 * (busy - charged)) / windowS) };
  };
  return { cpuUs, cores: { gateway: core(settings.gatewayCpu, GATEWAY_PROCESSES), client: core(settings.clientCpu, CLIENT_PROCESSES) } };
}

/** The closed loop at --conns against `baseUrl`, with the CPU of `pinned` sampled at the window's edges. */
async function measureLoad(name: string, baseUrl: string, headers: Record<string, string>, pinned: readonly Pinned[]): Promise<LoadResult> {
  process.stderr.write(`  ${name}: ${settings.connections} connections … `);
  const pids = new Map(pinned.map((p) => [p.name, p.pid]));
  const run = await runClosedLoop<CpuSample>({
    url: `${baseUrl}/chat/completions`,
    headers,
    body: requestBody(false),
    stream: false,
    connections: settings.connections,
    warmS: settings.warmS,
    durS: settings.durS,
    probe: () => sampleCpu(pids),
  });
  const result: LoadResult = {
    completed: run.completed,
    windowS: run.windowS,
    perSecond: run.completed / run.windowS,
    p50Ms: percentile(run.latencyMs, 50),
    p99Ms: percentile(run.latencyMs, 99),
    errors: run.errors,
    firstError: run.firstError,
    ...cpuUse(run.before, run.after, run.windowS, run.completed),
  };
  process.stderr.write(`${result.perSecond.toFixed(0)}/s, p50 ${result.p50Ms.toFixed(2)} ms, ${run.errors} errors\n`);
  return result;
}

/** --seq sequential requests after the warm-up, over one keep-alive connection. */
async function measureSeq(name: string, baseUrl: string, headers: Record<string, string>): Promise<SeqResult> {
  process.stderr.write(`  ${name}: concurrency 1 … `);
  const samples = await measureSequential([{ name, baseUrl, headers, body: requestBody(false) }], {
    stream: false,
    warmup: SEQ_WARMUP,
    count: settings.seq,
    deadlineMs: SEQ_DEADLINE_MS,
  });
  const got = samples.get(name) as NonNullable<ReturnType<typeof samples.get>>;
  const result = {
    requests: got.totalMs.length,
    p50Ms: percentile(got.totalMs, 50),
    p99Ms: percentile(got.totalMs, 99),
    errors: got.errors,
    firstError: got.firstError,
  };
  process.stderr.write(`p50 ${result.p50Ms.toFixed(3)} ms over ${result.requests}, ${result.errors} errors\n`);
  return result;
}

/** The upstream alone, pinned to the client CPU with the load generator. */
async function measureDirect(): Promise<SideResult> {
  return cleanups.scope(async () => {
    process.stderr.write(`direct: starting the upstream on CPU ${C}…\n`);
    const upstream = await startUpstream(C);
    cleanups.register(() => upstream.stop());
    const pinned: Pinned[] = [
      { name: 'upstream', pid: upstream.process.child.pid as number, cpu: settings.clientCpu },
      { name: 'client', pid: process.pid, cpu: settings.clientCpu },
    ];
    await checkAffinity(pinned);
    const headers = { 'content-type': 'application/json' };
    const load = await measureLoad('direct', upstream.url, headers, pinned);
    return { role: 'direct', label: 'upstream', load, seq: await measureSeq('direct', upstream.url, headers) };
  });
}

/** The stack's processes, this one (the load generator) and the private Redis, with the CPU each must be on. */
function stackPinned(stack: BenchStack, redisPid: number): Pinned[] {
  const { web, workers, upstream } = stack.processes;
  return [
    { name: 'web', pid: web.child.pid as number, cpu: settings.gatewayCpu },
    { name: 'worker', pid: workers[0]?.child.pid as number, cpu: settings.gatewayCpu },
    { name: 'redis', pid: redisPid, cpu: settings.gatewayCpu },
    { name: 'upstream', pid: upstream.child.pid as number, cpu: settings.clientCpu },
    { name: 'client', pid: process.pid, cpu: settings.clientCpu },
  ];
}

/** A private Redis, web and worker on the gateway CPU, the stack's upstream on the client CPU; measured, then stopped. */
async function measureSide(role: 'base' | 'this', label: string, root: string | undefined): Promise<{ side: SideResult; logs: string }> {
  return cleanups.scope(async () => {
    process.stderr.write(`${role} ${label}: starting a private Redis, web and worker on CPU ${G}, the upstream on CPU ${C}, a database…\n`);
    const { redisServer, stack } = await startAllFeaturesStack(cleanups, { root, connections: settings.connections, cpus: { gateway: G, upstream: C } });
    const pinned = stackPinned(stack, redisServer.pid);
    await checkAffinity(pinned);
    const rateLimit = await rateLimitHeader(stack);
    const load = await measureLoad(role, stack.gatewayUrl, gatewayHeaders(stack), pinned);
    const seq = await measureSeq(role, stack.gatewayUrl, gatewayHeaders(stack));
    const { web, workers } = stack.processes;
    return { side: { role, label, load, seq, rateLimitHeader: rateLimit }, logs: summariseLogs([web, ...workers].map((p) => p.output()).join('\n')) };
  });
}

async function main(): Promise<number> {
  process.stderr.write(`one-core: bounded to ${Math.round(budgetMs / 1000)} s\n`);
  const disarm = cleanups.guard(budgetMs);
  const loadBefore = loadavg();
  const measured: Array<{ side: SideResult; logs: string }> = [];
  let direct: SideResult;
  try {
    await checkPinning([settings.gatewayCpu, settings.clientCpu]);
    // Pinning this process in place, rather than re-running it under taskset, keeps one process that
    // owns the children, the watchdog and the signal handlers.
    await pinSelf(settings.clientCpu);
    const label = await describeCheckout(CHECKOUT);
    // Checked out first, so that an unknown revision fails before anything is measured.
    const worktree = settings.base === 'none' ? null : await addWorktree(CHECKOUT, settings.base);
    if (worktree) cleanups.register(() => worktree.remove());
    direct = await measureDirect();
    if (worktree) measured.push(await measureSide('base', worktree.commit.slice(0, 7), worktree.root));
    measured.push(await measureSide('this', label, undefined));
  } finally {
    disarm();
    await cleanups.unwind();
  }
  const machine: MachineState = { cores: cpus().length, loadBefore, loadAfter: loadavg() };
  const sides = measured.map((m) => m.side);
  process.stdout.write(`\n${formatReport(settings, machine, direct, sides)}\n`);
  if (settings.json) process.stdout.write(`${JSON.stringify(toJson(settings, machine, direct, sides))}\n`);
  process.stdout.write(sideLogsReport(measured));
  const errors = [direct, ...sides].reduce((sum, side) => sum + side.load.errors + side.seq.errors, 0);
  return errors === 0 ? 0 : 1;
}

runBench('one-core', cleanups, main);
