/** The figures of bench/admission-cost.ts, their summary over rounds, and the printed report. */
import { percentile, type SequentialSamples } from './sequential.ts';

/** The two tenants compared. */
export type Variant = 'bare' | 'full';
/** Both variants, in the order of odd rounds. */
export const VARIANTS: readonly Variant[] = ['bare', 'full'];

/** Redis's own figures per completed request (INFO commandstats and used_memory, diffed over a cell). */
export interface RedisPerRequest {
  /** Every command run, those inside scripts included. */
  commands: number;
  /** EVALSHA/EVAL calls, and the µs Redis spent in them (their inner commands included). */
  scripts: number;
  scriptUs: number;
  /** Growth of used_memory (what outlives the request: event streams, markers, idempotency records). */
  bytes: number;
}

/** One autocannon cell: latencies in whole ms, CPU in µs per completed request. */
export interface LoadCell {
  variant: Variant;
  round: number;
  rps: number;
  p50: number;
  p99: number;
  completed: number;
  /** Non-2xx, socket errors and timeouts, warm-up included. */
  failures: number;
  /** Busy time of the whole machine and of processes outside the bench (other work disturbs the cell), % of one core. */
  machinePercent: number;
  otherPercent: number;
  cpuUsPerRequest: Record<string, number>;
  redis: RedisPerRequest;
}

/** How the run was set up, for the report's header. */
export interface RunSettings {
  sequentialWarmup: number;
  rounds: number;
  durationS: number;
  warmupS: number;
  connections: number;
}

/** Everything the report prints, also printed as JSON. */
export interface Summary {
  sequential: Record<Variant, { p50: number; p99: number; mean: number; n: number; errors: number; firstError: string | null }>;
  /** Median of full − bare over requests sent one after the other (their disturbances are alike); NaN after errors. */
  pairedAddedMs: number;
  /** Busy time of the machine and of processes outside the bench during the concurrency-1 part, % of one core. */
  sequentialCpu: { machine: number; other: number };
  /** The rounds the load figures are the median of: the quiet ones, or all when none was. */
  roundsUsed: number[];
  quiet: boolean;
  load: Record<Variant, { rps: number; p50: number; p99: number; failures: number; cpuUsPerRequest: Record<string, number>; redis: RedisPerRequest }>;
}

/** Other work on the machine above this (% of one core) during either cell of a round makes the round disturbed. */
export const QUIET_OTHER_PERCENT = 25;

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const mean = (values: readonly number[]) => (values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Rounds in which neither cell was disturbed by processes outside the bench. */
function quietRounds(cells: readonly LoadCell[]): number[] {
  const all = [...new Set(cells.map((c) => c.round))];
  return all.filter((round) => cells.filter((c) => c.round === round).every((c) => c.otherPercent <= QUIET_OTHER_PERCENT));
}

/** Percentiles of the concurrency-1 samples, and the median over quiet rounds of each load figure. */
export function summarise(samples: Map<string, SequentialSamples>, cells: readonly LoadCell[], sequentialCpu: Record<string, number>): Summary {
  const seq = (variant: Variant) => {
    const s = samples.get(variant) as SequentialSamples;
    return {
      p50: percentile(s.totalMs, 50),
      p99: percentile(s.totalMs, 99),
      mean: mean(s.totalMs),
      n: s.totalMs.length,
      errors: s.errors,
      firstError: s.firstError,
    };
  };
  const quiet = quietRounds(cells);
  // The median rather than the mean: one cell disturbed by other work does not move it.
  const used = quiet.length > 0 ? quiet : [...new Set(cells.map((c) => c.round))];
  const load = (variant: Variant) => {
    const mine = cells.filter((c) => c.variant === variant && used.includes(c.round));
    const of = (pick: (c: LoadCell) => number) => median(mine.map(pick));
    const names = Object.keys(mine[0]?.cpuUsPerRequest ?? {});
    return {
      rps: of((c) => c.rps),
      p50: of((c) => c.p50),
      p99: of((c) => c.p99),
      failures: cells.filter((c) => c.variant === variant).reduce((sum, c) => sum + c.failures, 0),
      cpuUsPerRequest: Object.fromEntries(names.map((n) => [n, of((c) => c.cpuUsPerRequest[n] ?? Number.NaN)])),
      redis: {
        commands: of((c) => c.redis.commands),
        scripts: of((c) => c.redis.scripts),
        scriptUs: of((c) => c.redis.scriptUs),
        bytes: of((c) => c.redis.bytes),
      },
    };
  };
  const bare = (samples.get('bare') as SequentialSamples).totalMs;
  const full = (samples.get('full') as SequentialSamples).totalMs;
  return {
    sequential: { bare: seq('bare'), full: seq('full') },
    pairedAddedMs: bare.length === full.length ? median(full.map((value, i) => value - (bare[i] as number))) : Number.NaN,
    sequentialCpu: { machine: sequentialCpu.total ?? Number.NaN, other: sequentialCpu.other ?? Number.NaN },
    roundsUsed: used,
    quiet: quiet.length > 0,
    load: { bare: load('bare'), full: load('full') },
  };
}

/** The human-readable report: bare vs full and the difference, each autocannon cell, the tenants' Redis keys. */
export function formatReport(settings: RunSettings, summary: Summary, cells: readonly LoadCell[], keys: Record<Variant, Record<string, number>>): string {
  const lines: string[] = [];
  const row = (label: string, bare: number, full: number, digits: number) =>
    `${label.padEnd(38)} ${fixed(bare, digits).padStart(10)} ${fixed(full, digits).padStart(10)} ${fixed(full - bare, digits).padStart(12)}`;
  const { sequential: s, load: l } = summary;
  const c = settings.connections;
  lines.push(
    `admission-cost: 1 web + 1 worker; concurrency 1: ${settings.sequentialWarmup} warm-up + ${s.bare.n}/${s.full.n} requests per tenant, alternating;`,
  );
  lines.push(
    `autocannon: ${settings.rounds} round(s) × {bare, full} × ${settings.durationS} s after ${settings.warmupS} s warm-up, ${c} connections, order alternating per round`,
  );
  lines.push('');
  lines.push(`${''.padEnd(38)} ${'bare'.padStart(10)} ${'full'.padStart(10)} ${'full − bare'.padStart(12)}`);
  lines.push(row('concurrency 1, p50 (ms)', s.bare.p50, s.full.p50, 3));
  lines.push(row('concurrency 1, p99 (ms)', s.bare.p99, s.full.p99, 3));
  lines.push(row('concurrency 1, mean (ms)', s.bare.mean, s.full.mean, 3));
  lines.push(`${'concurrency 1, median of pairs (ms)'.padEnd(60)} ${fixed(summary.pairedAddedMs, 3).padStart(12)}`);
  lines.push(
    `  (during the concurrency-1 part: machine busy ${fixed(summary.sequentialCpu.machine, 0)} %, processes outside the bench ${fixed(summary.sequentialCpu.other, 0)} % of one core)`,
  );
  const which = summary.quiet
    ? `quiet round(s) ${summary.roundsUsed.join(', ')}`
    : `all rounds: NONE was quiet (other work > ${QUIET_OTHER_PERCENT} % of a core), figures disturbed`;
  lines.push(`at ${c} connections, median of ${which}:`);
  lines.push(row(`req/s at ${c} connections`, l.bare.rps, l.full.rps, 0));
  lines.push(row(`p50 at ${c} (ms)`, l.bare.p50, l.full.p50, 1));
  lines.push(row(`p99 at ${c} (ms)`, l.bare.p99, l.full.p99, 1));
  for (const name of Object.keys(l.bare.cpuUsPerRequest)) {
    lines.push(row(`CPU µs/request at ${c}: ${name}`, l.bare.cpuUsPerRequest[name] ?? Number.NaN, l.full.cpuUsPerRequest[name] ?? Number.NaN, 0));
  }
  lines.push(row('Redis commands/request (all)', l.bare.redis.commands, l.full.redis.commands, 1));
  lines.push(row('Redis scripts/request', l.bare.redis.scripts, l.full.redis.scripts, 2));
  lines.push(row('Redis µs in scripts/request', l.bare.redis.scriptUs, l.full.redis.scriptUs, 0));
  lines.push(row('Redis used_memory growth, B/request', l.bare.redis.bytes, l.full.redis.bytes, 0));
  lines.push(`failures (non-2xx, socket errors, timeouts): bare ${s.bare.errors + l.bare.failures}, full ${s.full.errors + l.full.failures}`);
  for (const v of VARIANTS) if (s[v].firstError) lines.push(`  first concurrency-1 error of ${v}: ${s[v].firstError}`);
  lines.push('');
  lines.push('autocannon cells (machine, other: % of one core; other = processes outside the bench)');
  lines.push('round variant   req/s  p50  p99 | machine other | µs/request: web worker redis');
  for (const cell of cells) {
    const us = (name: string) => fixed(cell.cpuUsPerRequest[name] ?? Number.NaN, 0);
    const head = `${String(cell.round).padStart(5)} ${cell.variant.padEnd(7)} ${fixed(cell.rps, 0).padStart(7)} ${String(cell.p50).padStart(4)} ${String(cell.p99).padStart(4)}`;
    lines.push(
      `${head} | ${fixed(cell.machinePercent, 0).padStart(7)} ${fixed(cell.otherPercent, 0).padStart(5)} | ${us('web').padStart(15)} ${us('worker').padStart(6)} ${us('redis').padStart(5)}`,
    );
  }
  lines.push('');
  for (const v of VARIANTS) lines.push(`Redis keys of the ${v} tenant at the end, by kind: ${JSON.stringify(keys[v])}`);
  return lines.join('\n');
}
