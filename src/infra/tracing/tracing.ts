/**
 * OpenTelemetry traces of one process: the Node SDK when an OTLP endpoint is configured,
 * nothing at all otherwise. Callers check `enabled` before they build a span or its
 * attributes, so a process without tracing pays a property read per call site.
 */
import { DiagLogLevel, diag, trace, type DiagLogFunction, type Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Env } from '../../config.ts';
import { boundedWait } from '../redis/connections.ts';

/** The instrumentation scope of the gateway's own spans. */
const SCOPE = 'llm-gateway';

// A collector that does not answer must not hold a stopping process: what it has not taken by then is lost.
const SHUTDOWN_EXPORT_MS = 5_000;

/** A process's tracing: its tracer, and a shutdown that exports the spans still buffered. */
export interface Tracing {
  /** False: no SDK is running and nothing must be traced. */
  readonly enabled: boolean;
  readonly tracer: Tracer;
  /** Exports what the batch processor holds, then stops; call it after the process's own stop. */
  shutdown(): Promise<void>;
}

/** Tracing off: the API's no-op tracer, never called by code that checks `enabled`. */
export const TRACING_OFF: Tracing = Object.freeze({ enabled: false, tracer: trace.getTracer(SCOPE), shutdown: async () => {} });

/** Whether the environment asks for traces: an OTLP endpoint is set and the SDK is not disabled. */
export function tracingConfigured(env: Pick<Env, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' | 'OTEL_SDK_DISABLED'>): boolean {
  return !env.OTEL_SDK_DISABLED && Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * The SDK's own warnings and errors (an unreachable collector, a rejected export) as log lines of
 * the process; silent otherwise. OTEL_LOG_LEVEL, when set, gives them to the console instead.
 */
function routeDiagnostics(log: Logger): void {
  const to =
    (level: 'error' | 'warn'): DiagLogFunction =>
    (message, ...args) =>
      log[level]({ details: args.map((arg) => (arg instanceof Error ? arg.message : arg)) }, `opentelemetry: ${message}`);
  const ignore: DiagLogFunction = () => {};
  diag.setLogger({ error: to('error'), warn: to('warn'), info: ignore, debug: ignore, verbose: ignore }, DiagLogLevel.WARN);
}

/**
 * Starts the Node SDK when the environment asks for traces, else returns TRACING_OFF. The SDK is
 * imported only then: it loads every exporter it knows, which a process without tracing should
 * not pay for at start. It builds the exporter from the standard OTEL_* variables (OTLP over
 * HTTP, protobuf unless OTEL_EXPORTER_OTLP_TRACES_PROTOCOL says http/json) behind a batch span
 * processor (OTEL_BSP_*). Trace context travels as W3C `traceparent`/`tracestate` only; metrics
 * and logs stay with prom-client and pino; there are no auto-instrumentations: the gateway makes
 * its own spans.
 */
export async function startTracing(env: Env, defaultServiceName: string, log: Logger): Promise<Tracing> {
  if (!tracingConfigured(env)) return TRACING_OFF;
  routeDiagnostics(log);
  const [{ NodeSDK }, { W3CTraceContextPropagator }] = await Promise.all([import('@opentelemetry/sdk-node'), import('@opentelemetry/core')]);
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME ?? defaultServiceName,
    textMapPropagator: new W3CTraceContextPropagator(),
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  log.info(
    { endpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: env.OTEL_SERVICE_NAME ?? defaultServiceName },
    'exporting traces',
  );
  return {
    enabled: true,
    tracer: trace.getTracer(SCOPE),
    async shutdown() {
      await boundedWait(
        sdk.shutdown().catch((error: unknown) => log.warn({ err: error }, 'exporting the last spans failed')),
        SHUTDOWN_EXPORT_MS,
      );
    },
  };
}
