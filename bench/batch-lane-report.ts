/** The figures of bench/batch-lane.ts, the goals they are judged against, and its printed report. */
import { percentile } from './sequential.ts';
import { num, table } from './report-format.ts';
import type { BatchRun, OutputCheck } from './batch-api.ts';
import type { RssByProcess, RssSpan } from './rss-sampler.ts';

/** The run's settings, as the command line and the environment gave them. */
export interface Settings {
  lines: number;
  rate: number;
  seconds: number;
  latencyMs: number;
  workerConcurrency: number;
  superviseMs: number;
  memoryMb: number;
  memoryLines: number;
  memoryLatencyMs: number;
  batchTimeoutS: number;
  skipMemory: boolean;
  skipAlone: boolean;
  json: boolean;
  /** Batch settings passed on from the bench's environment (BATCH_LANE_SHARE…), as given. */
  batchEnv: Record<string, string>;
  /** Lines of one tenant at once: floor(WORKER_CONCURRENCY × BATCH_TENANT_SHARE), as the worker computes it. */
  tenantSlots: number;
}

/** One phase of the interactive load. */
export interface InteractivePhase {
  sent: number;
  errors: number;
  firstError: string | null;
  elapsedS: number;
  maxSendLagMs: number;
  /** From the moment each request was due to the end of its answer. */
  endToEndMs: number[];
  /** From the usage records: enqueue to a worker's start, and enqueue to the end. */
  queueWaitMs: number[];
  recordedLatencyMs: number[];
  /** Good answers without a usage record when the bench stopped waiting for them. */
  missingRecords: number;
  /** Percent of one core over the phase, by process (`other`: the rest of the machine, PostgreSQL included). */
  cpu: Record<string, number>;
  /** Phase B: the batch's lines with a result when the load began and when it ended. */
  batchLines?: { atStart: number; atEnd: number };
}

/** One batch run to its end. */
export interface BatchPhase {
  lines: number;
  upload: { bytes: number; seconds: number };
  run: BatchRun;
  output: OutputCheck | null;
  /** Percent of one core by process, from the create call to the batch's end. */
  cpu: Record<string, number>;
}

/** The 200 MB batch and the memory of web and worker around it, in KiB. */
export interface MemoryPhase {
  batch: BatchPhase;
  before: RssByProcess;
  upload: RssSpan;
  /** From the create call to the batch's end (the peak's time counts from the create call too). */
  run: RssSpan;
  /** While the bench read the output file back. */
  download: RssSpan;
}

/** Everything one run measured. */
export interface LaneReport {
  label: string;
  date: string;
  load: { start: string; end?: string };
  settings: Settings;
  a?: InteractivePhase;
  b?: InteractivePhase;
  /** Phase A again, once the batch of phase B has ended: how much the machine drifted. */
  a2?: InteractivePhase;
  batchB?: BatchPhase;
  alone?: BatchPhase;
  memory?: MemoryPhase;
  logs?: string;
}

/** The most p99(B)/p99(A) of the interactive queue wait may be. */
export const RATIO_GOAL = 1.25;
/** The most web or worker may grow, in MiB, uploading or running the large batch. */
export const MEMORY_GOAL_MB = 100;

/** One goal and whether the run met it (null: not measured). */
export interface Verdict {
  kind: 'correctness' | 'goal';
  what: string;
  met: boolean | null;
}

const mb = (kb: number | undefined) => (kb === undefined ? undefined : kb / 1024);

function quantiles(values: readonly number[]) {
  return {
    n: values.length,
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    max: values.length === 0 ? Number.NaN : values.reduce((a, b) => Math.max(a, b)),
  };
}

/** The no-batch baseline: phases A and A′ together (A alone when A′ did not run). */
function baseline(report: LaneReport, pick: (p: InteractivePhase) => number[]): number[] | undefined {
  if (!report.a) return undefined;
  return report.a2 ? [...pick(report.a), ...pick(report.a2)] : pick(report.a);
}

/**
 * p99(B) over p99 of the no-batch phases (A, A′, and both together: the baseline the goal is judged
 * on, so that one disturbed phase neither flatters nor condemns B), of the interactive queue wait and
 * end-to-end latency, and A′/A: how far two phases without a batch differ. Undefined where a base is 0 or missing.
 */
export function ratios(report: LaneReport) {
  const p99 = (values: number[] | undefined) => (values === undefined ? undefined : percentile(values, 99));
  const over = (top: number | undefined, base: number | undefined) => (top === undefined || base === undefined || base <= 0 ? undefined : top / base);
  const wait = (p: InteractivePhase) => p.queueWaitMs;
  const e2e = (p: InteractivePhase) => p.endToEndMs;
  const b = (pick: (p: InteractivePhase) => number[]) => p99(report.b && pick(report.b));
  return {
    queueWait: over(b(wait), p99(report.a?.queueWaitMs)),
    queueWaitAfter: over(b(wait), p99(report.a2?.queueWaitMs)),
    judged: over(b(wait), p99(baseline(report, wait))),
    queueWaitDrift: over(p99(report.a2?.queueWaitMs), p99(report.a?.queueWaitMs)),
    endToEnd: over(b(e2e), p99(report.a?.endToEndMs)),
    endToEndBaseline: over(b(e2e), p99(baseline(report, e2e))),
  };
}

function batchVerdicts(name: string, batch: BatchPhase | undefined): Verdict[] {
  if (!batch) return [];
  const { run, output } = batch;
  return [
    {
      kind: 'correctness',
      what: `${name}: completed, every line succeeded`,
      met: run.status === 'completed' && run.completed === batch.lines && run.failed === 0,
    },
    { kind: 'correctness', what: `${name}: output file has ${batch.lines} lines, each 200, each custom_id once`, met: outputComplete(batch.lines, output) },
  ];
}

function outputComplete(lines: number, output: OutputCheck | null): boolean {
  return output !== null && output.lines === lines && output.status200 === lines && output.distinctCustomIds === lines;
}

/** Every goal of the run; correctness ones decide the exit code. */
export function verdicts(report: LaneReport): Verdict[] {
  const out: Verdict[] = [];
  for (const [name, phase] of [
    ['phase A', report.a],
    ['phase B', report.b],
    ['phase A′', report.a2],
  ] as const) {
    if (!phase) continue;
    out.push({
      kind: 'correctness',
      what: `${name}: every interactive request answered 200, with its usage record`,
      met: phase.errors === 0 && phase.missingRecords === 0,
    });
  }
  out.push(
    ...batchVerdicts('batch alongside the load', report.batchB),
    ...batchVerdicts('batch alone', report.alone),
    ...batchVerdicts('200 MB batch', report.memory?.batch),
  );
  const ratio = ratios(report).judged;
  if (report.a && report.b) out.push({ kind: 'goal', what: `p99 queue wait B/(A+A′) ≤ ${RATIO_GOAL}`, met: ratio === undefined ? null : ratio <= RATIO_GOAL });
  if (report.memory) {
    const m = report.memory;
    for (const name of ['web', 'worker']) {
      const growth = Math.max(m.upload.peakKb[name] ?? 0, m.run.peakKb[name] ?? 0) - (m.before[name] ?? 0);
      out.push({ kind: 'goal', what: `${name} grows < ${MEMORY_GOAL_MB} MB (upload and run)`, met: growth / 1024 < MEMORY_GOAL_MB });
    }
  }
  return out;
}

function interactiveRow(name: string, p: InteractivePhase | undefined): string[] {
  if (!p) return [name, '—', '—', '—', '—', '—', '—', '—', '—', '—'];
  const wait = quantiles(p.queueWaitMs);
  const e2e = quantiles(p.endToEndMs);
  const cpu = `${num(p.cpu.web, 0)} / ${num(p.cpu.worker, 0)} / ${num(p.cpu.redis, 0)} / ${num(p.cpu.other, 0)} / ${num(p.cpu.total, 0)}`;
  return [name, num(p.sent, 0), num(p.errors, 0), num(wait.p50, 0), num(wait.p99, 0), num(wait.max, 0), num(e2e.p50, 1), num(e2e.p99, 1), num(e2e.max, 1), cpu];
}

function batchRow(name: string, b: BatchPhase | undefined, latencyMs: number): string[] {
  if (!b) return [name, '—', '—', '—', '—', '—', '—', '—', '—', '—'];
  const { run } = b;
  const running = run.linesDoneS !== null && run.inProgressS !== null ? run.linesDoneS - run.inProgressS : undefined;
  const output = b.output ? `${num(b.output.lines, 0)} (${num(b.output.status200, 0)} × 200)` : '—';
  return [
    name,
    num(b.lines, 0),
    `${num(b.upload.bytes / 1e6, 1)} MB in ${num(b.upload.seconds, 1)} s`,
    `${run.status} (${num(run.completed, 0)} ok, ${num(run.failed, 0)} failed)`,
    output,
    num(run.inProgressS ?? undefined, 1),
    num(running, 1),
    num(run.endedS ?? undefined, 1),
    `**${num(running === undefined ? undefined : b.lines / running, 0)}** (${num(run.endedS ? b.lines / run.endedS : undefined, 0)})`,
    `${num(b.cpu.worker, 0)} / ${num(b.cpu.total, 0)} (${num(latencyMs, 0)} ms)`,
  ];
}

function memoryRows(m: MemoryPhase): string[][] {
  return ['web', 'worker'].map((name) => {
    const before = m.before[name] ?? 0;
    const { upload, run, download } = m;
    return [
      name,
      num(mb(before), 0),
      `${num(mb(upload.peakKb[name]), 0)} (${num(upload.peakAtS[name], 1)} s)`,
      `**${num(mb((upload.peakKb[name] ?? 0) - before), 0)}**`,
      `${num(mb(run.peakKb[name]), 0)} (${num(run.peakAtS[name], 1)} s)`,
      `**${num(mb((run.peakKb[name] ?? 0) - before), 0)}**`,
      `${num(mb(download.peakKb[name]), 0)} (+${num(mb((download.peakKb[name] ?? 0) - before), 0)})`,
    ];
  });
}

function settingsLine(s: Settings): string {
  const env = Object.entries(s.batchEnv).map(([k, v]) => `${k}=${v}`);
  return (
    `One web, one worker (WORKER_CONCURRENCY=${s.workerConcurrency}, BATCH_SUPERVISE_INTERVAL_MS=${s.superviseMs}${env.length > 0 ? `, ${env.join(', ')}` : ''}; ` +
    `${s.tenantSlots} batch lines of a tenant at once), a private Redis, every admission feature on. Interactive: ${s.rate} non-streamed chat completions/s for ` +
    `${s.seconds} s a phase on the simulator answering after ${s.latencyMs} ms (~${num((s.rate * s.latencyMs) / 10 / s.workerConcurrency, 0)} % of WORKER_CONCURRENCY busy); ` +
    `batches of ${num(s.lines, 0)} short lines on the same model, another tenant's.`
  );
}

/** The Markdown report. */
export function formatReport(report: LaneReport): string {
  const s = report.settings;
  const lines: string[] = [];
  lines.push(`batch-lane at ${report.label}, ${report.date}; load average ${report.load.start} at the start, ${report.load.end ?? '—'} at the end`);
  lines.push(settingsLine(s));
  lines.push('');
  lines.push('Interactive requests (queue wait from the usage records, ms; end to end from the moment each was due, ms; CPU % of one core):');
  lines.push('');
  const header = ['phase', 'requests', 'errors', 'queue wait p50', 'p99', 'max', 'end to end p50', 'p99', 'max', 'CPU web / worker / redis / other / total'];
  lines.push(
    table(header, [
      interactiveRow('A: no batch', report.a),
      interactiveRow(`B: a ${num(s.lines, 0)}-line batch running`, report.b),
      interactiveRow('A′: no batch, after B’s batch ended', report.a2),
    ]),
  );
  const r = ratios(report);
  const b = report.b?.batchLines;
  const verdict = r.judged === undefined ? 'not measured' : r.judged <= RATIO_GOAL ? 'met' : 'NOT met';
  lines.push('');
  lines.push(
    `**p99 queue wait B/(A+A′): ${num(r.judged, 2)}** (goal ≤ ${RATIO_GOAL}: ${verdict}); B/A ${num(r.queueWait, 2)}, B/A′ ${num(r.queueWaitAfter, 2)}, ` +
      `and A′/A ${num(r.queueWaitDrift, 2)} (two phases without a batch). p99 end to end B/(A+A′): ${num(r.endToEndBaseline, 2)}, B/A ${num(r.endToEnd, 2)}.` +
      (b && report.b ? ` The batch ran ${num(b.atEnd - b.atStart, 0)} lines during phase B (${num((b.atEnd - b.atStart) / report.b.elapsedS, 0)}/s).` : ''),
  );
  for (const [name, p] of [
    ['A', report.a],
    ['B', report.b],
    ['A′', report.a2],
  ] as const) {
    if (p?.firstError) lines.push(`  phase ${name} error: ${p.firstError}`);
    if (p && p.missingRecords > 0) lines.push(`  phase ${name}: ${p.missingRecords} usage records missing`);
    if (p && p.maxSendLagMs > 50) lines.push(`  phase ${name}: the bench was up to ${num(p.maxSendLagMs, 0)} ms late to send a request`);
  }
  lines.push('');
  lines.push('Batches (seconds from the create call, as polled; lines/s over the lines running, and over create → completed):');
  lines.push('');
  lines.push(
    table(
      [
        'batch',
        'lines',
        'upload',
        'status',
        'output lines',
        'in_progress (s)',
        'lines running (s)',
        'completed (s)',
        'lines/s (whole)',
        'CPU worker / total (latency)',
      ],
      [
        batchRow('alongside phase B (and after)', report.batchB, s.latencyMs),
        batchRow('alone (full spare capacity)', report.alone, s.latencyMs),
        batchRow(`${s.memoryMb} MB input`, report.memory?.batch, s.memoryLatencyMs),
      ],
    ),
  );
  lines.push('');
  lines.push(`Ceiling of one tenant's batch: ${s.tenantSlots} lines at once ÷ ${s.latencyMs} ms = ${num((s.tenantSlots * 1000) / s.latencyMs, 0)} lines/s.`);
  for (const [name, phase] of [
    ['alongside', report.batchB],
    ['alone', report.alone],
    ['200 MB', report.memory?.batch],
  ] as const) {
    if (phase?.output?.firstBad) lines.push(`  ${name}: output line not a 200 result: ${phase.output.firstBad}`);
  }
  if (report.memory) {
    lines.push('');
    lines.push('Memory (VmRSS, MB, sampled every 50 ms; when the peak came, in seconds from the upload’s start and from the create call):');
    lines.push('');
    lines.push(
      table(['process', 'before upload', 'peak, upload', 'growth', 'peak, run', 'growth', 'peak, output read back (growth)'], memoryRows(report.memory)),
    );
  }
  lines.push('');
  lines.push('Goals:');
  for (const v of verdicts(report))
    lines.push(`  ${(v.met === null ? '?' : v.met ? 'met' : 'NOT MET').padEnd(9)}${v.kind === 'goal' ? '(goal) ' : ''}${v.what}`);
  if (report.logs) lines.push('', 'web/worker log lines at warn and above (count × process level message):', report.logs);
  return lines.join('\n');
}

function interactiveJson(p: InteractivePhase | undefined) {
  if (!p) return null;
  const { endToEndMs, queueWaitMs, recordedLatencyMs, ...rest } = p;
  return { ...rest, queueWait: quantiles(queueWaitMs), endToEnd: quantiles(endToEndMs), recordedLatency: quantiles(recordedLatencyMs) };
}

/** Every figure, for `--json`: percentiles rather than the samples. */
export function toJson(report: LaneReport) {
  const { a, b, a2, logs: _logs, ...rest } = report;
  return { ...rest, a: interactiveJson(a), b: interactiveJson(b), a2: interactiveJson(a2), ratios: ratios(report), verdicts: verdicts(report) };
}
