import type { FastifyInstance } from 'fastify';
import { checkReadiness, type Dependency } from '../ops/readiness.ts';

/**
 * /healthz: the process is up, and nothing else is asked. /readyz: each dependency with its state
 * (503 when a required one is down), without the reasons, which the operations listener gives.
 */
export async function healthRoutes(app: FastifyInstance, options: { dependencies: readonly Dependency[] }): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async () => checkReadiness(options.dependencies, { details: false }));
}
