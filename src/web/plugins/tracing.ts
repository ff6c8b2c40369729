import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, propagation, type Span } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import type { Tracing } from '../../infra/tracing/tracing.ts';
import {
  ATTR_GATEWAY_CLIENT_DISCONNECTED,
  ATTR_GATEWAY_REQUEST_ID,
  ATTR_GATEWAY_TENANT_ID,
  EVENT_AUTHENTICATED,
} from '../../infra/tracing/gateway-attributes.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's SERVER span, on a model route while tracing is on; null otherwise. */
    span: Span | null;
  }
  interface FastifyContextConfig {
    /** A route of an operation (src/web/routes/v1/operation-routes.ts): its requests are traced; the others (models, usage, admin) are cheap reads. */
    traced?: boolean;
  }
}

/** What is known once the response ended (or the client left): the status, the tenant, the error. */
function endSpan(span: Span, request: FastifyRequest, reply: FastifyReply, raw: ServerResponse): void {
  if (raw.headersSent) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, raw.statusCode);
  if (!raw.writableFinished) span.setAttribute(ATTR_GATEWAY_CLIENT_DISCONNECTED, true);
  if (request.principal) span.setAttribute(ATTR_GATEWAY_TENANT_ID, request.principal.tenantId);
  if (reply.errorCode) span.setAttribute(ATTR_ERROR_TYPE, reply.errorCode);
  // HTTP semantic conventions: a 4xx is the client's failure, not the server span's.
  if (raw.headersSent && raw.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Starts the span of a model route's request, a child of the caller's `traceparent` when it sent one. */
function startSpan(tracing: Tracing, request: FastifyRequest, reply: FastifyReply): void {
  const route = request.routeOptions.url ?? '';
  const span = tracing.tracer.startSpan(
    `${request.method} ${route}`,
    {
      kind: SpanKind.SERVER,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: request.method,
        [ATTR_HTTP_ROUTE]: route,
        [ATTR_URL_PATH]: request.url.split('?', 1)[0],
        [ATTR_URL_SCHEME]: request.protocol,
        [ATTR_GATEWAY_REQUEST_ID]: request.id,
      },
    },
    propagation.extract(ROOT_CONTEXT, request.headers),
  );
  request.span = span;
  // The request's lines carry its trace, error lines of the error handler included (they are
  // logged outside any active context, so the logger's mixin could not find the span).
  const { traceId, spanId } = span.spanContext();
  request.log = reply.log = request.log.child({ trace_id: traceId, span_id: spanId });
  reply.raw.once('close', () => endSpan(span, request, reply, reply.raw));
}

/**
 * A SERVER span per request of the model routes, from before authentication until the response
 * ended (streams included), with the admission steps as its events (src/web/admission/handle-request.ts).
 * With tracing off it adds no hook: `request.span` stays null and every call on it is skipped.
 */
export const tracingPlugin = fp(
  async (app: FastifyInstance, options: { tracing: Tracing }) => {
    app.decorateRequest('span', null);
    const { tracing } = options;
    if (!tracing.enabled) return;
    app.addHook('onRequest', (request, reply, done) => {
      if (request.routeOptions.config.traced) startSpan(tracing, request, reply);
      done();
    });
    // Runs after every onRequest hook, the authentication among them, and before the body is read.
    app.addHook('preParsing', (request, _reply, _payload, done) => {
      request.span?.addEvent(EVENT_AUTHENTICATED);
      done();
    });
  },
  { name: 'tracing' },
);
