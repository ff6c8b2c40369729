import { Registry, collectDefaultMetrics } from 'prom-client';

/**
 * A process's own registry (never prom-client's global one, so that two apps in one test process
 * do not share series), with Node's process metrics (CPU, memory, event-loop lag, GC) under the
 * `gateway_process_` / `gateway_nodejs_` prefix of prom-client's defaults.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gateway_' });
  return registry;
}
