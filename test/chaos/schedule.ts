/**
 * The fault schedule of a campaign, drawn from its seed: which fault, when, on what, for how long.
 * Every kind comes once, in a seeded order, before any comes again; faults are spaced so that the
 * gateway can recover between them, and none starts in the campaign's last seconds.
 */
import { Rng } from './prng.ts';

/** A fault the campaign can inject. */
export type FaultKind =
  | 'kill-web'
  | 'term-web'
  | 'kill-worker'
  | 'term-worker'
  | 'redis-restart'
  | 'redis-empty'
  | 'cluster-failover'
  | 'cluster-kill-master'
  | 'pg-cut'
  | 'upstream-hang'
  | 'upstream-5xx'
  | 'upstream-429'
  | 'upstream-break';

/** One planned fault. */
export interface PlannedFault {
  /** ms after traffic starts. */
  at: number;
  kind: FaultKind;
  /** A process (web0, worker1), an upstream (primary, backup), or a draw among masters. */
  target: string;
  /** How long what was stopped stays down (ms). */
  downMs: number;
  /** Upstream faults: how many calls get it. */
  calls: number;
  /** upstream-5xx: the status. */
  status: number;
  /** cluster faults: which master, as a fraction of the list. */
  pick: number;
}

const SINGLE_REDIS: FaultKind[] = ['redis-restart', 'redis-empty'];
const CLUSTER: FaultKind[] = ['cluster-failover', 'cluster-kill-master'];
const COMMON: FaultKind[] = ['kill-web', 'term-web', 'kill-worker', 'term-worker', 'pg-cut', 'upstream-hang', 'upstream-5xx', 'upstream-429', 'upstream-break'];

/** Seconds before the end of traffic after which no fault starts. */
export function quietTailSeconds(seconds: number): number {
  return Math.max(10, Math.round(seconds * 0.15));
}

/** Draws the schedule of a campaign. */
export function planFaults(seed: number, seconds: number, options: { webs: number; cluster: boolean }): PlannedFault[] {
  const rng = new Rng(seed, 'faults');
  const kinds = [...COMMON, ...(options.cluster ? CLUSTER : SINGLE_REDIS)];
  const last = (seconds - quietTailSeconds(seconds)) * 1000;
  const faults: PlannedFault[] = [];
  let cycle: FaultKind[] = [];
  for (let at = rng.int(3_000, 5_000); at <= last; at += rng.int(7_000, 10_000)) {
    if (cycle.length === 0) cycle = rng.shuffle(kinds);
    const kind = cycle.shift() as FaultKind;
    const web = `web${rng.int(0, options.webs - 1)}`;
    const worker = `worker${rng.int(0, 1)}`;
    faults.push({
      at,
      kind,
      target: kind.endsWith('-web') ? web : kind.endsWith('-worker') ? worker : kind.startsWith('upstream') ? (rng.chance(0.8) ? 'primary' : 'backup') : '-',
      downMs: kind === 'pg-cut' ? rng.int(1_000, 5_000) : rng.int(300, 1_500),
      calls: kind === 'upstream-hang' ? rng.int(2, 4) : rng.int(3, 8),
      status: rng.pick([500, 502, 503]),
      pick: rng.float(),
    });
  }
  return faults;
}

/** One line of the schedule. */
export function describeFault(fault: PlannedFault): string {
  switch (fault.kind) {
    case 'kill-web':
    case 'kill-worker':
      return `${fault.kind} ${fault.target} (SIGKILL, down ${fault.downMs} ms)`;
    case 'term-web':
    case 'term-worker':
      return `${fault.kind} ${fault.target} (SIGTERM, then down ${fault.downMs} ms)`;
    case 'redis-restart':
      return `redis-restart (SHUTDOWN with its append-only file, down ${fault.downMs} ms)`;
    case 'redis-empty':
      return `redis-empty (SIGKILL, files deleted, down ${fault.downMs} ms)`;
    case 'cluster-failover':
      return `cluster-failover (CLUSTER FAILOVER on a replica of master #${Math.floor(fault.pick * 3)})`;
    case 'cluster-kill-master':
      return `cluster-kill-master (SIGKILL master #${Math.floor(fault.pick * 3)}, back after ${fault.downMs} ms)`;
    case 'pg-cut':
      return `pg-cut (PostgreSQL unreachable for ${fault.downMs} ms)`;
    case 'upstream-hang':
      return `upstream-hang ${fault.target} (next ${fault.calls} calls hang)`;
    case 'upstream-5xx':
      return `upstream-5xx ${fault.target} (next ${fault.calls} calls answer ${fault.status})`;
    case 'upstream-429':
      return `upstream-429 ${fault.target} (next ${fault.calls} calls answer 429, Retry-After: 1)`;
    case 'upstream-break':
      return `upstream-break ${fault.target} (next ${fault.calls} calls break mid-answer)`;
  }
}
