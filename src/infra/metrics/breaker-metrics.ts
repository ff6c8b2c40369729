/**
 * The circuit breakers' series. Labels are catalog aliases and deployment ids, so their number is
 * the catalog's. Every worker reports the state as it last learned it; a transition is counted by
 * the worker whose call made it, so the sum over workers is the number of transitions.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { BreakerState } from '../redis/breaker-states.ts';

const STATE_VALUES: Record<BreakerState, number> = { closed: 0, open: 1, half_open: 2 };

export class BreakerMetrics {
  readonly #state: Gauge;
  readonly #transitions: Counter;

  constructor(registry: Registry) {
    this.#state = new Gauge({
      name: 'gateway_circuit_state',
      help: "Each deployment's circuit breaker: 0 closed, 1 open, 2 half-open.",
      labelNames: ['alias', 'deployment'],
      registers: [registry],
    });
    this.#transitions = new Counter({
      name: 'gateway_circuit_transitions_total',
      help: 'Circuit breaker transitions made by this worker, by alias, deployment and the state entered (open, half_open, closed).',
      labelNames: ['alias', 'deployment', 'to'],
      registers: [registry],
    });
  }

  state(alias: string, deployment: string, state: BreakerState): void {
    this.#state.set({ alias, deployment }, STATE_VALUES[state]);
  }

  transition(alias: string, deployment: string, to: BreakerState): void {
    this.#transitions.inc({ alias, deployment, to });
  }
}
