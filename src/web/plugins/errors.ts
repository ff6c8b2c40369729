import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import {
  GatewayError,
  HeadersTooLargeError,
  InternalError,
  InvalidJsonError,
  MalformedRequestError,
  RequestTimeoutError,
  UriTooLongError,
  InvalidValueError,
  MethodNotAllowedError,
  MissingRequiredFieldError,
  RequestTooLargeError,
  RouteNotFoundError,
  UnsupportedMediaTypeError,
} from '../../errors/gateway-error.ts';
import { toAnthropicEnvelope, toEnvelope, toGatewayError } from '../../errors/to-envelope.ts';
import { unavailableError } from '../../infra/unavailable.ts';
import { newRequestId } from '../../infra/http/request-id.ts';
import { discardBody } from './discard-body.ts';

type ValidationIssue = NonNullable<FastifyError['validation']>[number];

/** `/messages/0/role` → `messages[0].role`. */
function toParam(instancePath: string, child?: string): string | null {
  const parts = instancePath.split('/').filter(Boolean);
  if (child) parts.push(child);
  const param = parts.map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`)).join('');
  return param === '' ? null : param;
}

// Keywords that only say that a union or a condition failed; the issues of their branches say why.
const WRAPPER_KEYWORDS = new Set(['anyOf', 'oneOf', 'if', 'allOf']);

/**
 * The issue that says most: among the deepest, the first that is not a wrapper. A union's
 * branches that each want one constant (an enum written as literals) become one issue listing them.
 */
function mostSpecific(issues: readonly ValidationIssue[]): ValidationIssue {
  const depth = (issue: ValidationIssue) => issue.instancePath.split('/').length;
  const deepest = Math.max(...issues.map(depth));
  const candidates = issues.filter((issue) => depth(issue) === deepest && !WRAPPER_KEYWORDS.has(issue.keyword));
  const first = candidates[0] ?? (issues[0] as ValidationIssue);
  if (candidates.length > 1 && candidates.every((issue) => issue.keyword === 'const' || issue.keyword === 'type')) {
    const allowed = candidates.map((issue) => {
      const params = issue.params as { allowedValue?: unknown; type?: unknown };
      return issue.keyword === 'const' ? String(params.allowedValue) : `${/^[aeiou]/.test(String(params.type)) ? 'an' : 'a'} ${String(params.type)}`;
    });
    return { ...first, params: { allowedValues: allowed } };
  }
  return first;
}

function fromValidation(issue: ValidationIssue, context: string | undefined): GatewayError {
  const params = issue.params;
  if (issue.keyword === 'required') return new MissingRequiredFieldError(toParam(issue.instancePath, String(params['missingProperty'])) as string);
  if (issue.keyword === 'additionalProperties') {
    const unknown = toParam(issue.instancePath, String(params['additionalProperty'])) as string;
    return new InvalidValueError(unknown, `Unknown parameter '${unknown}'.`);
  }
  const param = toParam(issue.instancePath);
  if (param === null) return new InvalidValueError(null, context === 'body' ? 'The request body must be a JSON object.' : `Invalid ${context ?? 'request'}.`);
  const allowed = Array.isArray(params['allowedValues'])
    ? `: must be one of ${(params['allowedValues'] as unknown[]).join(', ')}`
    : ` ${issue.message ?? 'is invalid'}`;
  return new InvalidValueError(param, `Invalid value for '${param}'${allowed}.`);
}

/** Maps anything Fastify or a handler threw to a GatewayError: the one mapping of the web tier. */
export function fromFastifyError(error: FastifyError, request: FastifyRequest, bodyLimit: number): GatewayError {
  // A failure wrapped on its way up is still a dependency away when that is what caused it.
  if (error instanceof InternalError) return unavailableError(error.cause) ?? error;
  if (error instanceof GatewayError) return error;
  if (error.validation && error.validation.length > 0) return fromValidation(mostSpecific(error.validation), error.validationContext);
  switch (error.code) {
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new InvalidJsonError('The request body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new InvalidJsonError();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      // A route with a limit of its own (an inline batch's) names that one.
      return new RequestTooLargeError(request.routeOptions.bodyLimit ?? bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaTypeError(request.headers['content-type'] ?? 'none');
  }
  if (error instanceof SyntaxError && error.statusCode === 400) return new InvalidJsonError();
  // Fail closed, but say so: without Redis no limit, budget or key can be checked, and without the store no tenant read.
  const unavailable = unavailableError(error);
  if (unavailable) return unavailable;
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new GatewayError(error.statusCode, 'invalid_request_error', 'invalid_request', error.message);
  }
  return toGatewayError(error);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The error body of the route: the spec's envelope, or Anthropic's for its Messages API. */
    errorDialect?: 'openai' | 'anthropic';
  }
  interface FastifyReply {
    /** The code of the error this reply answered with (null for a success), for the metrics. */
    errorCode: string | null;
  }
}

/**
 * Sends the envelope for a GatewayError, in the route's dialect (`dialect`: the caller knows it,
 * before any route was found); the only place an error body is built.
 */
export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: GatewayError,
  dialect = request.routeOptions.config?.errorDialect ?? 'openai',
): FastifyReply {
  if (error.retryAfterSeconds !== null) reply.header('retry-after', String(error.retryAfterSeconds));
  reply.errorCode = error.code;
  const body = dialect === 'anthropic' ? toAnthropicEnvelope(error, request.id) : toEnvelope(error, request.id);
  return reply.code(error.status).type('application/json; charset=utf-8').send(body);
}

/**
 * Fastify's `frameworkErrors`: a path it cannot decode, or a path segment longer than the router
 * takes, found before any route or hook runs. Answered with the envelope like everything else.
 */
export function frameworkErrorHandler(maxParamLength: number) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    reply.header('x-request-id', request.id);
    // No route is known yet: a path of Anthropic's API (a message batch's id) gets its envelope by the path alone.
    const dialect = request.url.startsWith('/v1/messages/') ? 'anthropic' : 'openai';
    if (error.code === 'FST_ERR_BAD_URL') return sendError(request, reply, new MalformedRequestError('The URL path is not valid percent-encoding.'), dialect);
    if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendError(request, reply, new UriTooLongError(maxParamLength), dialect);
    request.log.error({ err: error }, 'framework error');
    return sendError(request, reply, new InternalError(undefined, error));
  };
}

/**
 * Node's `clientError`: a request its HTTP parser refused (a bare CR in a header, headers over the
 * size limit, a request not received in time). No Fastify request exists yet, so the envelope, with
 * a fresh request id, is written on the socket as Node writes its own answer, and the socket closed.
 */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset connection has no one left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const mapped =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new RequestTimeoutError()
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? new HeadersTooLargeError()
        : new MalformedRequestError('The HTTP request is malformed.');
  const requestId = newRequestId();
  const body = JSON.stringify(toEnvelope(mapped, requestId));
  this.log.debug({ err: error, requestId }, 'client error');
  if (socket.writable) {
    const head = `HTTP/1.1 ${mapped.status} ${STATUS_CODES[mapped.status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n`;
    socket.write(head + body);
  }
  socket.destroy(error);
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Answers 405 (with `Allow`) for the methods a path does not serve, instead of a bare 404. */
export function rejectOtherMethods(app: FastifyInstance, url: string, allowed: ReadonlyArray<(typeof METHODS)[number]>): void {
  app.route({
    method: METHODS.filter((method) => !allowed.includes(method)),
    url,
    handler: async (request, reply) => {
      reply.header('allow', allowed.join(', '));
      throw new MethodNotAllowedError(request.method, url, [...allowed]);
    },
  });
}

/** Installs the error handler and the 404/405 handler. */
export const errorsPlugin = fp(
  async (app: FastifyInstance, options: { bodyLimit: number }) => {
    app.decorateReply('errorCode', null);
    app.setErrorHandler(async (error: FastifyError, request, reply) => {
      const mapped = fromFastifyError(error, request, options.bodyLimit);
      if (mapped.status >= 500) request.log.error({ err: error, code: mapped.code }, 'request failed');
      if (mapped instanceof RequestTooLargeError) await discardBody(request.raw);
      return sendError(request, reply, mapped);
    });
    app.setNotFoundHandler((request, reply) => sendError(request, reply, new RouteNotFoundError(request.method, request.url.split('?')[0] as string)));
  },
  { name: 'errors' },
);
