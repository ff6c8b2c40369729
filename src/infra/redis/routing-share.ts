import type { ScriptedRedis } from './scripts.ts';

/** One worker's view of one deployment: its calls in flight and its decaying average to the first token (null: none measured). */
export interface DeploymentLoad {
  inFlight: number;
  latencyMs: number | null;
}

/** Every worker's view of each deployment, as routing-share-1.lua keeps them: by deployment, then by worker. */
export type SharedLoads = Map<string, Map<string, DeploymentLoad>>;

function encode(load: DeploymentLoad, now: number): string {
  return `${load.inFlight} ${load.latencyMs === null ? -1 : Math.round(load.latencyMs)} ${now}`;
}

function decode(value: string): DeploymentLoad {
  const [inFlight, latency] = value.split(' ').map(Number);
  return { inFlight: inFlight ?? 0, latencyMs: latency === undefined || latency < 0 ? null : latency };
}

/** Writes this worker's loads of an alias's deployments and reads every worker's; a worker silent for `staleMs` is forgotten. */
export async function shareLoads(
  redis: ScriptedRedis,
  key: string,
  worker: string,
  own: ReadonlyMap<string, DeploymentLoad>,
  staleMs: number,
  now: number,
): Promise<SharedLoads> {
  const pairs = [...own].flatMap(([deployment, load]) => [`${deployment}|${worker}`, encode(load, now)]);
  const all = (await redis.routingShare(key, now, staleMs, ...pairs)) as string[];
  const shared: SharedLoads = new Map();
  for (let i = 0; i + 1 < all.length; i += 2) {
    const field = all[i] as string;
    const bar = field.lastIndexOf('|');
    const deployment = field.slice(0, bar);
    const byWorker = shared.get(deployment) ?? new Map<string, DeploymentLoad>();
    byWorker.set(field.slice(bar + 1), decode(all[i + 1] as string));
    shared.set(deployment, byWorker);
  }
  return shared;
}
