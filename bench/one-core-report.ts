/** The figures of bench/one-core.ts and its printed report (Markdown tables, as pasted in docs/benchmarks.md). */
import { num, ratio, table } from './report-format.ts';

/** The direct upstream, the base revision or this checkout. */
export type Role = 'direct' | 'base' | 'this';

/** How busy one core was over the measured window, in % of that core. */
export interface CoreUse {
  busyPercent: number;
  /** The part no process of the run was charged with: PostgreSQL, processes outside the run, kernel threads, softirq on an idle core. */
  unchargedPercent: number;
}

/** The closed loop at `connections`. */
export interface LoadResult {
  /** Good answers that ended inside the measured window, and its length. */
  completed: number;
  windowS: number;
  perSecond: number;
  /** Latency of those answers, from sending to the end of the body. */
  p50Ms: number;
  p99Ms: number;
  /** Failed requests over the whole run, warm-up included. */
  errors: number;
  firstError: string | null;
  /** CPU µs per completion by process (web, worker, redis, upstream, client). */
  cpuUs: Record<string, number>;
  cores: { gateway: CoreUse; client: CoreUse };
}

/** Concurrency 1: sequential non-streamed requests over one keep-alive connection. */
export interface SeqResult {
  requests: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  firstError: string | null;
}

/** One side of the run. */
export interface SideResult {
  role: Role;
  /** Short commit (`+dirty` for a working tree with changes); `upstream` for the direct side. */
  label: string;
  load: LoadResult;
  seq: SeqResult;
  /** `x-ratelimit-limit-requests` of the gateway's first answer (null: the limiter may not have run); absent for direct. */
  rateLimitHeader?: string | null;
}

/** How the run was set up. */
export interface RunSettings {
  base: string;
  connections: number;
  durS: number;
  warmS: number;
  seq: number;
  seqWarmup: number;
  gatewayCpu: number;
  clientCpu: number;
}

/** What else the machine did: 1, 5 and 15 min load averages when the run started and ended. */
export interface MachineState {
  cores: number;
  loadBefore: number[];
  loadAfter: number[];
}

/** The issue's figures (another machine, one core for the gateway, base 4512ad3). */
export const ISSUE_REFERENCE = { basePerSecond: 750, directPerSecond: 13_562, baseToDirect: 0.055, baseAddedP50Ms: 3.35 } as const;
/** The issue's targets, as ratios this/base. */
export const TARGETS = { perSecond: 2, addedP50: 0.5 } as const;

/** The processes charged on each core, in report order. */
export const GATEWAY_PROCESSES = ['web', 'worker', 'redis'] as const;
export const CLIENT_PROCESSES = ['upstream', 'client'] as const;

/** CPU µs per completion of web, worker and Redis together (0 for direct). */
function gatewayCpuUs(side: SideResult): number {
  return GATEWAY_PROCESSES.reduce((sum, name) => sum + (side.load.cpuUs[name] ?? 0), 0);
}

/** Gateway p50 minus direct p50 at concurrency 1. */
function addedP50(side: SideResult | undefined, direct: SideResult): number | undefined {
  return side && side.seq.p50Ms - direct.seq.p50Ms;
}

function verdict(value: number | undefined, op: '≥' | '≤', limit: number): string {
  const text = `this/base ${op} ${limit}`;
  if (value === undefined || !Number.isFinite(value)) return text;
  return `${text}: ${(op === '≥' ? value >= limit : value <= limit) ? 'met' : 'missed'}`;
}

function signed(value: number | undefined, digits: number): string {
  return value === undefined || !Number.isFinite(value) ? '—' : `${value >= 0 ? '+' : ''}${num(value, digits)}`;
}

/** The columns of a table: direct, then each side, this/base when there is a base, then `extra`. */
function columns(direct: SideResult, sides: SideResult[], first: string, extra: string[]) {
  const base = sides.find((s) => s.role === 'base');
  const mine = sides.find((s) => s.role === 'this');
  const all = [direct, ...sides];
  const header = [first, ...all.map((s) => `${s.role} ${s.label}`), ...(base ? ['this/base'] : []), ...extra];
  /** One cell per side from `cell`, the this/base cell (dropped without a base), then the extra cells. */
  const row = (name: string, cell: (s: SideResult) => string, thisBase: string, ...rest: string[]) => [
    name,
    ...all.map(cell),
    ...(base ? [thisBase] : []),
    ...rest,
  ];
  return { base, mine, header, row };
}

function loadTable(settings: RunSettings, direct: SideResult, sides: SideResult[]): string {
  const { base, mine, header, row } = columns(direct, sides, '', ['issue (other machine)', 'target']);
  const perSecondRatio = ratio(base?.load.perSecond, mine?.load.perSecond);
  return table(header, [
    row(
      'completions/s',
      (s) => num(s.load.perSecond, 0),
      num(perSecondRatio, 2),
      `base ${num(ISSUE_REFERENCE.basePerSecond, 0)}, direct ${num(ISSUE_REFERENCE.directPerSecond, 0)}`,
      verdict(perSecondRatio, '≥', TARGETS.perSecond),
    ),
    row('÷ direct', (s) => num(ratio(direct.load.perSecond, s.load.perSecond), 3), '', `base ${ISSUE_REFERENCE.baseToDirect}`, ''),
    row('p50 latency (ms)', (s) => num(s.load.p50Ms, 2), num(ratio(base?.load.p50Ms, mine?.load.p50Ms), 2), '', ''),
    row('p99 latency (ms)', (s) => num(s.load.p99Ms, 2), num(ratio(base?.load.p99Ms, mine?.load.p99Ms), 2), '', ''),
    row(`completions in the ${settings.durS} s window`, (s) => num(s.load.completed, 0), '', '', ''),
    row('errors (whole run)', (s) => num(s.load.errors, 0), '', '', ''),
  ]);
}

function seqTable(direct: SideResult, sides: SideResult[]): string {
  const { base, mine, header, row } = columns(direct, sides, '', ['issue (other machine)', 'target']);
  const addedRatio = ratio(addedP50(base, direct), addedP50(mine, direct));
  return table(header, [
    row('p50 (ms)', (s) => num(s.seq.p50Ms, 3), num(ratio(base?.seq.p50Ms, mine?.seq.p50Ms), 2), '', ''),
    row('p99 (ms)', (s) => num(s.seq.p99Ms, 3), num(ratio(base?.seq.p99Ms, mine?.seq.p99Ms), 2), '', ''),
    row(
      '**added p50** (− direct p50, ms)',
      (s) => (s.role === 'direct' ? '' : signed(addedP50(s, direct), 3)),
      num(addedRatio, 2),
      `base +${ISSUE_REFERENCE.baseAddedP50Ms}`,
      verdict(addedRatio, '≤', TARGETS.addedP50),
    ),
    row('p50 ÷ direct p50', (s) => num(ratio(direct.seq.p50Ms, s.seq.p50Ms), 1), '', '', ''),
    row('requests measured', (s) => num(s.seq.requests, 0), '', '', ''),
    row('errors (warm-up included)', (s) => num(s.seq.errors, 0), '', '', ''),
  ]);
}

function cpuTable(settings: RunSettings, direct: SideResult, sides: SideResult[]): string {
  const { base, mine, header, row } = columns(direct, sides, 'at the closed loop', []);
  const us = (name: string, pick: (s: SideResult) => number | undefined) =>
    row(name, (s) => num(pick(s), 0), num(ratio(base && pick(base), mine && pick(mine)), 2));
  const percent = (name: string, pick: (s: SideResult) => number) => row(name, (s) => num(pick(s), 0), '');
  const g = settings.gatewayCpu;
  const c = settings.clientCpu;
  return table(header, [
    ...GATEWAY_PROCESSES.map((name) => us(`${name}, µs per completion (CPU ${g})`, (s) => s.load.cpuUs[name])),
    us(`**gateway core total**, µs per completion (CPU ${g})`, (s) => (s.role === 'direct' ? undefined : gatewayCpuUs(s))),
    // What the core would serve with nothing else on it: steadier than completions/s on a shared machine.
    us(`ceiling of CPU ${g} at that cost (10⁶ / total, completions/s)`, (s) => (s.role === 'direct' ? undefined : 1e6 / gatewayCpuUs(s))),
    ...CLIENT_PROCESSES.map((name) =>
      us(`${name === 'client' ? 'load generator (bench process)' : name}, µs per completion (CPU ${c})`, (s) => s.load.cpuUs[name]),
    ),
    percent(`CPU ${g} busy (% of the core)`, (s) => s.load.cores.gateway.busyPercent),
    percent(`… other work on CPU ${g}: not web, worker, redis (%)`, (s) => s.load.cores.gateway.unchargedPercent),
    percent(`CPU ${c} busy (% of the core)`, (s) => s.load.cores.client.busyPercent),
    percent(`… other work on CPU ${c}: not upstream, load generator (%)`, (s) => s.load.cores.client.unchargedPercent),
  ]);
}

/** The whole report: throughput, concurrency 1, CPU per completion, then pinning, load and failures. */
export function formatReport(settings: RunSettings, machine: MachineState, direct: SideResult, sides: SideResult[]): string {
  const load = (values: number[]) => values.map((v) => v.toFixed(2)).join(' / ');
  const parts = [
    `### JSON completions at ${settings.connections} connections (closed loop, ${settings.durS} s measured after ${settings.warmS} s warm-up)`,
    loadTable(settings, direct, sides),
    `### Concurrency 1: ${settings.seq} sequential non-streamed requests after ${settings.seqWarmup} warm-up (ms, to the end of the body)`,
    seqTable(direct, sides),
    `### CPU per completion at ${settings.connections} connections`,
    cpuTable(settings, direct, sides),
    [
      `Pinned with taskset (checked in /proc for every thread): redis-server, web and worker on CPU ${settings.gatewayCpu}; the upstream and this process (the load generator) on CPU ${settings.clientCpu}.`,
      'PostgreSQL is the machine\'s service and is not pinned: it runs wherever the kernel puts it (its CPU is in "other work", with any process outside the run, kernel threads, and softirq that interrupted an idle core).',
      `Machine: ${machine.cores} cores; load average (1 / 5 / 15 min) ${load(machine.loadBefore)} at the start, ${load(machine.loadAfter)} at the end.`,
    ].join('\n'),
  ];
  for (const side of [direct, ...sides]) {
    if (side.rateLimitHeader === null) parts.push(`warning: ${side.role} answered without x-ratelimit-limit-requests; its rate limiter may not have run`);
    if (side.load.firstError !== null) parts.push(`${side.role} closed loop: ${side.load.errors} errors, the first: ${side.load.firstError}`);
    if (side.seq.firstError !== null) parts.push(`${side.role} concurrency 1: ${side.seq.errors} errors, the first: ${side.seq.firstError}`);
  }
  return parts.join('\n\n');
}

/** Every figure as one JSON-ready object: the sides, the ratios to direct and this/base, the issue's figures and the targets. */
export function toJson(settings: RunSettings, machine: MachineState, direct: SideResult, sides: SideResult[]): object {
  const base = sides.find((s) => s.role === 'base');
  const mine = sides.find((s) => s.role === 'this');
  const derived = Object.fromEntries(
    sides.map((s) => [
      s.role,
      { perSecondToDirect: ratio(direct.load.perSecond, s.load.perSecond), addedP50Ms: addedP50(s, direct), p50ToDirect: ratio(direct.seq.p50Ms, s.seq.p50Ms) },
    ]),
  );
  const thisToBase =
    base && mine
      ? {
          perSecond: ratio(base.load.perSecond, mine.load.perSecond),
          addedP50: ratio(addedP50(base, direct), addedP50(mine, direct)),
          gatewayCpuUs: ratio(gatewayCpuUs(base), gatewayCpuUs(mine)),
        }
      : null;
  return { settings, machine, direct, sides, derived, thisToBase, issueReference: ISSUE_REFERENCE, targets: TARGETS };
}
