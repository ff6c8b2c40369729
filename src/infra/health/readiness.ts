/**
 * What /readyz reports: each dependency of the process with its state. A required dependency that
 * is down makes the process not ready (503, so an orchestrator stops sending it traffic); an
 * optional one only degrades it (200, status "degraded"), because taking every web process out of
 * rotation while no worker runs would turn requests that wait in the queue into refused connections.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ServiceUnavailableError } from '../../errors/gateway-error.ts';

/** One dependency: its probe resolves with what it found when up and rejects with why when down. */
export interface Dependency {
  name: string;
  required: boolean;
  probe(): Promise<Record<string, unknown>>;
}

/** A required dependency that is up when `ping` resolves (Redis's PING, the store's ping). */
export function pinged(name: string, ping: () => Promise<unknown>): Dependency {
  return {
    name,
    required: true,
    async probe() {
      await ping();
      return {};
    },
  };
}

/** /readyz's answer: each dependency's state; an `up` one may say more (the queue: when a worker was last seen). */
export const ReadinessSchema = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('degraded')], {
    description: '`degraded`: an optional dependency (the workers) is down; requests are still taken and wait in the queue.',
  }),
  checks: Type.Record(
    Type.String(),
    Type.Union([Type.Object({ state: Type.Literal('up'), latency_ms: Type.Number() }), Type.Object({ state: Type.Literal('down'), error: Type.String() })]),
  ),
});

export type ReadinessReport = Static<typeof ReadinessSchema>;

// A probe that hangs (a Redis failing over, a store under a lock) must not hang the orchestrator's probe.
const PROBE_TIMEOUT_MS = 2_000;

/** The promise, or a rejection after `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Probes every dependency at once; throws ServiceUnavailableError naming each state when a
 * required one is down. Without `details` (the public port, which anyone may ask) a dependency
 * that is down is named without why: its error may name hosts and addresses of the deployment.
 */
export async function checkReadiness(dependencies: readonly Dependency[], options: { details: boolean }): Promise<ReadinessReport> {
  const results = await Promise.all(
    dependencies.map(async (dependency) => {
      const started = performance.now();
      try {
        const found = await withTimeout(dependency.probe(), PROBE_TIMEOUT_MS);
        return { dependency, report: { state: 'up' as const, latency_ms: Math.round((performance.now() - started) * 10) / 10, ...found } };
      } catch (error) {
        return { dependency, report: { state: 'down' as const, error: options.details ? (error as Error).message : 'unavailable' } };
      }
    }),
  );
  const checks: ReadinessReport['checks'] = {};
  for (const { dependency, report } of results) checks[dependency.name] = report;
  const down = results.filter(({ report }) => report.state === 'down');
  if (down.some(({ dependency }) => dependency.required)) {
    const states = results.map(({ dependency, report }) => (report.state === 'up' ? `${dependency.name} up` : `${dependency.name} down (${report.error})`));
    throw new ServiceUnavailableError(`Not ready: ${states.join('; ')}.`);
  }
  return { status: down.length === 0 ? 'ready' : 'degraded', checks };
}
