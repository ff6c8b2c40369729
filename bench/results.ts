/** The bench's measured figures, the targets they are judged against, and the printed report. */

/** Non-streamed JSON completions, or streams of 20 content chunks. */
export type Mode = 'json' | 'stream';
/** Where the load goes: straight to the bench upstream, or through web + worker. */
export type Target = 'direct' | 'gateway';

/** One autocannon cell. Latencies in ms (autocannon's whole-millisecond histogram). */
export interface Cell {
  mode: Mode;
  connections: number;
  target: Target;
  rps: number;
  p50: number;
  p99: number;
  completed: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  /** Errors, timeouts and non-2xx answers during the cell's warm-up. */
  warmupFailures: number;
  /** CPU per process during the cell, percent of one core. */
  cpu: Record<string, number>;
}

/** Concurrency-1 percentiles in ms for one measurement. */
export interface Precise {
  what: 'json latency' | 'stream TTFT' | 'stream total';
  direct: { p50: number; p99: number; n: number };
  gateway: { p50: number; p99: number; n: number };
}

/** Memory of one process at the end of the run, in KiB. */
export interface Memory {
  process: string;
  pid: number;
  /** VmRSS once the stack was ready, before any load. */
  startKb: number;
  peakKb: number;
  currentKb: number;
}

/** Everything one run measured. */
export interface BenchResults {
  settings: {
    durationS: number;
    warmupS: number;
    sequentialRequests: number;
    workers: number;
    workerConcurrency: number;
    upstreamConnections: number;
    cores: number;
  };
  cells: Cell[];
  precise: Precise[];
  sequentialErrors: { target: string; what: string; errors: number; firstError: string | null }[];
  memory: Memory[];
}

/** The targets of the spec. */
export const TARGETS = { addedJsonP50Ms: 1, addedTtftP50Ms: 2, jsonRpsAt64: 3000, streamRpsAt64: 1200 } as const;

/** One target and whether the run met it. */
export interface Verdict {
  target: string;
  measured: string;
  /** null when the run did not measure it (a subset of cells was selected). */
  met: boolean | null;
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const pad = (text: string, width: number) => text.padStart(width);

function cell(results: BenchResults, mode: Mode, connections: number, target: Target): Cell | undefined {
  return results.cells.find((c) => c.mode === mode && c.connections === connections && c.target === target);
}

const judge = (value: number, ok: (v: number) => boolean): boolean | null => (Number.isFinite(value) ? ok(value) : null);

/** Judges the run against TARGETS. */
export function verdicts(results: BenchResults): Verdict[] {
  const out: Verdict[] = [];
  const added = (what: Precise['what']) => {
    const p = results.precise.find((x) => x.what === what);
    return p ? p.gateway.p50 - p.direct.p50 : Number.NaN;
  };
  const json = added('json latency');
  out.push({
    target: `added p50 @1, non-streaming <= ${TARGETS.addedJsonP50Ms} ms`,
    measured: `${fixed(json, 3)} ms`,
    met: judge(json, (v) => v <= TARGETS.addedJsonP50Ms),
  });
  const ttft = added('stream TTFT');
  out.push({
    target: `added p50 @1, time to first token <= ${TARGETS.addedTtftP50Ms} ms`,
    measured: `${fixed(ttft, 3)} ms`,
    met: judge(ttft, (v) => v <= TARGETS.addedTtftP50Ms),
  });
  const jsonRps = cell(results, 'json', 64, 'gateway')?.rps ?? Number.NaN;
  out.push({
    target: `gateway completions/s @64 >= ${TARGETS.jsonRpsAt64}`,
    measured: fixed(jsonRps, 0),
    met: judge(jsonRps, (v) => v >= TARGETS.jsonRpsAt64),
  });
  const streamRps = cell(results, 'stream', 64, 'gateway')?.rps ?? Number.NaN;
  out.push({
    target: `gateway streams/s @64 >= ${TARGETS.streamRpsAt64}`,
    measured: fixed(streamRps, 0),
    met: judge(streamRps, (v) => v >= TARGETS.streamRpsAt64),
  });
  const errors =
    results.cells.reduce((sum, c) => sum + c.errors + c.timeouts + c.non2xx + c.warmupFailures, 0) +
    results.sequentialErrors.reduce((sum, e) => sum + e.errors, 0);
  out.push({ target: 'zero errors (non-2xx, socket errors, timeouts, bad streams)', measured: String(errors), met: errors === 0 });
  return out;
}

/** The human-readable report: throughput/latency table, concurrency-1 timings, targets, CPU and memory. */
export function formatReport(results: BenchResults): string {
  const lines: string[] = [];
  const s = results.settings;
  lines.push(`gateway-load: ${s.durationS} s per cell after ${s.warmupS} s warm-up; ${s.cores} cores shared by bench client, upstream, web, worker, Redis`);
  lines.push(`${s.workers} worker process(es): WORKER_CONCURRENCY=${s.workerConcurrency} UPSTREAM_CONNECTIONS=${s.upstreamConnections}; LOG_LEVEL=warn`);
  lines.push('');
  lines.push('autocannon (latency in whole ms; errors: e = socket errors + timeouts, n = non-2xx, w = failures during warm-up)');
  lines.push('mode    conns |  direct req/s  p50  p99 | gateway req/s  p50  p99 | gw/direct  +p50  +p99 | errors direct/gateway');
  const modes = [...new Set(results.cells.map((c) => c.mode))];
  const connections = [...new Set(results.cells.map((c) => c.connections))];
  for (const mode of modes) {
    for (const conns of connections) {
      const d = cell(results, mode, conns, 'direct');
      const g = cell(results, mode, conns, 'gateway');
      const side = (c: Cell | undefined) => (c ? `${pad(fixed(c.rps, 0), 13)} ${pad(String(c.p50), 4)} ${pad(String(c.p99), 4)}` : pad('-', 23));
      const ratio = d && g ? pad(fixed(g.rps / d.rps, 3), 9) : pad('-', 9);
      const addedP50 = d && g ? pad(String(g.p50 - d.p50), 5) : pad('-', 5);
      const addedP99 = d && g ? pad(String(g.p99 - d.p99), 5) : pad('-', 5);
      const errs = (c: Cell | undefined) => (c ? `${c.errors + c.timeouts}e/${c.non2xx}n${c.warmupFailures > 0 ? `/${c.warmupFailures}w` : ''}` : '-');
      lines.push(`${mode.padEnd(7)} ${pad(String(conns), 5)} |${side(d)} |${side(g)} | ${ratio} ${addedP50} ${addedP99} | ${errs(d)} ${errs(g)}`);
    }
  }
  lines.push('');
  lines.push(`concurrency 1, sequential (ms, undici client)   direct p50    p99 | gateway p50    p99 | added p50    p99 | n`);
  for (const p of results.precise) {
    lines.push(
      `${p.what.padEnd(46)} ${pad(fixed(p.direct.p50, 3), 10)} ${pad(fixed(p.direct.p99, 3), 6)} | ${pad(fixed(p.gateway.p50, 3), 11)} ${pad(fixed(p.gateway.p99, 3), 6)} | ${pad(fixed(p.gateway.p50 - p.direct.p50, 3), 9)} ${pad(fixed(p.gateway.p99 - p.direct.p99, 3), 6)} | ${p.gateway.n}`,
    );
  }
  for (const e of results.sequentialErrors.filter((x) => x.errors > 0)) lines.push(`  ${e.what} ${e.target}: ${e.errors} errors, first: ${e.firstError}`);
  lines.push('');
  lines.push('targets');
  for (const v of verdicts(results)) lines.push(`  ${v.met === null ? 'n/a   ' : v.met ? 'MET   ' : 'MISSED'} ${v.target.padEnd(58)} measured ${v.measured}`);
  lines.push('');
  const names = [...new Set(results.cells.flatMap((c) => Object.keys(c.cpu)))];
  lines.push(`CPU during each cell (% of one core; ${s.cores * 100}% is the whole machine)`);
  lines.push(`mode    conns target  | ${names.map((n) => pad(n, 8)).join(' ')}`);
  for (const c of results.cells) {
    lines.push(`${c.mode.padEnd(7)} ${pad(String(c.connections), 5)} ${c.target.padEnd(7)} | ${names.map((n) => pad(fixed(c.cpu[n] ?? 0, 0), 8)).join(' ')}`);
  }
  lines.push('');
  lines.push('memory (MiB)              RSS before load  peak VmHWM  VmRSS at end');
  for (const m of results.memory) {
    lines.push(
      `${`${m.process} (pid ${m.pid})`.padEnd(26)} ${pad(fixed(m.startKb / 1024, 1), 15)} ${pad(fixed(m.peakKb / 1024, 1), 11)} ${pad(fixed(m.currentKb / 1024, 1), 13)}`,
    );
  }
  return lines.join('\n');
}
