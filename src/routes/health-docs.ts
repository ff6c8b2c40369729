/** The OpenAPI document's word on /healthz and /readyz (src/routes/health.ts). */
import { Type } from '@sinclair/typebox';
import { errors, json, type RouteDocs } from '../openapi/route-doc.ts';

/** /healthz's answer. */
export const HealthSchema = Type.Object({ status: Type.Literal('ok') });

/** /readyz's answer: each dependency's state (src/ops/readiness.ts). */
export const ReadinessSchema = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('degraded')], { description: '`degraded`: an optional dependency (the workers) is down; requests are still taken and wait in the queue.' }),
  checks: Type.Record(
    Type.String(),
    Type.Union([Type.Object({ state: Type.Literal('up'), latency_ms: Type.Number() }), Type.Object({ state: Type.Literal('down'), error: Type.String() })]),
  ),
});

/** Health checks: public, and answered 503 while the process drains. */
export const healthDocs: RouteDocs = {
  'GET /healthz': {
    operationId: 'getHealth',
    summary: 'Liveness',
    description: 'The process is up. Needs no credential.',
    tags: ['Health'],
    credentials: 'none',
    responses: { 200: json('The process is up.', HealthSchema), ...errors('openai', [400, 500, 503], { 503: 'The process is draining (`service_unavailable`).' }) },
  },
  'GET /readyz': {
    operationId: 'getReadiness',
    summary: 'Readiness',
    description: 'The state of each dependency (Redis, the store, the workers). Needs no credential.',
    tags: ['Health'],
    credentials: 'none',
    responses: { 200: json('Ready, or degraded.', ReadinessSchema), ...errors('openai', [400, 500, 503], { 503: 'A required dependency is down, or the process is draining (`service_unavailable`); the message names each state.' }) },
  },
};
