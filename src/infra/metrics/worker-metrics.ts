/**
 * The worker's series: each request's outcome, tokens, cost, queue wait, time to first token and
 * duration, read from its usage record once it ends; and each upstream attempt, retry and fallback
 * as they happen. Model labels are catalog aliases and provider labels catalog providers, so their
 * number is the catalog's; tenants as METRICS_TENANTS says.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { UsageRecord } from '../store/repository.ts';
import type { ProviderTarget } from '../../providers/types.ts';
import { isUpstreamError } from '../../providers/shared/upstream-error.ts';
import { LATENCY_BUCKETS, QUEUE_WAIT_BUCKETS } from './buckets.ts';
import { tenantLabeler } from './tenant-label.ts';
import { ERROR_CODE_LABELS, boundedLabel } from './bounded-label.ts';

export class WorkerMetrics {
  readonly #completions: Counter;
  readonly #tokens: Counter;
  readonly #cost: Counter;
  readonly #queueWait: Histogram;
  readonly #firstToken: Histogram;
  readonly #duration: Histogram;
  readonly #attempts: Histogram;
  readonly #retries: Counter;
  readonly #fallbacks: Counter;
  readonly #running: Gauge;
  readonly #tenant: (tenantId: string) => string;
  readonly #code = boundedLabel(ERROR_CODE_LABELS);

  constructor(registry: Registry, options: { tenants: string }) {
    this.#tenant = tenantLabeler(options.tenants);
    const registers = [registry];
    this.#completions = new Counter({
      name: 'gateway_completions_total',
      help: 'Requests run by the workers, by operation, model alias, provider, status (succeeded, failed, cancelled), error code (none for a success) and tenant.',
      labelNames: ['operation', 'model', 'provider', 'status', 'code', 'tenant'],
      registers,
    });
    this.#tokens = new Counter({
      name: 'gateway_tokens_total',
      help: 'Tokens of the requests run, as recorded in their usage records, by model alias, provider, direction (input, output) and tenant.',
      labelNames: ['model', 'provider', 'direction', 'tenant'],
      registers,
    });
    this.#cost = new Counter({
      name: 'gateway_cost_total',
      help: "What the requests run cost, in units of the catalog prices' currency, by model alias and tenant.",
      labelNames: ['model', 'tenant'],
      registers,
    });
    this.#queueWait = new Histogram({
      name: 'gateway_queue_wait_seconds',
      help: 'From enqueue (web) to the start of the run (worker), by operation.',
      labelNames: ['operation'],
      buckets: QUEUE_WAIT_BUCKETS,
      registers,
    });
    this.#firstToken = new Histogram({
      name: 'gateway_time_to_first_token_seconds',
      help: 'From enqueue to the first streamed event sent, for streamed requests that sent one, by operation and model alias.',
      labelNames: ['operation', 'model'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#duration = new Histogram({
      name: 'gateway_request_duration_seconds',
      help: 'From enqueue to the last event, by operation, model alias and status.',
      labelNames: ['operation', 'model', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#attempts = new Histogram({
      name: 'gateway_upstream_attempt_duration_seconds',
      help: "One call to a provider, to its end (a stream's last chunk), by provider, model alias and outcome (ok, cancelled, or the failure's kind: timeout, rate_limited, server_error, …).",
      labelNames: ['provider', 'model', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#retries = new Counter({
      name: 'gateway_upstream_retries_total',
      help: 'Attempts that repeated a failed one on the same model alias, by provider and model alias.',
      labelNames: ['provider', 'model'],
      registers,
    });
    this.#fallbacks = new Counter({
      name: 'gateway_fallbacks_total',
      help: 'Attempts that moved on to the next candidate of a request after the previous one failed, by model alias left and taken.',
      labelNames: ['from_model', 'to_model'],
      registers,
    });
    this.#running = new Gauge({
      name: 'gateway_worker_running_requests',
      help: 'Requests this worker is running now.',
      registers,
    });
  }

  /** A request's run began. */
  runStarted(): void {
    this.#running.inc();
  }

  /** A request's run ended, whatever it did. */
  runEnded(): void {
    this.#running.dec();
  }

  /** A request ended with this usage record. */
  finished(record: UsageRecord): void {
    const tenant = this.#tenant(record.tenantId);
    const { operation, model, provider, status } = record;
    this.#completions.inc({ operation, model, provider, status, code: this.#code(record.errorCode ?? 'none'), tenant });
    if (record.promptTokens > 0) this.#tokens.inc({ model, provider, direction: 'input', tenant }, record.promptTokens);
    if (record.completionTokens > 0) this.#tokens.inc({ model, provider, direction: 'output', tenant }, record.completionTokens);
    if (record.costMicros > 0) this.#cost.inc({ model, tenant }, record.costMicros / 1_000_000);
    this.#queueWait.observe({ operation }, record.queueWaitMs / 1000);
    if (record.ttftMs !== null && record.stream) this.#firstToken.observe({ operation, model }, Math.max(0, record.ttftMs) / 1000);
    this.#duration.observe({ operation, model, status }, record.latencyMs / 1000);
  }

  /** An attempt on `target` is about to start; `previous` is the request's previous attempt's target, if any. */
  attempting(target: ProviderTarget, previous: ProviderTarget | null): void {
    if (previous === null) return;
    if (previous.alias === target.alias) this.#retries.inc({ provider: target.provider, model: target.alias });
    else this.#fallbacks.inc({ from_model: previous.alias, to_model: target.alias });
  }

  /** An attempt ended, after `seconds`, with `error` (undefined on success); `aborted` when the request was cancelled. */
  attempted(target: ProviderTarget, seconds: number, error: unknown, aborted: boolean): void {
    const outcome = error === undefined ? 'ok' : aborted ? 'cancelled' : isUpstreamError(error) ? error.kind : 'other';
    this.#attempts.observe({ provider: target.provider, model: target.alias, outcome }, seconds);
  }
}
