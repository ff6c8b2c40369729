/** The one error hierarchy: every failure the gateway reports is a GatewayError leaf. */

/** The `type` values the spec allows in the envelope. */
export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'rate_limit_error' | 'api_error';

/** Base of every error that maps to the public envelope. */
export class GatewayError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string;
  readonly param: string | null;
  /** Seconds for the `Retry-After` header, when the status invites a retry. */
  readonly retryAfterSeconds: number | null;
  /**
   * The provider said it is overloaded. The spec's envelope has no word for it (the status and code
   * stay); Anthropic's has one, which its SDK and Claude Code retry as such.
   */
  readonly overloaded: boolean;

  constructor(
    status: number,
    type: ErrorType,
    code: string,
    message: string,
    options: { param?: string | null; retryAfterSeconds?: number | null; overloaded?: boolean; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = options.param ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds ?? null;
    this.overloaded = options.overloaded ?? false;
  }
}

/** 400 `invalid_json`: the body is not parseable JSON. */
export class InvalidJsonError extends GatewayError {
  constructor(message = 'The request body is not valid JSON.') {
    super(400, 'invalid_request_error', 'invalid_json', message);
  }
}

/** 400 `missing_required_field`. */
export class MissingRequiredFieldError extends GatewayError {
  constructor(param: string, message = `Missing required parameter: '${param}'.`) {
    super(400, 'invalid_request_error', 'missing_required_field', message, { param });
  }
}

/** 400 `invalid_value`: a field is present but of the wrong type or range. */
export class InvalidValueError extends GatewayError {
  constructor(param: string | null, message: string) {
    super(400, 'invalid_request_error', 'invalid_value', message, { param });
  }
}

/** 413 `request_too_large`: the body (or `what` of it: an uploaded file) exceeds the route's limit. */
export class RequestTooLargeError extends GatewayError {
  constructor(limitBytes: number, what = 'The request body') {
    super(413, 'invalid_request_error', 'request_too_large', `${what} exceeds the limit of ${limitBytes} bytes.`);
  }
}

/** 400 `malformed_request`: the HTTP request itself cannot be read (a bad header line, an undecodable path). */
export class MalformedRequestError extends GatewayError {
  constructor(message: string) {
    super(400, 'invalid_request_error', 'malformed_request', message);
  }
}

/** 408 `request_timeout`: the client did not send its whole request in time. */
export class RequestTimeoutError extends GatewayError {
  constructor() {
    super(408, 'invalid_request_error', 'request_timeout', 'The request was not received in time.');
  }
}

/** 414 `uri_too_long`: a path segment is longer than the router takes. */
export class UriTooLongError extends GatewayError {
  constructor(limit: number) {
    super(414, 'invalid_request_error', 'uri_too_long', `A path segment of the URL is longer than ${limit} characters.`);
  }
}

/** 431 `headers_too_large`: the request's headers exceed the server's limit. */
export class HeadersTooLargeError extends GatewayError {
  constructor() {
    super(431, 'invalid_request_error', 'headers_too_large', 'The request headers are too large.');
  }
}

/** 415 `unsupported_media_type`: the body is not sent as JSON (or as the route's `expected` type: a form of an upload). */
export class UnsupportedMediaTypeError extends GatewayError {
  constructor(contentType: string, expected = 'application/json') {
    super(415, 'invalid_request_error', 'unsupported_media_type', `Content-Type '${contentType}' is not supported; send ${expected}.`, {
      param: 'Content-Type',
    });
  }
}

/** 401 `missing_api_key`. */
export class MissingApiKeyError extends GatewayError {
  constructor() {
    super(401, 'authentication_error', 'missing_api_key', 'No API key provided. Send it as `Authorization: Bearer <API_KEY>`.');
  }
}

/** Why a known key was refused: recorded with the denial in its tenant's audit log. */
export interface KnownKeyDenial {
  tenantId: string;
  keyId: string;
  reason: 'revoked_key' | 'expired_key' | 'tenant_disabled';
}

/** 401 `invalid_api_key`: unknown, malformed, revoked or expired key, or a key of a disabled tenant. */
export class InvalidApiKeyError extends GatewayError {
  /** The key's tenant, id and why it was refused when the key is known: the denial is audited for that tenant. */
  readonly knownKey: KnownKeyDenial | null;
  constructor(message = 'The API key is invalid or has been revoked.', knownKey: KnownKeyDenial | null = null) {
    super(401, 'authentication_error', 'invalid_api_key', message);
    this.knownKey = knownKey;
  }
}

/** 403 `permission_denied`: the principal's role may not perform the operation. */
export class PermissionDeniedError extends GatewayError {
  constructor(role: string, operation: string) {
    super(403, 'invalid_request_error', 'permission_denied', `The role '${role}' may not ${operation}.`);
  }
}

/** 404 `not_found`: no such route. */
export class RouteNotFoundError extends GatewayError {
  constructor(method: string, url: string) {
    super(404, 'invalid_request_error', 'not_found', `No route for ${method} ${url}.`);
  }
}

/** 404 `not_found`: the tenant has no such resource (budget, tenant, …). */
export class ResourceNotFoundError extends GatewayError {
  constructor(what: string, why?: string) {
    super(404, 'invalid_request_error', 'not_found', `${what} does not exist${why === undefined ? '' : `: ${why}`}.`);
  }
}

/** 409 `already_exists`: the id asked for is taken. */
export class AlreadyExistsError extends GatewayError {
  constructor(what: string, param: string) {
    super(409, 'invalid_request_error', 'already_exists', `${what} already exists.`, { param });
  }
}

/** 405 `method_not_allowed`: the path exists, the method does not. */
export class MethodNotAllowedError extends GatewayError {
  constructor(method: string, url: string, allowed: string[]) {
    super(405, 'invalid_request_error', 'method_not_allowed', `${method} is not allowed on ${url}; use ${allowed.join(', ')}.`);
  }
}

/** 404 `model_not_found`. */
export class ModelNotFoundError extends GatewayError {
  constructor(model: string) {
    super(404, 'invalid_request_error', 'model_not_found', `The model '${model}' does not exist in the catalog.`, { param: 'model' });
  }
}

/**
 * 400 `unsupported_model`: the alias serves another kind of request (a chat model asked for
 * embeddings, an embeddings model asked for a completion).
 */
export class WrongModelModeError extends GatewayError {
  constructor(model: string, mode: 'chat' | 'embeddings', route: string) {
    const is = mode === 'embeddings' ? 'an embeddings model' : 'a chat model';
    const needs = mode === 'embeddings' ? 'a chat model' : "an embeddings model (catalog mode 'embeddings')";
    super(400, 'invalid_request_error', 'unsupported_model', `The model '${model}' is ${is}; ${route} needs ${needs}.`, { param: 'model' });
  }
}

/** 400 `model_selection_unavailable`: `"model": "auto"` is planned, not available. */
export class AutoModelUnavailableError extends GatewayError {
  constructor() {
    super(
      400,
      'invalid_request_error',
      'model_selection_unavailable',
      "Automatic model selection ('auto') is not available yet; send a concrete catalog alias such as 'svc-standard'.",
      { param: 'model' },
    );
  }
}

/** 404 `prompt_not_found`: the tenant has no prompt (or version) of that name. */
export class UnknownPromptError extends GatewayError {
  constructor(name: string, version?: number) {
    const what = version === undefined ? `The prompt '${name}' does not exist.` : `The prompt '${name}' has no version ${version}.`;
    super(404, 'invalid_request_error', 'prompt_not_found', what, { param: 'prompt' });
  }
}

/** 400 `idempotency_key_invalid`: empty, or longer than the spec's 255 characters. */
export class IdempotencyKeyInvalidError extends GatewayError {
  constructor(length: number) {
    super(
      400,
      'invalid_request_error',
      'idempotency_key_invalid',
      length === 0 ? 'The Idempotency-Key header is empty.' : `The Idempotency-Key header has ${length} characters; at most 255 are allowed.`,
      { param: 'Idempotency-Key' },
    );
  }
}

/** 422 `idempotency_key_reused`: the key was used with a different request. */
export class IdempotencyKeyReusedError extends GatewayError {
  constructor() {
    super(
      422,
      'invalid_request_error',
      'idempotency_key_reused',
      'This Idempotency-Key was already used with a different request body; use a new key for a new request.',
      { param: 'Idempotency-Key' },
    );
  }
}

/**
 * 409 `idempotency_key_answered`: the key's request was answered within the key's lifetime, and the answer is no
 * longer held (the gateway's Redis lost it); the request is not run again, and nothing is charged.
 */
export class IdempotencyKeyAnsweredError extends GatewayError {
  constructor(requestId: string) {
    super(
      409,
      'invalid_request_error',
      'idempotency_key_answered',
      `This Idempotency-Key was answered already (request ${requestId}), and that answer is no longer held; it is not run again. Use a new key to run the request again.`,
      { param: 'Idempotency-Key' },
    );
  }
}

/** 409 `stream_not_held`: a stream resumed with Last-Event-ID whose key no request holds any more; it is not run anew. */
export class StreamNotHeldError extends GatewayError {
  constructor() {
    super(
      409,
      'invalid_request_error',
      'stream_not_held',
      'The stream this Last-Event-ID resumes is no longer held, and it is not run anew; send the request again without Last-Event-ID.',
      { param: 'Last-Event-ID' },
    );
  }
}

/** 402 `insufficient_credits`: a budget window or the credit account cannot cover the request (one code for both, per the spec). */
export class InsufficientCreditsError extends GatewayError {
  constructor(message: string) {
    super(402, 'invalid_request_error', 'insufficient_credits', message);
  }
}

/** 429 `rate_limit_exceeded`, with `Retry-After` in whole seconds, named in the message too. */
export class RateLimitExceededError extends GatewayError {
  constructor(what: string, retryAfterSeconds: number) {
    super(429, 'rate_limit_error', 'rate_limit_exceeded', `Rate limit exceeded: ${what}. Retry after ${retryAfterSeconds} seconds.`, { retryAfterSeconds });
  }
}

/** 422 `pii_detected`: the tenant's policy blocks a category found; names categories and messages, never values. */
export class PiiDetectedError extends GatewayError {
  readonly categories: string[];
  /** `params`: where the data is, as the client names the fields (`messages[2].content`, `input[0]`…). */
  constructor(categories: string[], params: string[]) {
    super(
      422,
      'invalid_request_error',
      'pii_detected',
      `The request contains personal or secret data this tenant's policy blocks (${categories.join(', ')}) in ${params.join(', ')}.`,
      { param: params[0] ?? null },
    );
    this.categories = categories;
  }
}

/** 422 `unsupported_parameter`; `detail` says what of the parameter is not supported, when not all of it. */
export class UnsupportedParameterError extends GatewayError {
  constructor(param: string, model: string, detail?: string) {
    const what = detail === undefined ? '' : ` (${detail})`;
    super(422, 'invalid_request_error', 'unsupported_parameter', `The model '${model}' does not support the parameter '${param}'${what}.`, { param });
  }
}

/** 422 `context_length_exceeded`. */
export class ContextLengthExceededError extends GatewayError {
  constructor(model: string, promptTokens: number, maxTokens: number, window: number) {
    super(
      422,
      'invalid_request_error',
      'context_length_exceeded',
      `The prompt (${promptTokens} tokens) plus max_tokens (${maxTokens}) exceeds the context window of '${model}' (${window} tokens).`,
      { param: 'messages' },
    );
  }
}

/** 422 `context_length_exceeded`: one input of an embeddings request is longer than the model takes. */
export class InputTooLongError extends GatewayError {
  constructor(model: string, param: string, tokens: number, window: number) {
    super(422, 'invalid_request_error', 'context_length_exceeded', `'${param}' (${tokens} tokens) exceeds the input length of '${model}' (${window} tokens).`, {
      param,
    });
  }
}

/**
 * 400 or 422 `invalid_request_error`: the provider refused the request itself (its 400, 404, 413 or
 * 422). The provider's code and param are kept (else `provider_invalid_request`), and the message
 * says that the provider said it. Not retryable: the same request would be refused again.
 */
export class ProviderRejectedRequestError extends GatewayError {
  constructor(options: { status: number; code: string | null; param: string | null; model: string; upstreamMessage: string | null }) {
    const code = options.code ?? 'provider_invalid_request';
    // A code the spec gives a status keeps it: a provider's 400 context_length_exceeded is our 422.
    const status = options.status === 422 || code === 'context_length_exceeded' ? 422 : 400;
    const detail = options.upstreamMessage ?? 'no message';
    super(status, 'invalid_request_error', code, `The provider of '${options.model}' rejected the request (HTTP ${options.status}): ${detail}`, {
      param: options.param,
    });
  }
}

/** 502 `provider_failed`; `overloaded`: the provider said it is overloaded. */
export class ProviderFailedError extends GatewayError {
  constructor(message: string, options: { overloaded?: boolean } = {}) {
    super(502, 'api_error', 'provider_failed', message, options);
  }
}

/** 504 `provider_timeout`. */
export class ProviderTimeoutError extends GatewayError {
  constructor(message: string) {
    super(504, 'api_error', 'provider_timeout', message);
  }
}

/** 503 `provider_unavailable`: every deployment of every candidate model has its circuit breaker open. */
export class ProviderUnavailableError extends GatewayError {
  constructor(model: string, retryAfterSeconds: number) {
    super(
      503,
      'api_error',
      'provider_unavailable',
      `Every deployment of '${model}' is failing and cooling down; the next one is tried again in about ${retryAfterSeconds} s.`,
      { retryAfterSeconds },
    );
  }
}

/** 503 `queue_timeout`: no worker picked the job up before the deadline. */
export class QueueTimeoutError extends GatewayError {
  constructor(deadlineMs: number, retryAfterSeconds: number) {
    super(503, 'api_error', 'queue_timeout', `No worker picked the request up within ${deadlineMs} ms; retry after ${retryAfterSeconds} s.`, {
      retryAfterSeconds,
    });
  }
}

/** POST /v1/responses/{id}/cancel of a response that was not created in the background: nothing runs to cancel. */
export class NotCancellableError extends GatewayError {
  constructor(id: string) {
    super(
      400,
      'invalid_request_error',
      'invalid_value',
      `The response '${id}' was not created with background: true; only a background response can be cancelled.`,
    );
  }
}

/**
 * A background response whose job was lost: `worker_lost` when its worker stopped past the stall
 * limit, `response_lost` when Redis lost its job. Sending it again is the client's to decide.
 */
export class ResponseLostError extends GatewayError {
  constructor(code: 'worker_lost' | 'response_lost', message: string) {
    super(503, 'api_error', code, message, { retryAfterSeconds: 1 });
  }
}

/** 503 `service_unavailable`: a dependency (Redis, the store) is down, the process is draining, or the console is not built (no Retry-After). */
export class ServiceUnavailableError extends GatewayError {
  constructor(message: string, retryAfterSeconds: number | null = 1) {
    super(503, 'api_error', 'service_unavailable', message, { retryAfterSeconds });
  }
}

/** 503 `service_unavailable` for a request whose job a Redis that came back empty lost: its client is told to send it again, and it is never charged. */
export class RequestLostError extends ServiceUnavailableError {
  constructor() {
    super('The gateway lost this request when its Redis restarted; send it again.', 1);
  }
}

/** 499 `client_closed_request`: the client went away before its answer; nobody receives this, it only ends the request quietly. */
export class ClientClosedRequestError extends GatewayError {
  constructor() {
    super(499, 'invalid_request_error', 'client_closed_request', 'The client closed the connection before the answer.');
  }
}

/** 500 `internal_error`: anything not otherwise classified. */
export class InternalError extends GatewayError {
  constructor(message = 'The gateway failed to process the request.', cause?: unknown) {
    super(500, 'api_error', 'internal_error', message, { cause });
  }
}

/** Why a JWT was refused; the envelope's code is always `invalid_token`, this names the rule for logs and tests. */
export type InvalidTokenReason =
  | 'malformed'
  | 'algorithm_not_allowed'
  | 'issuer_not_allowed'
  | 'audience_mismatch'
  | 'unknown_key'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'missing_claim'
  | 'invalid_claim'
  | 'tenant_disabled';

/** 401 `invalid_token`: a JWT that fails verification; the message names the rule, never the token or its values. */
export class InvalidTokenError extends GatewayError {
  readonly reason: InvalidTokenReason;
  constructor(reason: InvalidTokenReason, message: string, cause?: unknown) {
    super(401, 'authentication_error', 'invalid_token', message, { cause });
    this.reason = reason;
  }
}

/** 503 `jwks_unavailable`: the identity provider's key set cannot be fetched and no key within its TTL is cached. */
export class JwksUnavailableError extends GatewayError {
  constructor(message: string, retryAfterSeconds: number, cause?: unknown) {
    super(503, 'api_error', 'jwks_unavailable', message, { retryAfterSeconds, cause });
  }
}
