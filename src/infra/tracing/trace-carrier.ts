/** A span's W3C trace context as it crosses the queue, so that the worker's spans continue the web tier's trace. */
import { Type, type Static } from '@sinclair/typebox';
import { ROOT_CONTEXT, propagation, trace, type Context, type Span } from '@opentelemetry/api';

/** The values of the `traceparent` and `tracestate` headers (W3C Trace Context) of one request's web span. */
export const TraceCarrierSchema = Type.Object({ traceparent: Type.String(), tracestate: Type.Optional(Type.String()) });

/** A request's trace context, as its job carries it. */
export type TraceCarrier = Static<typeof TraceCarrierSchema>;

/** The trace context of `span` (through the propagator the SDK registered); undefined when it has none to give. */
export function carrierOf(span: Span): TraceCarrier | undefined {
  const carrier: Partial<TraceCarrier> = {};
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
  return carrier.traceparent === undefined ? undefined : (carrier as TraceCarrier);
}

/** The context whose span is the one `carrier` names: the parent of the spans made for the request. */
export function contextOf(carrier: TraceCarrier | undefined): Context {
  return carrier ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT;
}
