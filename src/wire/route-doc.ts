/**
 * What the OpenAPI document says about a public route, kept beside the route (an exported
 * `RouteDocs`, or an operation's `doc`) and merged into the document by @fastify/swagger's
 * transform (src/web/openapi/openapi-plugin.ts).
 * Response schemas stay out of Fastify's route schema on purpose: Fastify would serialize replies
 * with them (fast-json-stringify drops undeclared fields and orders keys as the schema does), and
 * the bytes the gateway sends are the contract its clients and SDKs read.
 */
import { Type, type TSchema } from '@sinclair/typebox';

/** The credentials a route takes: none (health), a bearer token, or also Anthropic's `x-api-key`. */
export type Credentials = 'none' | 'bearer' | 'bearer-or-x-api-key';

/** One media type of a response: its schema, and for a stream the schema of each event's `data`. */
export interface MediaDoc {
  schema: TSchema;
  /** Server-sent events only: what each `data:` line holds (JSON), as an extension, since OpenAPI 3.1 has no field for it. */
  'x-sse-data'?: TSchema;
}

/** One status of a route: what it means and what its body is. */
export interface ResponseDoc {
  description: string;
  /** Response headers, each a schema with its description. */
  headers?: Record<string, TSchema>;
  content: Record<string, MediaDoc>;
}

/** One operation of the document. */
export interface RouteDoc {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  credentials: Credentials;
  /** The path as the document writes it, where the route's own differs (a wildcard). */
  path?: string;
  /** Path parameters, where the route declares none (a wildcard). */
  params?: TSchema;
  /** Request headers the route reads besides the credential. */
  headers?: TSchema;
  /** Every status the route answers, with its body. */
  responses: Record<number, ResponseDoc>;
}

/** The docs of a route module, keyed by method and the url the route is registered with (`GET /v1/models/*`). */
export type RouteDocs = Readonly<Record<string, RouteDoc>>;

/** The shared components the responses refer to (registered by src/web/openapi/openapi-plugin.ts). */
export const ErrorEnvelopeRef = Type.Unsafe({ $ref: '#/components/schemas/ErrorEnvelope' });
const AnthropicErrorEnvelopeRef = Type.Unsafe({ $ref: '#/components/schemas/AnthropicErrorEnvelope' });

/** The error body of a route: the spec's envelope, or Anthropic's on its Messages API. */
export type ErrorDialect = 'openai' | 'anthropic';

/** A JSON answer. */
export function json(description: string, schema: TSchema): ResponseDoc {
  return { description, content: { 'application/json': { schema } } };
}

/** A JSON answer, or with `stream: true` server-sent events whose `data:` lines hold `events.data`. */
export function jsonOrEvents(description: string, schema: TSchema, events: { description: string; data: TSchema }): ResponseDoc {
  return {
    description,
    content: {
      'application/json': { schema },
      'text/event-stream': { schema: Type.String({ description: events.description }), 'x-sse-data': events.data },
    },
  };
}

// What each status means wherever it is answered; a route may say more precisely.
const MEANINGS: Record<number, string> = {
  400: 'Malformed JSON, a missing required field or an invalid value (body, query, path or header); `param` names it.',
  401: 'No credential (`missing_api_key`), or an invalid, revoked or expired one (`invalid_api_key`, `invalid_token`).',
  402: 'A budget of the tenant or feature, or the credit account, is exhausted (`insufficient_credits`).',
  403: 'The role or the tenant of the credential may not perform this operation (`permission_denied`).',
  404: 'Not found.',
  413: 'The body exceeds the size limit (`request_too_large`).',
  415: 'The body is not sent as `application/json` (`unsupported_media_type`).',
  422: 'Valid JSON, semantically rejected: `context_length_exceeded`, `unsupported_parameter`, `pii_detected`, `idempotency_key_reused`, or the provider refused the request.',
  429: "A rate limit or the tenant's queue cap (`rate_limit_exceeded`); the message and `Retry-After` name the seconds to wait.",
  500: 'Internal gateway error (`internal_error`).',
  502: 'The upstream provider failed (`provider_failed`).',
  503: "Temporarily unavailable: the gateway is restarting or a dependency is down (`service_unavailable`), no worker took the request in time (`queue_timeout`), or the identity provider's key set is unreachable (`jwks_unavailable`).",
  504: 'The upstream provider timed out after the retry budget (`provider_timeout`).',
};

const RETRY_AFTER = Type.Integer({ minimum: 0, description: 'Whole seconds to wait before retrying.' });

/** Error answers of a route for `statuses`, each with its meaning (or the route's own, from `specific`). */
export function errors(dialect: ErrorDialect, statuses: readonly number[], specific: Record<number, string> = {}): Record<number, ResponseDoc> {
  const schema = dialect === 'anthropic' ? AnthropicErrorEnvelopeRef : ErrorEnvelopeRef;
  const responses: Record<number, ResponseDoc> = {};
  for (const status of statuses) {
    const response: ResponseDoc = { description: specific[status] ?? MEANINGS[status] ?? 'Error.', content: { 'application/json': { schema } } };
    if (status === 429 || status === 503) response.headers = { 'Retry-After': RETRY_AFTER };
    responses[status] = response;
  }
  return responses;
}

/** The errors of every authenticated route (400: an invalid query or path value, or a NUL character in one). */
export const AUTHENTICATED = [400, 401, 403, 500, 503] as const;

/** The errors of a route through the admission chain (src/web/admission/handle-request.ts). */
export const ADMITTED = [...AUTHENTICATED, 402, 404, 413, 415, 422, 429, 502, 504] as const;

/** The request headers the admission chain reads. */
export const ADMISSION_HEADERS = {
  'Idempotency-Key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Retries with the same key (24 h, per tenant) are neither charged nor counted twice; a finished request is replayed.',
    }),
  ),
  'X-Feature': Type.Optional(
    Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$', description: 'The feature the request is counted and budgeted under.' }),
  ),
};

/** The admission chain's headers of a route that streams: a stream can be resumed. */
export const STREAMING_ADMISSION_HEADERS = {
  ...ADMISSION_HEADERS,
  'Last-Event-ID': Type.Optional(Type.String({ pattern: '^\\d{1,15}$', description: 'With the same Idempotency-Key: resume a stream after this event id.' })),
};
