/**
 * Injects the scheduled faults, one after another, at their times (a fault that ran long pushes the
 * next back, to keep the spacing), and logs each as it starts and ends.
 */
import type { TcpProxy } from '../helpers/tcp-proxy.ts';
import type { GatewayProcesses } from './processes.ts';
import type { PrivateRedis } from './redis-server.ts';
import type { ChaosCluster } from './redis-cluster.ts';
import type { ChaosUpstream } from './upstream.ts';
import { describeFault, type PlannedFault } from './schedule.ts';

/** A fault as it happened (times in ms since the campaign started). */
export interface FaultEvent {
  kind: PlannedFault['kind'];
  description: string;
  plannedAt: number;
  startedAt: number;
  endedAt: number;
  detail: string;
  /** When Redis lost data (an emptied Redis, a killed master): records in its outbox may be lost with it. */
  lossAt: number | null;
}

/** What faults act on. */
export interface FaultTargets {
  processes: GatewayProcesses;
  redis: PrivateRedis | null;
  cluster: ChaosCluster | null;
  postgres: TcpProxy;
  upstreams: { primary: ChaosUpstream; backup: ChaosUpstream };
  /** SHUTDOWN_GRACE_MS of the processes. */
  graceMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MIN_GAP_MS = 3_000;

async function inject(fault: PlannedFault, targets: FaultTargets, markLoss: () => void): Promise<string> {
  const upstream = fault.target === 'backup' ? targets.upstreams.backup : targets.upstreams.primary;
  const pickOf = (ports: number[]) => Math.min(ports.length - 1, Math.floor(fault.pick * ports.length));
  switch (fault.kind) {
    case 'kill-web':
    case 'kill-worker':
      return targets.processes.signalAndRestart(fault.target, 'SIGKILL', targets.graceMs, fault.downMs);
    case 'term-web':
    case 'term-worker':
      return targets.processes.signalAndRestart(fault.target, 'SIGTERM', targets.graceMs, fault.downMs);
    case 'redis-restart':
      await (targets.redis as PrivateRedis).restartWithData(fault.downMs);
      return 'Redis back with its data';
    case 'redis-empty':
      markLoss();
      await (targets.redis as PrivateRedis).restartEmpty(fault.downMs);
      return 'Redis back empty';
    case 'cluster-failover':
      return (targets.cluster as ChaosCluster).manualFailover(pickOf);
    case 'cluster-kill-master':
      markLoss();
      return (targets.cluster as ChaosCluster).killMaster(pickOf, fault.downMs);
    case 'pg-cut':
      await targets.postgres.cut();
      await sleep(fault.downMs);
      await targets.postgres.restore();
      return 'PostgreSQL reachable again';
    case 'upstream-hang':
      upstream.script(Array.from({ length: fault.calls }, () => ({ kind: 'hang' as const })));
      return `${fault.calls} hangs scripted on ${upstream.name}`;
    case 'upstream-5xx':
      upstream.script(Array.from({ length: fault.calls }, () => ({ kind: 'status' as const, status: fault.status })));
      return `${fault.calls} × ${fault.status} scripted on ${upstream.name}`;
    case 'upstream-429':
      upstream.script(Array.from({ length: fault.calls }, () => ({ kind: 'status' as const, status: 429, headers: { 'retry-after': '1' } })));
      return `${fault.calls} × 429 scripted on ${upstream.name}`;
    case 'upstream-break':
      upstream.script(Array.from({ length: fault.calls }, () => ({ kind: 'break-mid-stream' as const })));
      return `${fault.calls} breaks scripted on ${upstream.name}`;
  }
}

/**
 * Runs the schedule from `start` (Date.now() of traffic's start); `clock` gives ms since the campaign
 * started. A fault that could only start after `lastMs` is left out. Resolves with what happened.
 */
export async function runFaults(
  schedule: PlannedFault[],
  targets: FaultTargets,
  options: { trafficStartedAt: number; lastMs: number; clock: () => number; log: (line: string) => void; stopped: () => boolean },
): Promise<FaultEvent[]> {
  const events: FaultEvent[] = [];
  let earliest = 0;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
  for (const fault of schedule) {
    const at = Math.max(fault.at, earliest);
    if (at > options.lastMs || options.stopped()) {
      options.log(`${seconds(options.clock())}  skipped: ${describeFault(fault)} (too close to the end)`);
      continue;
    }
    await sleep(options.trafficStartedAt + at - Date.now());
    if (options.stopped()) break;
    const description = describeFault(fault);
    const startedAt = options.clock();
    let lossAt: number | null = null;
    options.log(`${seconds(startedAt)}  fault: ${description}`);
    const detail = await inject(fault, targets, () => (lossAt = options.clock())).catch((error: unknown) => `failed: ${(error as Error).message}`);
    const endedAt = options.clock();
    options.log(`${seconds(endedAt)}  fault over: ${fault.kind}: ${detail}`);
    events.push({ kind: fault.kind, description, plannedAt: fault.at, startedAt, endedAt, detail, lossAt });
    earliest = Date.now() - options.trafficStartedAt + MIN_GAP_MS;
  }
  return events;
}
