import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { checkReadiness, ReadinessSchema, type Dependency } from '../../infra/health/readiness.ts';
import { errors, json, type RouteDocs } from '../../wire/route-doc.ts';

/** /healthz's answer. */
const HealthSchema = Type.Object({ status: Type.Literal('ok') });

/** Health checks: public, and answered 503 while the process drains. */
export const healthDocs: RouteDocs = {
  'GET /healthz': {
    operationId: 'getHealth',
    summary: 'Liveness',
    description: 'The process is up. Needs no credential.',
    tags: ['Health'],
    credentials: 'none',
    responses: {
      200: json('The process is up.', HealthSchema),
      ...errors('openai', [400, 500, 503], { 503: 'The process is draining (`service_unavailable`).' }),
    },
  },
  'GET /readyz': {
    operationId: 'getReadiness',
    summary: 'Readiness',
    description: 'The state of each dependency (Redis, the store, the workers), without the reasons (the operations listener gives them). Needs no credential.',
    tags: ['Health'],
    credentials: 'none',
    responses: {
      200: json('Ready, or degraded.', ReadinessSchema),
      ...errors('openai', [400, 500, 503], {
        503: 'A required dependency is down, or the process is draining (`service_unavailable`); the message names each state.',
      }),
    },
  },
};

/**
 * /healthz: the process is up, and nothing else is asked. /readyz: each dependency with its state
 * (503 when a required one is down), without the reasons, which the operations listener gives.
 */
export async function healthRoutes(app: FastifyInstance, options: { dependencies: readonly Dependency[] }): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async () => checkReadiness(options.dependencies, { details: false }));
}
