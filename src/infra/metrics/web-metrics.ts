/**
 * The web tier's series: requests by route, status class, error code, model and tenant; their
 * duration; and the gateway's own overhead around the queue — the time from the request's arrival
 * to its enqueue, and from the last event's arrival to the end of the response. Observed in one
 * onResponse hook, so a request costs a few label lookups and no Redis.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { EventQueue } from '../events/event-queue.ts';
import { LATENCY_BUCKETS, OVERHEAD_BUCKETS } from './buckets.ts';
import { tenantLabeler } from './tenant-label.ts';
import { ERROR_CODE_LABELS, boundedLabel } from './bounded-label.ts';

interface Admitted {
  /** Seconds from the request's arrival to its enqueue. */
  beforeEnqueue: number;
  events: EventQueue;
}

export interface WebMetricsOptions {
  /** METRICS_TENANTS. */
  tenants: string;
  /** The catalog's aliases and tiers: a model label is one of them or `other`, never what a client typed. */
  models: ReadonlySet<string>;
}

export class WebMetrics {
  readonly #requests: Counter;
  readonly #duration: Histogram;
  readonly #overhead: Histogram;
  readonly #tenant: (tenantId: string) => string;
  readonly #models: ReadonlySet<string>;
  readonly #code = boundedLabel(ERROR_CODE_LABELS);
  readonly #admitted = new WeakMap<FastifyRequest, Admitted>();
  readonly #cacheLookups: Counter;
  readonly #cacheBytes: Gauge;

  constructor(registry: Registry, options: WebMetricsOptions) {
    this.#tenant = tenantLabeler(options.tenants);
    this.#models = options.models;
    this.#requests = new Counter({
      name: 'gateway_http_requests_total',
      help: 'HTTP requests answered, by route, status class, error code (none for a success), model alias and tenant.',
      labelNames: ['route', 'status_class', 'code', 'model', 'tenant'],
      registers: [registry],
    });
    this.#duration = new Histogram({
      name: 'gateway_http_request_duration_seconds',
      help: 'From the arrival of a request to the end of its response (a whole stream), by route and status class.',
      labelNames: ['route', 'status_class'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    this.#overhead = new Histogram({
      name: 'gateway_web_overhead_seconds',
      help: "The web tier's own time for a queued request: before_enqueue (arrival to enqueue: parsing, auth, admission) and after_last_event (the last event's arrival to the end of the response).",
      labelNames: ['route', 'phase'],
      buckets: OVERHEAD_BUCKETS,
      registers: [registry],
    });
    this.#cacheLookups = new Counter({
      name: 'gateway_cache_requests_total',
      help: 'Requests of operations the response cache holds, by what it did (hit, miss, refresh: stored without a look-up, bypass: neither) and tenant.',
      labelNames: ['result', 'tenant'],
      registers: [registry],
    });
    this.#cacheBytes = new Gauge({
      name: 'gateway_cache_stored_bytes',
      help: "Bytes the response cache holds, as this process's last look-up read them; tenants outside METRICS_TENANTS share 'other' (the last read of any).",
      labelNames: ['tenant'],
      registers: [registry],
    });
  }

  /** What the response cache did for a request, and the tenant's bytes held when it looked. */
  cached(tenantId: string, result: string, totalBytes: number | null): void {
    const tenant = this.#tenant(tenantId);
    this.#cacheLookups.inc({ result, tenant });
    if (totalBytes !== null) this.#cacheBytes.set({ tenant }, totalBytes);
  }

  /** A request was enqueued (or attached to a stored answer): its overhead so far, and where its last event will be seen. */
  admitted(request: FastifyRequest, reply: FastifyReply, events: EventQueue): void {
    this.#admitted.set(request, { beforeEnqueue: reply.elapsedTime / 1000, events });
  }

  /** The response ended, or its client went away. */
  responded(request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url ?? 'unmatched';
    const statusClass = `${Math.floor(reply.statusCode / 100)}xx`;
    const model = modelOf(request.body);
    this.#requests.inc({
      route,
      status_class: statusClass,
      code: this.#code(reply.errorCode ?? 'none'),
      model: model === null ? 'none' : this.#models.has(model) ? model : 'other',
      tenant: request.principal ? this.#tenant(request.principal.tenantId) : 'none',
    });
    this.#duration.observe({ route, status_class: statusClass }, reply.elapsedTime / 1000);
    const admitted = this.#admitted.get(request);
    if (!admitted) return;
    this.#overhead.observe({ route, phase: 'before_enqueue' }, admitted.beforeEnqueue);
    const lastEventAt = admitted.events.lastEventAt;
    if (lastEventAt !== null) this.#overhead.observe({ route, phase: 'after_last_event' }, (performance.now() - lastEventAt) / 1000);
  }
}

function modelOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const model = (body as { model?: unknown }).model;
  return typeof model === 'string' ? model : null;
}

/**
 * Observes every response of the app when its connection's response closes: Fastify's onResponse
 * misses a stream whose client went away (the reply is hijacked and never finishes). Register it
 * before any hook that may refuse a request, so that the refusals are counted too.
 */
export const webMetricsPlugin = fp(
  async (app: FastifyInstance, options: { metrics: WebMetrics }) => {
    app.addHook('onRequest', (request, reply, done) => {
      reply.raw.once('close', () => options.metrics.responded(request, reply));
      done();
    });
  },
  { name: 'web-metrics' },
);
