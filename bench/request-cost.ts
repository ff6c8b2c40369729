/**
 * What a request costs one stack under a closed loop, shared by the benches that compare kinds of
 * request or configurations of the gateway on the same machine in one run: web and worker CPU
 * (/proc), Redis commands, script calls and CPU (INFO of a private Redis), summed over windows
 * taken in turns and divided by the completions; and the table row that shows them beside a reference.
 */
import type { Redis } from 'ioredis';
import type { BenchStack } from './stack.ts';
import { runClosedLoop, type ClosedLoopOptions } from './closed-loop.ts';
import { readCpuSeconds, readMachineBusySeconds } from './proc-stats.ts';
import { costPer, sampleRedis, type RedisSample } from './redis-stats.ts';
import { num, ratio } from './report-format.ts';

/** The command-line options every such bench takes, for `parseArgs`. */
export const LOAD_OPTIONS = {
  conns: { type: 'string', default: '32' },
  dur: { type: 'string', default: '5' },
  warm: { type: 'string', default: '2' },
  rounds: { type: 'string', default: '2' },
  json: { type: 'boolean', default: false },
} as const;

/** The load of every window. */
export interface LoadSettings {
  connections: number;
  durS: number;
  warmS: number;
  rounds: number;
  json: boolean;
}

/** Validates what `parseArgs` read of LOAD_OPTIONS; throws with the option's name. */
export function readLoadSettings(values: { conns: string; dur: string; warm: string; rounds: string; json: boolean }): LoadSettings {
  const int = (name: string, raw: string, min: number, max: number) => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) throw new Error(`--${name} must be an integer in [${min}, ${max}]; got ${raw}`);
    return value;
  };
  return {
    connections: int('conns', values.conns, 1, 512),
    durS: int('dur', values.dur, 1, 120),
    warmS: int('warm', values.warm, 0, 60),
    rounds: int('rounds', values.rounds, 1, 10),
    json: values.json,
  };
}

/** Forward in odd rounds and backward in even ones, so that drift weighs on each item alike. */
export function inRoundOrder<T>(items: readonly T[], round: number): readonly T[] {
  return round % 2 === 1 ? items : [...items].reverse();
}

/** One kind of request in a closed loop: where it goes, what it sends, how its answer is checked. */
export type LoopRequest = Pick<ClosedLoopOptions<unknown>, 'url' | 'headers' | 'body' | 'stream' | 'check' | 'connections'>;

/** The counters at one edge of a window. */
interface Sample {
  redis: RedisSample;
  /** CPU seconds so far, by process. */
  web: number;
  worker: number;
  upstream: number;
  client: number;
  /** Busy seconds of the whole machine. */
  machine: number;
}

/** One cell's totals over every round. */
export interface Tally {
  completed: number;
  windowS: number;
  webS: number;
  workerS: number;
  /** Redis CPU, the upstream's and the bench process's (the load generator), in seconds. */
  redisS: number;
  upstreamS: number;
  clientS: number;
  machineS: number;
  commands: number;
  scriptCalls: number;
  /** Calls by command. */
  byCommand: Map<string, number>;
  errors: number;
  firstError: string | null;
}

export const emptyTally = (): Tally => ({
  completed: 0,
  windowS: 0,
  webS: 0,
  workerS: 0,
  redisS: 0,
  upstreamS: 0,
  clientS: 0,
  machineS: 0,
  commands: 0,
  scriptCalls: 0,
  byCommand: new Map(),
  errors: 0,
  firstError: null,
});

async function sample(monitor: Redis, pids: { web: number; worker: number; upstream: number }): Promise<Sample> {
  const [redis, web, worker, upstream, client, machine] = await Promise.all([
    sampleRedis(monitor),
    readCpuSeconds(pids.web),
    readCpuSeconds(pids.worker),
    readCpuSeconds(pids.upstream),
    readCpuSeconds(process.pid),
    readMachineBusySeconds(),
  ]);
  return { redis, web, worker, upstream, client, machine };
}

/** Runs a request for --warm seconds (at least 1) unmeasured, counting its errors: V8 optimises each path only once it has run. */
export async function prime(request: LoopRequest, settings: LoadSettings, into: Tally): Promise<void> {
  const run = await runClosedLoop({ ...request, warmS: 0, durS: Math.max(1, settings.warmS), probe: async () => null });
  into.errors += run.errors;
  into.firstError ??= run.firstError;
}

/** One warm-up and window of `request` on `stack`, whose Redis `monitor` reads, added to `into`. */
export async function measure(stack: BenchStack, monitor: Redis, request: LoopRequest, settings: LoadSettings, into: Tally): Promise<void> {
  const { web, workers, upstream } = stack.processes;
  const pids = { web: web.child.pid as number, worker: workers[0]?.child.pid as number, upstream: upstream.child.pid as number };
  const run = await runClosedLoop<Sample>({ ...request, warmS: settings.warmS, durS: settings.durS, probe: () => sample(monitor, pids) });
  const { before: b, after: a } = run;
  // Per 1 unit: the window's totals, the INFO call of `before` left out.
  const redis = costPer(b.redis, a.redis, 1);
  into.completed += run.completed;
  into.windowS += run.windowS;
  into.webS += a.web - b.web;
  into.workerS += a.worker - b.worker;
  into.redisS += redis.cpuUs / 1e6;
  into.upstreamS += a.upstream - b.upstream;
  into.clientS += a.client - b.client;
  into.machineS += a.machine - b.machine;
  into.commands += redis.commands;
  into.scriptCalls += redis.scriptCalls;
  for (const { command, calls } of redis.byCommand) into.byCommand.set(command, (into.byCommand.get(command) ?? 0) + calls);
  into.errors += run.errors;
  into.firstError ??= run.firstError;
}

/** Per request figures of one cell. */
export interface RequestCost {
  completed: number;
  perSecond: number;
  webUs: number;
  workerUs: number;
  redisCommands: number;
  redisScriptCalls: number;
  redisUs: number;
  /** Machine busy time not charged to web, worker, Redis, the upstream or the bench process (PostgreSQL among it), % of one core. */
  otherPercent: number;
  errors: number;
  firstError: string | null;
  /** Redis calls per request by command, most first. */
  byCommand: Record<string, number>;
}

export function summarise(t: Tally): RequestCost {
  const per = (value: number) => (t.completed > 0 ? value / t.completed : Number.NaN);
  const named = t.webS + t.workerS + t.redisS + t.upstreamS + t.clientS;
  const byCommand = Object.fromEntries([...t.byCommand].sort((x, y) => y[1] - x[1]).map(([command, calls]) => [command, per(calls)]));
  return {
    completed: t.completed,
    perSecond: t.completed / t.windowS,
    webUs: per(t.webS * 1e6),
    workerUs: per(t.workerS * 1e6),
    redisCommands: per(t.commands),
    redisScriptCalls: per(t.scriptCalls),
    redisUs: per(t.redisS * 1e6),
    otherPercent: Math.max(0, (100 * (t.machineS - named)) / t.windowS),
    errors: t.errors,
    firstError: t.firstError,
    byCommand,
  };
}

/** The header of costRow's table, `÷ <reference>` after each figure that has a ratio. */
export function costHeader(first: string, reference: string): string[] {
  const vs = `÷ ${reference}`;
  return [first, 'req/s', vs, 'web µs', vs, 'worker µs', vs, 'Redis cmds', vs, 'scripts', 'Redis µs', vs, 'total µs', vs, 'errors', 'other %'];
}

/** A row of figures with their ratios to `reference`: blank where the row is the reference itself (null), `—` where it was not measured. */
export function costRow(name: string, r: RequestCost, reference: RequestCost | null | undefined): string[] {
  const total = (x: RequestCost) => x.webUs + x.workerUs + x.redisUs;
  const vs = (pick: (x: RequestCost) => number) => (reference === null ? '' : num(ratio(reference && pick(reference), pick(r)), 2));
  return [
    name,
    num(r.perSecond, 0),
    vs((x) => x.perSecond),
    num(r.webUs, 0),
    vs((x) => x.webUs),
    num(r.workerUs, 0),
    vs((x) => x.workerUs),
    num(r.redisCommands, 1),
    vs((x) => x.redisCommands),
    num(r.redisScriptCalls, 2),
    num(r.redisUs, 0),
    vs((x) => x.redisUs),
    num(total(r), 0),
    vs(total),
    String(r.errors),
    num(r.otherPercent, 0),
  ];
}
