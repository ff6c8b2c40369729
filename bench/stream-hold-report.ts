/** The figures of bench/stream-hold.ts and its printed lines, summary and JSON. */
import { num } from './report-format.ts';

/** The processes whose memory the bench follows, in column order. */
export const PROCESSES = ['web', 'worker', 'redis'] as const;
export type ProcessName = (typeof PROCESSES)[number];
/** The processes, and web and worker together (the gateway's own memory). */
export type SeriesName = ProcessName | 'web+worker';
export const SERIES: readonly SeriesName[] = [...PROCESSES, 'web+worker'];

/** Growth of web+worker that still counts as flat: this share of the baseline, or `FLAT_MIB`, whichever is larger. */
export const FLAT_SHARE = 0.05;
export const FLAT_MIB = 20;
/** The minute whose end the verdict measures growth from (warm-up done, caches and pools filled). */
export const FLAT_FROM_MINUTE = 2;

/** How the run was set up. */
export interface Settings {
  streams: number;
  minutes: number;
  chunkMs: number;
  chunks: number;
  /** Seconds of load before the first line. */
  warmS: number;
  json: boolean;
}

/** One reading: after the warm-up (minute 0), at the end of each minute, and once the streams drained (minute null). */
export interface Sample {
  label: string;
  minute: number | null;
  /** Seconds since the load began. */
  atS: number;
  /** VmRSS in KiB. */
  rssKb: Record<ProcessName, number>;
  /** Streams read to their end and checked good, and the failed ones, since the load began; streams open now. */
  completed: number;
  failures: number;
  open: number;
  /** CPU seconds each process used since the previous reading (since the load began, for the first). */
  cpuS: Record<ProcessName, number>;
}

/** How one series moved over the run. */
export interface Growth {
  series: SeriesName;
  /** VmRSS at the end of minute 1 and of the last minute, in MiB. */
  minute1Mib: number;
  lastMib: number;
  growthMib: number;
  growthPercent: number;
  /** The largest rise from one minute's end to the next after minute 2, and the minute it ended; null before minute 3. */
  maxStepMib: number | null;
  maxStepMinute: number | null;
}

/** Whether web+worker stayed flat. */
export interface Verdict {
  flat: boolean;
  /** The minutes compared (0: the warm-up reading), and web+worker at each, in MiB. */
  fromMinute: number;
  toMinute: number;
  fromMib: number;
  toMib: number;
  growthMib: number;
  allowedMib: number;
  /** Why the comparison starts earlier than minute 2 (a run too short); null when it does not. */
  note: string | null;
}

const mib = (kb: number) => kb / 1024;

/** A series' VmRSS in MiB at one reading. */
export function seriesMib(sample: Sample, series: SeriesName): number {
  return series === 'web+worker' ? mib(sample.rssKb.web + sample.rssKb.worker) : mib(sample.rssKb[series]);
}

/** The readings at the ends of minutes 0 (warm-up) to N, by minute. */
function byMinute(samples: readonly Sample[]): Map<number, Sample> {
  return new Map(samples.flatMap((s) => (s.minute === null ? [] : [[s.minute, s] as const])));
}

/** Each series from the end of minute 1 to the end of the last. */
export function growths(samples: readonly Sample[], minutes: number): Growth[] {
  const at = byMinute(samples);
  const first = at.get(1);
  const last = at.get(minutes);
  if (!first || !last) return [];
  return SERIES.map((series) => {
    const minute1Mib = seriesMib(first, series);
    const lastMib = seriesMib(last, series);
    let maxStepMib: number | null = null;
    let maxStepMinute: number | null = null;
    for (let minute = FLAT_FROM_MINUTE + 1; minute <= minutes; minute++) {
      const before = at.get(minute - 1);
      const after = at.get(minute);
      if (!before || !after) continue;
      const step = seriesMib(after, series) - seriesMib(before, series);
      if (maxStepMib === null || step > maxStepMib) [maxStepMib, maxStepMinute] = [step, minute];
    }
    const growthMib = lastMib - minute1Mib;
    return { series, minute1Mib, lastMib, growthMib, growthPercent: minute1Mib > 0 ? (100 * growthMib) / minute1Mib : 0, maxStepMib, maxStepMinute };
  });
}

/** web+worker from the end of minute 2 (or, in a shorter run, the last minute before the end) to the end of the last. */
export function verdict(samples: readonly Sample[], minutes: number): Verdict | null {
  const at = byMinute(samples);
  const fromMinute = Math.min(FLAT_FROM_MINUTE, minutes - 1);
  const from = at.get(fromMinute);
  const to = at.get(minutes);
  if (!from || !to) return null;
  const fromMib = seriesMib(from, 'web+worker');
  const toMib = seriesMib(to, 'web+worker');
  const allowedMib = Math.max(FLAT_SHARE * fromMib, FLAT_MIB);
  const note =
    fromMinute === FLAT_FROM_MINUTE
      ? null
      : `a ${minutes}-minute run compares from ${fromMinute === 0 ? 'the warm-up reading' : `minute ${fromMinute}`}; the verdict proper needs --minutes ${FLAT_FROM_MINUTE + 1} or more`;
  return { flat: toMib - fromMib <= allowedMib, fromMinute, toMinute: minutes, fromMib, toMib, growthMib: toMib - fromMib, allowedMib, note };
}

const COLUMNS = [
  ['minute', 7],
  ['s', 5],
  ['web MiB', 8],
  ['worker MiB', 11],
  ['redis MiB', 10],
  ['web+worker MiB', 15],
  ['completed', 10],
  ['failures', 9],
  ['open', 5],
  ['cpu s web', 10],
  ['cpu s worker', 13],
  ['cpu s redis', 12],
] as const;

/** The header over the per-minute lines. */
export function headerLine(): string {
  return COLUMNS.map(([name, width]) => name.padStart(width)).join(' ');
}

/** One reading as a line under headerLine(). */
export function sampleLine(sample: Sample): string {
  const cells = [
    sample.label,
    num(sample.atS, 0),
    num(seriesMib(sample, 'web')),
    num(seriesMib(sample, 'worker')),
    num(seriesMib(sample, 'redis')),
    num(seriesMib(sample, 'web+worker')),
    String(sample.completed),
    String(sample.failures),
    String(sample.open),
    num(sample.cpuS.web),
    num(sample.cpuS.worker),
    num(sample.cpuS.redis),
  ];
  return cells.map((cell, i) => cell.padStart(COLUMNS[i]?.[1] ?? 0)).join(' ');
}

const signed = (value: number, digits = 1) => `${value >= 0 ? '+' : ''}${num(value, digits)}`;

/** The end of the run: each series' growth, the verdict line, the failures and what web and worker logged. */
export function formatSummary(
  settings: Settings,
  samples: readonly Sample[],
  failures: { count: number; byMessage: Record<string, number> },
  logs: string,
): string {
  const lines = ['', `summary (${settings.streams} streams for ${settings.minutes} min, ${settings.chunks} chunks ${settings.chunkMs} ms apart):`];
  lines.push(
    `  ${'process'.padEnd(11)} ${'minute 1'.padStart(9)} ${'last'.padStart(9)} ${'growth MiB'.padStart(11)} ${'growth %'.padStart(9)}   largest minute-to-minute growth after minute ${FLAT_FROM_MINUTE}`,
  );
  for (const g of growths(samples, settings.minutes)) {
    const step = g.maxStepMib === null ? '— (needs --minutes 3 or more)' : `${signed(g.maxStepMib)} MiB (minute ${g.maxStepMinute})`;
    lines.push(
      `  ${g.series.padEnd(11)} ${num(g.minute1Mib).padStart(9)} ${num(g.lastMib).padStart(9)} ${signed(g.growthMib).padStart(11)} ${signed(g.growthPercent).padStart(9)}   ${step}`,
    );
  }
  const v = verdict(samples, settings.minutes);
  if (v) {
    const from = v.fromMinute === 0 ? 'the warm-up reading' : `the end of minute ${v.fromMinute}`;
    lines.push(
      `  web+worker from ${from} to the end of minute ${v.toMinute}: ${num(v.fromMib)} → ${num(v.toMib)} MiB (${signed(v.growthMib)} MiB; flat allows ${num(v.allowedMib)})`,
    );
    if (v.note) lines.push(`  note: ${v.note}`);
  }
  lines.push(`  failures: ${failures.count}`);
  for (const [message, count] of Object.entries(failures.byMessage)) lines.push(`    ${String(count).padStart(6)} × ${message}`);
  if (logs !== '') lines.push('  web/worker log lines at warn and above (count × process level message):', logs);
  lines.push(`flat: ${v?.flat === true ? 'yes' : 'no'}`);
  return lines.join('\n');
}

/** The whole run as one JSON object (MiB and seconds as numbers). */
export function toJson(
  settings: Settings,
  heapFlags: Record<'web' | 'worker', string[]>,
  samples: readonly Sample[],
  failures: { count: number; byMessage: Record<string, number> },
  logs: string,
): Record<string, unknown> {
  const v = verdict(samples, settings.minutes);
  return {
    settings: { streams: settings.streams, minutes: settings.minutes, chunkMs: settings.chunkMs, chunks: settings.chunks, warmS: settings.warmS },
    heapFlags,
    samples: samples.map((s) => ({
      label: s.label,
      minute: s.minute,
      atS: s.atS,
      rssMib: Object.fromEntries(SERIES.map((series) => [series, seriesMib(s, series)])),
      completed: s.completed,
      failures: s.failures,
      open: s.open,
      cpuS: s.cpuS,
    })),
    growth: growths(samples, settings.minutes),
    verdict: v,
    flat: v?.flat === true,
    failures: failures.count,
    failuresByMessage: failures.byMessage,
    logs,
  };
}
