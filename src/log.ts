import { pino, type Logger } from 'pino';
import { trace } from '@opentelemetry/api';

/**
 * The ids of the span active where a line is logged, so that a line leads to its trace and a
 * trace to its lines. A fresh object each time: pino merges the line's fields into it.
 */
function traceIds(): Record<string, string> {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && trace.isSpanContextValid(spanContext) ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : {};
}

/**
 * The process logger: JSON lines on stdout, one field set per process kind. With `traceIds`
 * (the process traces), a line logged inside a span carries `trace_id` and `span_id`.
 */
export function createLogger(level: string, process: 'web' | 'worker' | 'dev' | 'release', options: { traceIds?: boolean } = {}): Logger {
  return pino({ level, base: { process }, timestamp: pino.stdTimeFunctions.isoTime, ...(options.traceIds ? { mixin: traceIds } : {}) });
}
