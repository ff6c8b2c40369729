import type { TargetPool, WeightedTarget } from '../../domain/catalog/targets.ts';
import { isUpstreamError } from '../../providers/shared/upstream-error.ts';
import type { CircuitBreakers } from './circuit-breakers.ts';
import type { DeploymentQuotas } from './deployment-quotas.ts';
import type { DeploymentLoads } from './deployment-loads.ts';

/**
 * Where an attempt goes: a deployment (perhaps as its breaker's probe); nowhere before a 429's
 * pause ends; or nowhere at all, every deployment's breaker being open.
 */
export type Choice = { kind: 'call'; target: WeightedTarget; probe: boolean } | { kind: 'paused'; untilMs: number } | { kind: 'open'; untilMs: number };

/** A weighted random pick; the weights need not sum to anything. */
function weighted(targets: readonly WeightedTarget[]): WeightedTarget {
  let left = Math.random() * targets.reduce((sum, target) => sum + target.weight, 0);
  for (const target of targets) {
    left -= target.weight;
    if (left < 0) return target;
  }
  return targets[targets.length - 1] as WeightedTarget;
}

/**
 * Picks a deployment of an alias for each attempt, weighted, among those whose breaker lets calls
 * through, that no 429 paused and that have room in their quota, preferring those the request has
 * not tried yet; a deployment whose cooldown ended is picked as any other, and goes as the probe
 * if it wins its breaker's one.
 */
export class DeploymentRouter {
  readonly #breakers: CircuitBreakers;
  readonly #quotas: DeploymentQuotas;
  readonly #loads: DeploymentLoads;

  constructor(parts: { breakers: CircuitBreakers; quotas: DeploymentQuotas; loads: DeploymentLoads }) {
    this.#breakers = parts.breakers;
    this.#quotas = parts.quotas;
    this.#loads = parts.loads;
  }

  /** A call to the deployment starts (its calls in flight, for least-busy routing). */
  started(target: WeightedTarget): void {
    this.#loads.started(target.deployment);
  }

  /** A call to the deployment ended: after `firstTokenMs` when it answered, null when it failed. */
  ended(target: WeightedTarget, firstTokenMs: number | null): void {
    this.#loads.ended(target.deployment, firstTokenMs);
  }

  /** Counts the tokens of a finished call against its deployment's tokens quota. */
  spent(deployment: string, tokens: number): void {
    this.#quotas.spent(deployment, tokens);
  }

  async choose(pool: TargetPool, tried: ReadonlySet<string>): Promise<Choice> {
    const now = Date.now();
    const open: number[] = [];
    const paused: number[] = [];
    let usable: WeightedTarget[] = [];
    const due = new Set<string>();
    for (const target of pool.targets) {
      const availability = this.#breakers.availability(target.deployment, now);
      if (availability.kind === 'open') open.push(availability.untilMs);
      else if (availability.kind === 'paused') paused.push(availability.untilMs);
      else {
        usable.push(target);
        if (availability.kind === 'probe') due.add(target.deployment);
      }
    }
    while (usable.length > 0) {
      const untried = usable.filter((target) => !tried.has(target.deployment));
      const target = this.#pick(pool.routing, untried.length > 0 ? untried : usable);
      usable = usable.filter((other) => other !== target);
      const probe = due.has(target.deployment);
      if (probe && !(await this.#breakers.probe(target.deployment))) {
        open.push(Date.now() + 1_000);
        continue;
      }
      // A deployment at its quota is passed over for another, then waited for like a paused one.
      const waitMs = await this.#quotas.take(target);
      if (waitMs > 0) {
        paused.push(Date.now() + waitMs);
        continue;
      }
      return { kind: 'call', target, probe };
    }
    // Paused deployments come back at a known time: the request waits for the first of them.
    if (paused.length > 0) return { kind: 'paused', untilMs: Math.min(...paused) };
    return { kind: 'open', untilMs: Math.min(...open) };
  }

  /**
   * By weight; or the fewest calls in flight across every worker (`least-busy`); or the lowest
   * average time to the first token (`latency`), a deployment never measured first so that it is
   * measured. Ties go by weight.
   */
  #pick(routing: TargetPool['routing'], targets: readonly WeightedTarget[]): WeightedTarget {
    if (routing === 'weighted') return weighted(targets);
    const score =
      routing === 'least-busy'
        ? (target: WeightedTarget) => this.#loads.inFlight(target.deployment)
        : (target: WeightedTarget) => this.#loads.latencyMs(target.deployment) ?? -1;
    const scores = targets.map(score);
    const best = Math.min(...scores);
    return weighted(targets.filter((_, i) => scores[i] === best));
  }

  /**
   * Counts how a call ended in its deployment's breaker: a retryable failure (connection, timeout,
   * 429, 5xx, a broken stream) counts against it; an answer, even a refusal of the request, counts
   * for it. A cancelled call, or one that failed on this side, says nothing of the deployment (a
   * probe so ended leaves the breaker half-open until its lease lets another go). A 429's Retry-After
   * pauses the deployment for every worker when `pauses` (a live request's call; a batch line's 429
   * slows its lane alone, never the live requests: spec, Batches).
   */
  record(target: WeightedTarget, probe: boolean, error: unknown, signal: AbortSignal, pauses: boolean): void {
    if (signal.aborted) return;
    if (error !== null && !isUpstreamError(error)) return;
    const failed = error !== null && error.retryable;
    const retryAfterMs = pauses && failed && error.kind === 'rate_limited' ? (error.retryAfterMs ?? 0) : 0;
    this.#breakers.record(target.deployment, { failed, probe, pauseUntilMs: retryAfterMs > 0 ? Date.now() + retryAfterMs : 0 });
  }
}
