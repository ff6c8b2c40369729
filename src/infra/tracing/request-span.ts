/**
 * The worker's span of one request: a child of the web tier's span through the trace context
 * its job carries (one per request, whatever job it shares), active while the request runs, so
 * that the attempts' spans and the request's log lines belong to its trace.
 */
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import type { JobCommon } from '../queue/job.ts';
import type { UsageRecord } from '../store/repository.ts';
import type { Tracing } from './tracing.ts';
import { contextOf } from './trace-carrier.ts';
import {
  ATTR_GATEWAY_ATTEMPTS,
  ATTR_GATEWAY_COST_MICROS,
  ATTR_GATEWAY_MODEL_ALIAS,
  ATTR_GATEWAY_QUEUE_WAIT_MS,
  ATTR_GATEWAY_REQUEST_ID,
  ATTR_GATEWAY_REQUESTED_MODEL,
  ATTR_GATEWAY_STATUS,
  ATTR_GATEWAY_STREAM,
  ATTR_GATEWAY_TENANT_ID,
  ATTR_GATEWAY_USAGE_SOURCE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from './gateway-attributes.ts';

/**
 * Runs one request inside its span, named `{operation} {requested alias}` (e.g. `chat svc-flash`),
 * `operation` being its operation's `gen_ai.operation.name`.
 */
export async function inRequestSpan(tracing: Tracing, data: JobCommon, operation: string, run: () => Promise<void>): Promise<void> {
  const parent = contextOf(data.traceContext);
  const span = tracing.tracer.startSpan(
    `${operation} ${data.requestedModel}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: operation,
        [ATTR_GATEWAY_REQUEST_ID]: data.requestId,
        [ATTR_GATEWAY_TENANT_ID]: data.tenantId,
        [ATTR_GATEWAY_REQUESTED_MODEL]: data.requestedModel,
        [ATTR_GATEWAY_STREAM]: data.stream,
      },
    },
    parent,
  );
  try {
    await context.with(trace.setSpan(parent, span), run);
  } catch (error) {
    span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.name : '_OTHER');
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Records how the request ended on its span (the active one), from its usage record: the status,
 * the alias that answered, attempts, tokens, cost; a failure's gateway error code as `error.type`.
 */
export function recordRunOutcome(tracing: Tracing, record: UsageRecord, attempts: number): void {
  if (!tracing.enabled) return;
  const span = trace.getActiveSpan();
  if (!span) return;
  span.setAttributes({
    [ATTR_GATEWAY_STATUS]: record.status,
    [ATTR_GATEWAY_MODEL_ALIAS]: record.model,
    [ATTR_GATEWAY_ATTEMPTS]: attempts,
    [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: record.promptTokens,
    [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: record.completionTokens,
    [ATTR_GATEWAY_USAGE_SOURCE]: record.usageSource,
    [ATTR_GATEWAY_COST_MICROS]: record.costMicros,
    [ATTR_GATEWAY_QUEUE_WAIT_MS]: record.queueWaitMs,
  });
  if (record.status !== 'failed') return;
  span.setAttribute(ATTR_ERROR_TYPE, record.errorCode ?? '_OTHER');
  span.setStatus({ code: SpanStatusCode.ERROR });
}
