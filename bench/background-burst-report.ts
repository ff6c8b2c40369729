/** The figures of bench/background-burst.ts, the goals they are judged against, and the printed report. */
import { costPer, type RedisCost, type RedisSample } from './redis-stats.ts';
import { percentile } from './sequential.ts';
import { num, ratio, table } from './report-format.ts';
import type { GetCheck } from './background-burst-checks.ts';

/** The command line, validated. */
export interface Settings {
  requests: number;
  connections: number;
  /** The slow simulator model's delay before its answer. */
  latencyMs: number;
  workerConcurrency: number;
  /** Concurrency-1 pairs (background, synchronous). */
  sequential: number;
  warm: number;
  /** Requests of the burst sent with the worker stopped. */
  paused: number;
  /** Requests of the capped tenant, and its cap. */
  refuse: number;
  cap: number;
  drainTimeoutS: number;
  json: boolean;
}

/** One request's answer: accepted or completed (`ok`), refused with a 429 as documented, or anything else. */
export interface Outcome {
  /** 0 when no answer came (a socket error, a timeout). */
  status: number;
  latencyMs: number;
  kind: 'ok' | 'refused' | 'error';
  /** The response id (`resp_…`); for a refusal, the one its request id would have given. */
  id: string | null;
  detail: string | null;
}

/** The answers of a burst. */
export interface Burst {
  outcomes: Outcome[];
  elapsedS: number;
}

/** The counters at one instant. */
export interface Probe {
  atMs: number;
  redis: RedisSample;
  /** CPU seconds of web, of the worker, of this process (the load generator) and the machine's busy seconds, so far. */
  webS: number;
  workerS: number;
  clientS: number;
  machineS: number;
}

/** Redis's commands and CPU µs per second with nothing to do (BullMQ's blocking fetch, the outbox drainer's polls, the reaper, its own cron). */
export interface Idle {
  commandsPerS: number;
  cpuUsPerS: number;
}

/** What a span of time cost, per response. */
export interface PhaseCost {
  units: number;
  seconds: number;
  redis: RedisCost;
  webUs: number;
  workerUs: number;
  /** The idle rate times the span, per response: how much of `redis.commands` the gateway would have run anyway (null: not applicable). */
  idleCommands: number | null;
  /** The same for Redis's CPU µs. */
  idleCpuUs: number | null;
  /** The machine's busy time outside web, worker, Redis and the load generator (PostgreSQL among it), in % of one core. */
  otherPct: number;
}

/** Where the accepted responses stood when the drain ended. */
export interface Drain {
  /** Every one completed in the store with its usage record, and the outbox empty, before the timeout. */
  drained: boolean;
  /** Seconds from the last answer. */
  seconds: number;
  byStatus: Record<string, number>;
  usage: number;
}

/** A measured burst: its answers, the counters, the drain and the checks of every accepted id. */
export interface Phase {
  burst: Burst;
  /** From before the first request to the last answer. */
  answered: PhaseCost;
  /** From before the first request to every response completed in the store and the outbox empty. */
  whole: PhaseCost;
  drain: Drain;
  completedAtLastAnswer: number;
  notCompleted: Array<{ id: string; status: string }>;
  gets: GetCheck;
}

/** The capped tenant's burst. */
export interface RefusalPhase {
  burst: Burst;
  drain: Drain;
  notCompleted: Array<{ id: string; status: string }>;
  /** Rows and Redis states of the refused requests' would-be ids: both must be 0. */
  refusedStored: { rows: number; redisKeys: number };
  refusedByGet: GetCheck;
  outstanding: number;
}

/** Everything one run measured. */
export interface BurstReport {
  label: string;
  settings: Settings;
  date: string;
  /** /proc/loadavg's first three figures at the start and at the end. */
  load: { start: string; end?: string };
  idle?: Idle;
  sequential?: { background: Outcome[]; sync: Outcome[] };
  phases: { sync?: Phase; paused?: Phase; background?: Phase; refusal?: RefusalPhase };
  /** The background requests of the warm-up and of the concurrency-1 pairs: accepted, and of them not completed in the store. */
  earlier: { accepted: number; notCompleted: number };
  /** The stack tenant's queue-cap reservations left once everything ended. */
  outstanding?: number;
  /** The first failed requests, for the report. */
  errors: string[];
  logs?: string;
}

/** The goal: a background accept within this of a synchronous request. */
export const ACCEPT_GOAL_MS = 2;

/** The counters' difference divided by the responses. */
export function phaseCost(from: Probe, to: Probe, units: number, idle: Idle | null | undefined): PhaseCost {
  const seconds = (to.atMs - from.atMs) / 1000;
  const per = Math.max(units, 1);
  return {
    units,
    seconds,
    redis: costPer(from.redis, to.redis, per),
    webUs: ((to.webS - from.webS) * 1e6) / per,
    workerUs: ((to.workerS - from.workerS) * 1e6) / per,
    idleCommands: idle ? (idle.commandsPerS * seconds) / per : null,
    idleCpuUs: idle ? (idle.cpuUsPerS * seconds) / per : null,
    otherPct:
      (100 *
        (to.machineS -
          from.machineS -
          (to.webS - from.webS) -
          (to.workerS - from.workerS) -
          (to.clientS - from.clientS) -
          (to.redis.cpuSeconds - from.redis.cpuSeconds))) /
      seconds,
  };
}

interface Latency {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

function latency(outcomes: readonly Outcome[] | undefined, kind: Outcome['kind'] = 'ok'): Latency | undefined {
  if (!outcomes) return undefined;
  const values = outcomes.filter((o) => o.kind === kind).map((o) => o.latencyMs);
  if (values.length === 0) return undefined;
  return { n: values.length, p50: percentile(values, 50), p90: percentile(values, 90), p99: percentile(values, 99), max: Math.max(...values) };
}

function difference(a: Latency | undefined, b: Latency | undefined): Latency | undefined {
  if (!a || !b) return undefined;
  return { n: Math.min(a.n, b.n), p50: a.p50 - b.p50, p90: a.p90 - b.p90, p99: a.p99 - b.p99, max: a.max - b.max };
}

/** The median of (background i − synchronous i) over the concurrency-1 pairs, sent back to back. */
function pairedMedian(report: BurstReport): number | undefined {
  const pairs = report.sequential;
  if (!pairs) return undefined;
  const diffs = pairs.background.flatMap((bg, i) => {
    const sync = pairs.sync[i];
    return bg.kind === 'ok' && sync?.kind === 'ok' ? [bg.latencyMs - sync.latencyMs] : [];
  });
  return diffs.length === 0 ? undefined : percentile(diffs, 50);
}

const count = (burst: Burst | undefined, kind: Outcome['kind']) => burst?.outcomes.filter((o) => o.kind === kind).length ?? 0;

/** Every latency distribution of the run. */
function latencies(report: BurstReport) {
  const { sync, paused, background, refusal } = report.phases;
  const bg = latency(background?.burst.outcomes);
  const syncAtC = latency(sync?.burst.outcomes);
  const bg1 = latency(report.sequential?.background);
  const sync1 = latency(report.sequential?.sync);
  return {
    backgroundAtC: bg,
    syncAtC,
    differenceAtC: difference(bg, syncAtC),
    backgroundPausedAtC: latency(paused?.burst.outcomes),
    refusalAtC: latency(refusal?.burst.outcomes, 'refused'),
    acceptedCappedAtC: latency(refusal?.burst.outcomes),
    background1: bg1,
    sync1,
    difference1: difference(bg1, sync1),
    pairedMedian1: pairedMedian(report),
  };
}

/** One goal and whether the run met it (null: not measured); a `correctness` one failed makes the run fail. */
export interface Verdict {
  goal: string;
  measured: string;
  met: boolean | null;
  kind: 'correctness' | 'latency';
}

/** Judges the run: no error, none lost, clean refusals, reservations given back, accept latency. */
export function verdicts(report: BurstReport): Verdict[] {
  const { sync, paused, background, refusal } = report.phases;
  const phases = [sync, paused, background].filter((p): p is Phase => p !== undefined);
  const errors =
    phases.reduce((n, p) => n + count(p.burst, 'error'), 0) +
    count(refusal?.burst, 'error') +
    (report.sequential ? [...report.sequential.background, ...report.sequential.sync].filter((o) => o.kind === 'error').length : 0);
  const accepted = phases.reduce((n, p) => n + count(p.burst, 'ok'), 0) + count(refusal?.burst, 'ok') + report.earlier.accepted;
  const lost = phases.reduce((n, p) => n + p.notCompleted.length, 0) + (refusal?.notCompleted.length ?? 0) + report.earlier.notCompleted;
  const undrained = [...phases.map((p) => p.drain), ...(refusal ? [refusal.drain] : [])].filter((d) => !d.drained).length;
  const gets = phases.map((p) => p.gets);
  const badGets = gets.reduce((n, g) => n + g.checked - g.good, 0);
  const out: Verdict[] = [
    { goal: 'every answer a 200 of the right shape or a documented 429', measured: `${errors} other answers`, met: errors === 0, kind: 'correctness' },
    {
      goal: 'none lost: every accepted id completed in the store, with its usage record',
      measured: `${accepted - lost} of ${accepted}; ${undrained} drain(s) timed out`,
      met: lost === 0 && undrained === 0,
      kind: 'correctness',
    },
    {
      goal: 'GET /v1/responses/{id} of a sample: completed',
      measured: `${gets.reduce((n, g) => n + g.good, 0)} of ${gets.reduce((n, g) => n + g.checked, 0)}`,
      met: badGets === 0,
      kind: 'correctness',
    },
    {
      goal: 'queue-cap reservations all given back once the responses ended',
      measured: `${report.outstanding ?? '—'} left (stack tenant), ${refusal?.outstanding ?? '—'} (capped tenant)`,
      met: (report.outstanding ?? 0) === 0 && (refusal?.outstanding ?? 0) === 0,
      kind: 'correctness',
    },
  ];
  if (refusal) {
    const refused = count(refusal.burst, 'refused');
    const clean = refusal.refusedStored.rows === 0 && refusal.refusedStored.redisKeys === 0 && refusal.refusedByGet.good === refusal.refusedByGet.checked;
    out.push({
      goal: `refusals over the cap: 429 rate_limit_exceeded, nothing stored (row, Redis state, GET 404)`,
      measured: `${refused} refused; ${refusal.refusedStored.rows} rows, ${refusal.refusedStored.redisKeys} Redis states, ${refusal.refusedByGet.good}/${refusal.refusedByGet.checked} GETs 404`,
      met: refused > 0 && clean,
      kind: 'correctness',
    });
  }
  const l = latencies(report);
  const judge = (d: number | undefined) => (d === undefined ? null : d <= ACCEPT_GOAL_MS);
  out.push({
    goal: `accept p50 within ${ACCEPT_GOAL_MS} ms of a synchronous request's, concurrency 1`,
    measured: l.difference1 ? `${num(l.difference1.p50, 3)} ms (paired median ${num(l.pairedMedian1, 3)})` : '—',
    met: judge(l.difference1?.p50),
    kind: 'latency',
  });
  out.push({
    goal: `accept p50 within ${ACCEPT_GOAL_MS} ms of a synchronous request's, ${report.settings.connections} connections`,
    measured: l.differenceAtC ? `${num(l.differenceAtC.p50, 2)} ms` : '—',
    met: judge(l.differenceAtC?.p50),
    kind: 'latency',
  });
  return out;
}

const ms = (l: Latency | undefined, digits: number) =>
  l ? [num(l.p50, digits), num(l.p90, digits), num(l.p99, digits), num(l.max, digits)] : ['—', '—', '—', '—'];

/** The named rows whose figure the run measured. */
function measured<T>(rows: ReadonlyArray<readonly [string, T | undefined]>): Array<[string, T]> {
  return rows.flatMap(([name, value]) => (value === undefined ? [] : [[name, value] as [string, T]]));
}

function outcomeRows(report: BurstReport): string[][] {
  const { sync, paused, background, refusal } = report.phases;
  const c = report.settings.connections;
  return measured([
    [`synchronous (background false, simulator without latency), ×${c}`, sync?.burst],
    [`background, worker stopped, ×${c}`, paused?.burst],
    [`background, worker running, ×${c}`, background?.burst],
    [`background, tenant capped at ${report.settings.cap} queued, ×${c}`, refusal?.burst],
  ]).map(([name, b]) => [
    name,
    num(b.outcomes.length, 0),
    num(count(b, 'ok'), 0),
    num(count(b, 'refused'), 0),
    num(count(b, 'error'), 0),
    num(b.elapsedS, 1),
    num(b.outcomes.length / b.elapsedS, 0),
  ]);
}

function lostRows(report: BurstReport): string[][] {
  const { sync, paused, background, refusal } = report.phases;
  return measured<Phase | RefusalPhase>([
    ['synchronous', sync],
    ['background, worker stopped', paused],
    ['background, worker running', background],
    ['background, capped tenant', refusal],
  ]).map(([name, p]) => {
    const accepted = count(p.burst, 'ok');
    const gets = 'gets' in p ? `${p.gets.good}/${p.gets.checked}` : '—';
    const atAnswer = 'completedAtLastAnswer' in p ? num(p.completedAtLastAnswer, 0) : '—';
    const perS = p.drain.seconds > 0 ? num((accepted - ('completedAtLastAnswer' in p ? p.completedAtLastAnswer : 0)) / p.drain.seconds, 0) : '—';
    return [
      name,
      num(accepted, 0),
      atAnswer,
      num(p.drain.byStatus.completed ?? 0, 0),
      num(p.notCompleted.length, 0),
      num(p.drain.usage, 0),
      `${num(p.drain.seconds, 1)}${p.drain.drained ? '' : ' (timed out)'}`,
      perS,
      gets,
    ];
  });
}

/** The Redis and CPU rows: [span, its cost per response]. */
function costRows(report: BurstReport): Array<[string, PhaseCost]> {
  const { sync, paused, background } = report.phases;
  return measured([
    ['synchronous: request to answer', sync?.answered],
    ['synchronous: whole life (to outbox drained)', sync?.whole],
    ['background: accept alone (worker stopped)', paused?.answered],
    ['background: whole life (worker-stopped burst)', paused?.whole],
    ['background: burst window (worker running)', background?.answered],
    ['background: whole life (worker-running burst)', background?.whole],
  ]);
}

function commandRows(report: BurstReport): { header: string[]; rows: string[][] } {
  const { sync, paused, background } = report.phases;
  const present = measured([
    ['sync whole life', sync?.whole],
    ['bg accept alone', paused?.answered],
    ['bg whole life (stopped)', paused?.whole],
    ['bg whole life (running)', background?.whole],
  ]);
  const top = new Set(present.flatMap(([, c]) => c.redis.byCommand.slice(0, 8).map((x) => x.command)));
  const cell = (c: PhaseCost, command: string) => {
    const found = c.redis.byCommand.find((x) => x.command === command);
    return found ? `${num(found.calls, 2)} (${num(found.calls * found.usPerCall, 0)})` : '0';
  };
  return {
    header: ['command: calls (Redis µs) per response', ...present.map(([name]) => name)],
    rows: [...top].map((command) => [command, ...present.map(([, c]) => cell(c, command))]),
  };
}

/** The Markdown report. */
export function formatReport(report: BurstReport): string {
  const s = report.settings;
  const l = latencies(report);
  const lines: string[] = [];
  lines.push(`background-burst at ${report.label}, ${report.date}; load average ${report.load.start} at the start, ${report.load.end ?? '—'} at the end`);
  lines.push(
    `One web, one worker (WORKER_CONCURRENCY=${s.workerConcurrency}, up to 16 requests a job), a private Redis, every admission feature on; ${s.requests} requests a burst over ${s.connections} connections; background runs on the simulator answering after ${s.latencyMs} ms, synchronous requests on the simulator without latency (same body, background false).`,
  );
  lines.push('');
  lines.push(table(['burst', 'requests', 'accepted / completed', 'refused (429)', 'errors', 'seconds', 'requests/s'], outcomeRows(report)));
  lines.push('');
  lines.push('None lost: every accepted id read back from the `responses` table (and its usage record), a random sample by GET.');
  lines.push('');
  lines.push(
    table(
      [
        'burst',
        'accepted',
        'completed at last answer',
        'completed in store',
        'not completed',
        'usage records',
        'drain after last answer (s)',
        'drained/s',
        'GET sample',
      ],
      lostRows(report),
    ),
  );
  lines.push(
    `And the ${report.earlier.accepted} background requests of the warm-up and of the concurrency-1 pairs: ${report.earlier.notCompleted} not completed.`,
  );
  for (const p of [report.phases.sync, report.phases.paused, report.phases.background, report.phases.refusal]) {
    for (const bad of p?.notCompleted.slice(0, 10) ?? []) lines.push(`  not completed: ${bad.id} (${bad.status})`);
    if (p && 'gets' in p && p.gets.firstBad) lines.push(`  GET: ${p.gets.firstBad}`);
  }
  lines.push('');
  lines.push(`Latency, ms, from sending the request to the end of the answer's body (undici, keep-alive):`);
  lines.push('');
  lines.push(
    table(
      ['', 'n', 'p50', 'p90', 'p99', 'max'],
      [
        [`background accept, ×${s.connections}, worker running`, num(l.backgroundAtC?.n, 0), ...ms(l.backgroundAtC, 2)],
        [`synchronous request, ×${s.connections}`, num(l.syncAtC?.n, 0), ...ms(l.syncAtC, 2)],
        ['**background − synchronous**', '', ...ms(l.differenceAtC, 2)],
        [`background accept, ×${s.connections}, worker stopped`, num(l.backgroundPausedAtC?.n, 0), ...ms(l.backgroundPausedAtC, 2)],
        [`429 refusal (capped tenant), ×${s.connections}`, num(l.refusalAtC?.n, 0), ...ms(l.refusalAtC, 2)],
        ['background accept, concurrency 1', num(l.background1?.n, 0), ...ms(l.background1, 3)],
        ['synchronous request, concurrency 1', num(l.sync1?.n, 0), ...ms(l.sync1, 3)],
        ['**background − synchronous, concurrency 1**', '', ...ms(l.difference1, 3)],
        ['median of paired differences, concurrency 1', '', num(l.pairedMedian1, 3), '', '', ''],
      ],
    ),
  );
  lines.push('');
  lines.push(
    `Per response: Redis commands (INFO commandstats deltas, commands inside scripts included; "idle" is the share that Redis's idle rate, ${num(report.idle?.commandsPerS, 1)} commands and ${num(report.idle?.cpuUsPerS, 0)} µs of CPU per second, over the span would account for), script calls, CPU µs of Redis, web and worker (/proc); other % is the machine's busy time outside them and the load generator, PostgreSQL's included, in % of one core.`,
  );
  lines.push('');
  const sync = report.phases.sync?.whole;
  lines.push(
    table(
      [
        'span',
        'responses',
        'seconds',
        'Redis commands',
        'of which idle',
        'script calls',
        'Redis µs',
        'of which idle',
        'web µs',
        'worker µs',
        'other %',
        'commands ÷ sync whole life',
      ],
      costRows(report).map(([name, c]) => [
        name,
        num(c.units, 0),
        num(c.seconds, 1),
        num(c.redis.commands, 1),
        num(c.idleCommands ?? undefined, 1),
        num(c.redis.scriptCalls, 2),
        num(c.redis.cpuUs, 0),
        num(c.idleCpuUs ?? undefined, 0),
        num(c.webUs, 0),
        num(c.workerUs, 0),
        num(c.otherPct, 0),
        num(ratio(sync?.redis.commands, c.redis.commands), 2),
      ]),
    ),
  );
  const commands = commandRows(report);
  lines.push('');
  lines.push(table(commands.header, commands.rows));
  lines.push('');
  lines.push('Goals:');
  for (const v of verdicts(report)) lines.push(`  ${v.met === null ? 'n/a   ' : v.met ? 'MET   ' : 'MISSED'} ${v.goal}: ${v.measured}`);
  if (report.errors.length > 0) {
    lines.push('');
    lines.push('Failed requests (first 20):');
    for (const error of report.errors) lines.push(`  ${error}`);
  }
  if (report.logs) {
    lines.push('');
    lines.push('web/worker log lines at warn and above (count × process level message):');
    lines.push(report.logs);
  }
  return lines.join('\n');
}

function costJson(c: PhaseCost | undefined) {
  if (!c) return undefined;
  const { byCommand, ...redis } = c.redis;
  return { ...c, redis: { ...redis, byCommand: Object.fromEntries(byCommand.map((x) => [x.command, { calls: x.calls, usPerCall: x.usPerCall }])) } };
}

function burstJson(b: Burst | undefined) {
  return b && { requests: b.outcomes.length, ok: count(b, 'ok'), refused: count(b, 'refused'), errors: count(b, 'error'), seconds: b.elapsedS };
}

/** One JSON object with every figure (no per-request outcomes). */
export function toJson(report: BurstReport) {
  const phase = (p: Phase | undefined) =>
    p && {
      burst: burstJson(p.burst),
      answered: costJson(p.answered),
      whole: costJson(p.whole),
      drain: p.drain,
      completedAtLastAnswer: p.completedAtLastAnswer,
      notCompleted: p.notCompleted.length,
      gets: p.gets,
    };
  const { sync, paused, background, refusal } = report.phases;
  return {
    bench: 'background-burst',
    label: report.label,
    date: report.date,
    load: report.load,
    settings: report.settings,
    idle: report.idle,
    latencyMs: latencies(report),
    phases: {
      sync: phase(sync),
      paused: phase(paused),
      background: phase(background),
      refusal: refusal && { ...refusal, burst: burstJson(refusal.burst), notCompleted: refusal.notCompleted.length },
    },
    earlier: report.earlier,
    outstanding: report.outstanding,
    verdicts: verdicts(report),
    errors: report.errors,
  };
}
