import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { RedisKeys } from '../../infra/redis/keys.ts';
import type { ScriptedRedis } from '../../infra/redis/scripts.ts';
import { shareLoads, type DeploymentLoad, type SharedLoads } from '../../infra/redis/routing-share.ts';
import type { TargetPool } from '../../domain/catalog/targets.ts';

/** How much a new time to first token weighs in a deployment's decaying average. */
const LATENCY_WEIGHT = 0.3;

/**
 * Calls in flight and the decaying average time to the first token of each deployment of the
 * aliases routed `least-busy` or `latency`, counted across every worker: this worker's own live,
 * the others' as they shared them at the last flush (one script call per such alias every
 * `flushMs`; the aliases routed by weight cost nothing).
 */
export class DeploymentLoads {
  readonly #redis: ScriptedRedis;
  readonly #keys: RedisKeys;
  readonly #log: Logger;
  readonly #worker = randomUUID().slice(0, 8);
  readonly #pools: TargetPool[];
  readonly #own = new Map<string, DeploymentLoad>();
  /** The other workers' loads, by deployment: their sum of calls in flight, their averages by worker. */
  #others = new Map<string, { inFlight: number; latencies: number[] }>();
  #timer: NodeJS.Timeout | null = null;
  #staleMs = 0;

  constructor(options: { redis: ScriptedRedis; keys: RedisKeys; pools: ReadonlyMap<string, TargetPool>; log: Logger }) {
    this.#redis = options.redis;
    this.#keys = options.keys;
    this.#log = options.log;
    this.#pools = [...options.pools.values()].filter((pool) => pool.routing !== 'weighted');
    for (const pool of this.#pools) for (const target of pool.targets) this.#own.set(target.deployment, { inFlight: 0, latencyMs: null });
  }

  /** Shares the loads every `flushMs` (a worker silent for 10 of them is forgotten); returns how to stop. */
  start(flushMs: number): () => Promise<void> {
    this.#staleMs = 10 * flushMs;
    if (this.#pools.length === 0) return () => Promise.resolve();
    this.#timer = setInterval(() => void this.flush(), flushMs);
    this.#timer.unref();
    return async () => {
      if (this.#timer) clearInterval(this.#timer);
    };
  }

  /** A call to the deployment starts. */
  started(deployment: string): void {
    const load = this.#own.get(deployment);
    if (load) load.inFlight++;
  }

  /** A call to the deployment ended, after `firstTokenMs` when it answered. */
  ended(deployment: string, firstTokenMs: number | null): void {
    const load = this.#own.get(deployment);
    if (!load) return;
    load.inFlight = Math.max(0, load.inFlight - 1);
    if (firstTokenMs !== null) load.latencyMs = load.latencyMs === null ? firstTokenMs : load.latencyMs + LATENCY_WEIGHT * (firstTokenMs - load.latencyMs);
  }

  /** Calls in flight to the deployment, in every worker. */
  inFlight(deployment: string): number {
    return (this.#own.get(deployment)?.inFlight ?? 0) + (this.#others.get(deployment)?.inFlight ?? 0);
  }

  /** The deployment's average time to the first token over every worker that measured it; null when none has. */
  latencyMs(deployment: string): number | null {
    const measured = [this.#own.get(deployment)?.latencyMs ?? null, ...(this.#others.get(deployment)?.latencies ?? [])].filter(
      (latency): latency is number => latency !== null,
    );
    return measured.length === 0 ? null : measured.reduce((sum, latency) => sum + latency, 0) / measured.length;
  }

  async flush(): Promise<void> {
    const others = new Map<string, { inFlight: number; latencies: number[] }>();
    await Promise.all(
      this.#pools.map(async (pool) => {
        const own = new Map(pool.targets.map((target) => [target.deployment, this.#own.get(target.deployment) as DeploymentLoad]));
        let shared: SharedLoads;
        try {
          shared = await shareLoads(this.#redis, this.#keys.routingShare(pool.alias), this.#worker, own, this.#staleMs, Date.now());
        } catch (error) {
          this.#log.warn({ err: error, alias: pool.alias }, 'sharing deployment loads failed');
          return;
        }
        for (const [deployment, byWorker] of shared) {
          const sum = { inFlight: 0, latencies: [] as number[] };
          for (const [worker, load] of byWorker) {
            if (worker === this.#worker) continue;
            sum.inFlight += load.inFlight;
            if (load.latencyMs !== null) sum.latencies.push(load.latencyMs);
          }
          others.set(deployment, sum);
        }
      }),
    );
    this.#others = others;
  }
}
