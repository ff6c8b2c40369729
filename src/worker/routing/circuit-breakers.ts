import type { Logger } from 'pino';
import type { RedisClient } from '../../infra/redis/connections.ts';
import type { RedisKeys } from '../../infra/redis/keys.ts';
import type { ScriptedRedis } from '../../infra/redis/scripts.ts';
import { probeBreaker, readBreaker, reportBreaker, type BreakerReply, type BreakerState } from '../../infra/redis/breaker-states.ts';
import type { TargetPool } from '../../domain/catalog/targets.ts';
import type { BreakerMetrics } from '../../infra/metrics/breaker-metrics.ts';

/** What this process knows of one deployment's breaker. */
interface Known {
  state: BreakerState;
  openUntilMs: number;
  pausedUntilMs: number;
}

/** Calls that ended and are not yet counted in Redis. */
interface Pending {
  calls: number;
  failures: number;
}

/**
 * Whether a deployment takes a call now: yes; only as the probe of its open breaker; not while its
 * breaker is open (or its probe runs); not before a 429's pause ends.
 */
export type Availability = { kind: 'ready' } | { kind: 'probe' } | { kind: 'open'; untilMs: number } | { kind: 'paused'; untilMs: number };

/** How one call to a deployment ended, as the breaker counts it. */
export interface CallOutcome {
  failed: boolean;
  /** The call was the breaker's probe. */
  probe: boolean;
  /** A 429's Retry-After: new calls wait until then, in every worker. */
  pauseUntilMs: number;
}

const CLOSED: Known = { state: 'closed', openUntilMs: 0, pausedUntilMs: 0 };

/**
 * The breakers of every deployment, as this worker process sees them. Redis holds the truth
 * (circuit-breaker-1.lua): a failure, a probe's outcome and a pause are reported at once, the
 * successes of each deployment every `flushMs` in one call, and each change is announced on a
 * channel that every worker hears, so a breaker opened by one worker is skipped by all of them
 * without a Redis call per request. Only the half-open probe asks Redis first, so that exactly
 * one call goes, whichever worker makes it.
 */
export class CircuitBreakers {
  readonly #redis: ScriptedRedis;
  readonly #keys: RedisKeys;
  readonly #pools: ReadonlyMap<string, TargetPool>;
  readonly #poolOf = new Map<string, TargetPool>();
  readonly #known = new Map<string, Known>();
  readonly #pending = new Map<string, Pending>();
  readonly #probeLeaseMs: number;
  readonly #metrics: BreakerMetrics | null;
  readonly #log: Logger;
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> = Promise.resolve();

  constructor(options: {
    redis: ScriptedRedis;
    keys: RedisKeys;
    pools: ReadonlyMap<string, TargetPool>;
    probeLeaseMs: number;
    metrics: BreakerMetrics | null;
    log: Logger;
  }) {
    this.#redis = options.redis;
    this.#keys = options.keys;
    this.#pools = options.pools;
    this.#probeLeaseMs = options.probeLeaseMs;
    this.#metrics = options.metrics;
    this.#log = options.log;
    for (const pool of this.#pools.values()) for (const target of pool.targets) this.#poolOf.set(target.deployment, pool);
  }

  /** Reads every breaker, listens for changes, and counts successes every `flushMs`; returns how to stop. */
  async start(subscriber: RedisClient, flushMs: number): Promise<() => Promise<void>> {
    const channel = this.#keys.breakerChanges;
    subscriber.on('message', (from: string, deployment: string) => {
      if (from === channel) void this.#refresh(deployment);
    });
    await subscriber.subscribe(channel);
    await Promise.all([...this.#poolOf.keys()].map((deployment) => this.#refresh(deployment)));
    this.#timer = setInterval(() => void this.flush(), flushMs);
    this.#timer.unref();
    return async () => {
      if (this.#timer) clearInterval(this.#timer);
      await this.flush();
      await subscriber.unsubscribe(channel).catch(() => undefined);
    };
  }

  /** Whether a deployment takes a call now. */
  availability(deployment: string, now: number): Availability {
    const known = this.#known.get(deployment) ?? CLOSED;
    if (known.state === 'open' && now >= known.openUntilMs) return { kind: 'probe' };
    // A half-open breaker's probe runs somewhere: its outcome is not known before a second or so.
    if (known.state !== 'closed') return { kind: 'open', untilMs: Math.max(known.openUntilMs, now + 1_000) };
    if (known.pausedUntilMs > now) return { kind: 'paused', untilMs: known.pausedUntilMs };
    return { kind: 'ready' };
  }

  /** Asks to be the one probe of a deployment whose cooldown ended; false when another worker is. */
  async probe(deployment: string): Promise<boolean> {
    const pool = this.#poolOf.get(deployment);
    if (!pool) return false;
    const reply = await probeBreaker(this.#redis, this.#keys.breaker(deployment), pool.breaker, this.#probeLeaseMs, Date.now());
    this.#apply(pool, deployment, reply);
    return reply.probeGranted;
  }

  /** Counts a call that ended; a failure, a probe and a pause reach Redis (and every worker) at once. */
  record(deployment: string, outcome: CallOutcome): void {
    const pool = this.#poolOf.get(deployment);
    if (!pool) return;
    if (!outcome.failed && !outcome.probe && outcome.pauseUntilMs === 0) {
      const pending = this.#pending.get(deployment) ?? { calls: 0, failures: 0 };
      pending.calls++;
      this.#pending.set(deployment, pending);
      return;
    }
    // A pause is known here at once; the others learn it from the announcement.
    if (outcome.pauseUntilMs > 0) {
      const known = this.#known.get(deployment) ?? CLOSED;
      this.#known.set(deployment, { ...known, pausedUntilMs: Math.max(known.pausedUntilMs, outcome.pauseUntilMs) });
    }
    const pending = this.#pending.get(deployment) ?? { calls: 0, failures: 0 };
    this.#pending.delete(deployment);
    const report = {
      calls: pending.calls + 1,
      failures: pending.failures + (outcome.failed ? 1 : 0),
      probe: outcome.probe ? (outcome.failed ? ('fail' as const) : ('ok' as const)) : null,
      pauseUntilMs: outcome.pauseUntilMs,
    };
    void this.#report(pool, deployment, report, outcome.pauseUntilMs > 0);
  }

  /** Sends the successes counted since the last flush, one call per deployment that had any. */
  flush(): Promise<void> {
    const batch = [...this.#pending];
    this.#pending.clear();
    this.#flushing = this.#flushing.then(() =>
      Promise.all(
        batch.map(([deployment, pending]) => {
          const pool = this.#poolOf.get(deployment) as TargetPool;
          return this.#report(pool, deployment, { ...pending, probe: null, pauseUntilMs: 0 }, false);
        }),
      ).then(() => undefined),
    );
    return this.#flushing;
  }

  /** The state of every deployment as this process knows it, by alias (for /readyz's detail and the metrics). */
  states(): Array<{ alias: string; deployment: string; state: BreakerState; openUntilMs: number; pausedUntilMs: number }> {
    return [...this.#poolOf].map(([deployment, pool]) => ({ alias: pool.alias, deployment, ...(this.#known.get(deployment) ?? CLOSED) }));
  }

  async #report(pool: TargetPool, deployment: string, report: Parameters<typeof reportBreaker>[3], announce: boolean): Promise<void> {
    try {
      const reply = await reportBreaker(this.#redis, this.#keys.breaker(deployment), pool.breaker, report, Date.now());
      const moved = this.#apply(pool, deployment, reply);
      if (moved || announce) await this.#redis.publish(this.#keys.breakerChanges, deployment);
    } catch (error) {
      // A breaker that cannot count is a breaker that stays as it was: calls go on, as without one.
      this.#log.warn({ err: error, deployment }, 'reporting to a circuit breaker failed');
    }
  }

  async #refresh(deployment: string): Promise<void> {
    const pool = this.#poolOf.get(deployment);
    if (!pool) return;
    try {
      this.#apply(pool, deployment, await readBreaker(this.#redis, this.#keys.breaker(deployment), Date.now()));
    } catch (error) {
      this.#log.warn({ err: error, deployment }, 'reading a circuit breaker failed');
    }
  }

  /** Keeps what Redis answered; true when this call moved the breaker (logged and counted here, once). */
  #apply(pool: TargetPool, deployment: string, reply: BreakerReply): boolean {
    this.#known.set(deployment, { state: reply.state, openUntilMs: reply.openUntilMs, pausedUntilMs: reply.pausedUntilMs });
    this.#metrics?.state(pool.alias, deployment, reply.state);
    if (!reply.transition) return false;
    this.#metrics?.transition(pool.alias, deployment, reply.transition);
    const until = reply.transition === 'open' ? { reopensAt: new Date(reply.openUntilMs).toISOString() } : {};
    this.#log.warn(
      { alias: pool.alias, deployment, to: reply.transition, ...until },
      `circuit breaker of deployment '${deployment}' is now ${reply.transition.replace('_', '-')}`,
    );
    return true;
  }
}
