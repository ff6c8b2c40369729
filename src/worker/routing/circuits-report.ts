import type { Dependency } from '../../infra/health/readiness.ts';
import type { CircuitBreakers } from './circuit-breakers.ts';

/**
 * /readyz's view of the upstreams, as this worker knows them: every deployment not taking calls
 * now (its breaker open or half-open, or paused by a 429), with until when. Never down: a provider
 * failing is not this process failing, and the worker still serves the others.
 */
export function circuitsReport(breakers: CircuitBreakers): Dependency {
  return {
    name: 'circuits',
    required: false,
    async probe() {
      const now = Date.now();
      const states = breakers.states();
      const unavailable = states
        .filter((known) => known.state !== 'closed' || known.pausedUntilMs > now)
        .map((known) => ({
          alias: known.alias,
          deployment: known.deployment,
          state: known.state,
          ...(known.state === 'open' ? { reopens_at: new Date(known.openUntilMs).toISOString() } : {}),
          ...(known.pausedUntilMs > now ? { paused_until: new Date(known.pausedUntilMs).toISOString() } : {}),
        }));
      return { deployments: states.length, unavailable };
    },
  };
}
