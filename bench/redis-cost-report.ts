/** The figures of bench/redis-cost.ts and its printed report (Markdown tables, as pasted in docs/benchmarks.md). */
import type { CommandCost, RedisCost } from './redis-stats.ts';
import { num, ratio, table } from './report-format.ts';

/** Non-streamed, or streamed (the upstream's 20 chunks). */
export type Mode = 'json' | 'sse';

/** One mode on one side. */
export interface ModeResult {
  /** Good answers that ended inside the measured window, and its length. */
  completed: number;
  windowS: number;
  perSecond: number;
  errors: number;
  firstError: string | null;
  /** Redis's work per completion. */
  redis: RedisCost;
}

/** One side of the comparison: the base revision or this checkout. */
export interface SideResult {
  role: 'base' | 'this';
  /** Short commit (`+dirty` for a working tree with changes). */
  label: string;
  modes: Partial<Record<Mode, ModeResult>>;
  /** `x-ratelimit-limit-requests` of the first answer: the rate limiter ran (null: it did not say so). */
  rateLimitHeader: string | null;
}

/** How the run was set up. */
export interface RunSettings {
  connections: number;
  durS: number;
  warmS: number;
  modes: Mode[];
}

/** The issue's figures for a non-streamed completion (16-core machine, 4512ad3, rate limits on). */
export const ISSUE_REFERENCE = { commands: 74, scriptCalls: 6.8, cpuUs: 230 } as const;
/** The issue's targets: per non-streamed completion, and the streamed one's extra script calls. */
export const TARGETS = { commands: 35, cpuUs: 110, sseExtraScriptCalls: 2 } as const;

const TOP_COMMANDS = 8;

function verdict(value: number | undefined, limit: number): string {
  if (value === undefined || !Number.isFinite(value)) return `≤ ${limit}`;
  return `≤ ${limit}: ${value <= limit ? 'met' : 'missed'}`;
}

/** Per-completion figures of both sides for one mode, with ratios, the issue's figures and the targets. */
function modeTable(mode: Mode, sides: SideResult[]): string {
  const results = sides.map((side) => side.modes[mode]);
  const base = sides.find((s) => s.role === 'base')?.modes[mode];
  const mine = sides.find((s) => s.role === 'this')?.modes[mode];
  const hasBase = sides.some((s) => s.role === 'base');
  const header = [
    'per completion',
    ...sides.map((s) => `${s.role} ${s.label}`),
    ...(hasBase ? ['this/base'] : []),
    mode === 'json' ? 'issue (16 cores, 4512ad3)' : 'issue',
    'target (this)',
  ];
  const sseExtra = (side: SideResult) => (side.modes.sse && side.modes.json ? side.modes.sse.redis.scriptCalls - side.modes.json.redis.scriptCalls : undefined);
  const row = (name: string, pick: (r: ModeResult) => number, digits: number, issue: string, target: string): string[] => [
    name,
    ...results.map((r) => num(r && pick(r), digits)),
    ...(hasBase ? [num(ratio(base && pick(base), mine && pick(mine)), 2)] : []),
    issue,
    target,
  ];
  const json = mode === 'json';
  const rows = [
    row('completions in the window', (r) => r.completed, 0, '', ''),
    row('completions/s', (r) => r.perSecond, 0, '', ''),
    row('errors (whole run)', (r) => r.errors, 0, '', ''),
    row(
      'Redis commands (inside scripts included)',
      (r) => r.redis.commands,
      1,
      json ? String(ISSUE_REFERENCE.commands) : '',
      json ? verdict(mine?.redis.commands, TARGETS.commands) : '',
    ),
    row('script calls (EVALSHA, EVAL, FCALL)', (r) => r.redis.scriptCalls, 2, json ? String(ISSUE_REFERENCE.scriptCalls) : '', ''),
    row('Redis CPU µs', (r) => r.redis.cpuUs, 0, json ? `~${ISSUE_REFERENCE.cpuUs}` : '', json ? verdict(mine?.redis.cpuUs, TARGETS.cpuUs) : ''),
    row('ceiling of one Redis core (completions/s)', (r) => r.redis.ceilingPerS, 0, json ? `~${num(1e6 / ISSUE_REFERENCE.cpuUs, 0)}` : '', ''),
  ];
  if (mode === 'sse' && sides.every((s) => s.modes.json)) {
    // A ratio of two differences near zero says nothing; the target is on the difference itself.
    const mineExtra = sseExtra(sides.find((s) => s.role === 'this') as SideResult);
    rows.push([
      'script calls more than JSON',
      ...sides.map((s) => num(sseExtra(s), 2)),
      ...(hasBase ? ['—'] : []),
      '',
      verdict(mineExtra, TARGETS.sseExtraScriptCalls),
    ]);
  }
  return table(header, rows);
}

/** The most called commands of either side (top 8 of each), with calls per completion and µs per call. */
function commandTable(mode: Mode, sides: SideResult[]): string {
  const hasBase = sides.some((s) => s.role === 'base');
  const names = new Set<string>();
  for (const side of sides) for (const c of side.modes[mode]?.redis.byCommand.slice(0, TOP_COMMANDS) ?? []) names.add(c.command);
  const find = (side: SideResult | undefined, name: string): CommandCost | undefined => side?.modes[mode]?.redis.byCommand.find((c) => c.command === name);
  const mine = sides.find((s) => s.role === 'this');
  const base = sides.find((s) => s.role === 'base');
  const order = [...names].sort((a, b) => Math.max(...sides.map((s) => find(s, b)?.calls ?? 0)) - Math.max(...sides.map((s) => find(s, a)?.calls ?? 0)));
  const header = ['command', ...sides.flatMap((s) => [`${s.role} calls`, `${s.role} µs/call`]), ...(hasBase ? ['calls this/base'] : [])];
  const rows = order.map((name) => [
    name,
    ...sides.flatMap((s) => [num(find(s, name)?.calls ?? 0, 2), num(find(s, name)?.usPerCall, 2)]),
    ...(hasBase ? [num(ratio(find(base, name)?.calls ?? 0, find(mine, name)?.calls ?? 0), 2)] : []),
  ]);
  return table(header, rows);
}

/** The whole report: one table of figures and one of commands per mode, then what failed. */
export function formatReport(settings: RunSettings, sides: SideResult[]): string {
  const parts: string[] = [];
  for (const mode of settings.modes) {
    const title = mode === 'json' ? 'non-streamed (JSON)' : 'streamed (SSE, 20 chunks in one burst)';
    parts.push(`### ${title}: Redis per completion, ${settings.connections} connections, ${settings.durS} s measured after ${settings.warmS} s warm-up`);
    parts.push(modeTable(mode, sides));
    parts.push(`Top commands per completion (${mode}):`);
    parts.push(commandTable(mode, sides));
  }
  for (const side of sides) {
    if (side.rateLimitHeader === null) parts.push(`warning: ${side.role} answered without x-ratelimit-limit-requests; its rate limiter may not have run`);
    for (const [mode, r] of Object.entries(side.modes))
      if (r.firstError !== null) parts.push(`${side.role} ${mode}: ${r.errors} errors, the first: ${r.firstError}`);
  }
  return parts.join('\n\n');
}

/** Every figure as one JSON-ready object: both sides, the ratios this/base, the issue's figures and the targets. */
export function toJson(settings: RunSettings, sides: SideResult[]): object {
  const base = sides.find((s) => s.role === 'base');
  const mine = sides.find((s) => s.role === 'this');
  const ratios: Partial<Record<Mode, Record<string, number | undefined>>> = {};
  for (const mode of settings.modes) {
    const b = base?.modes[mode];
    const m = mine?.modes[mode];
    if (!b || !m) continue;
    ratios[mode] = {
      perSecond: ratio(b.perSecond, m.perSecond),
      commands: ratio(b.redis.commands, m.redis.commands),
      scriptCalls: ratio(b.redis.scriptCalls, m.redis.scriptCalls),
      cpuUs: ratio(b.redis.cpuUs, m.redis.cpuUs),
      ceilingPerS: ratio(b.redis.ceilingPerS, m.redis.ceilingPerS),
    };
  }
  return { settings, sides, ratios, issueReference: { json: ISSUE_REFERENCE }, targets: TARGETS };
}
