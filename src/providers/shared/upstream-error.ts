/** The one classification of upstream failures; the worker's retry loop reads `retryable` and `retryAfterMs`. */

/** Why an upstream call failed. */
export type UpstreamFailureKind =
  | 'connect'
  | 'timeout'
  | 'rate_limited'
  | 'server_error'
  /** The provider refused the request itself (400, 404, 413, 422): the client's to fix. */
  | 'invalid_request'
  /** The provider refused our key (401, 403): the operator's to fix. */
  | 'unauthorized'
  /** Any other 4xx. */
  | 'client_error'
  | 'broken_stream'
  | 'invalid_response'
  | 'aborted';

/** Headers as undici's `request` returns them, or a fetch `Headers`. */
export type UpstreamHeaders = Headers | Record<string, string | string[] | undefined>;

/** When the failure happened: before the response headers, or while reading the body. */
export type NetworkPhase = 'request' | 'body';

/** What a provider said about a failure, read from its error body. */
export interface UpstreamErrorDetails {
  message: string;
  /** The provider's machine-readable code (OpenAI's `code`, Anthropic's error `type`…). */
  code?: string | null;
  /** The request parameter the provider blames. */
  param?: string | null;
  /** A wait the provider asked for in its body (Gemini's RetryInfo). */
  retryAfterMs?: number | null;
}

/** A provider's reader of its own error shape: the details of a parsed JSON error body, or null when it is not one. */
export type ErrorReader = (body: unknown) => UpstreamErrorDetails | null;

/** Options of the UpstreamError constructor. */
export interface UpstreamErrorOptions {
  status?: number | null;
  retryAfterMs?: number | null;
  upstreamMessage?: string | null;
  code?: string | null;
  param?: string | null;
  cause?: unknown;
}

const RETRYABLE_KINDS: ReadonlySet<UpstreamFailureKind> = new Set(['connect', 'timeout', 'rate_limited', 'server_error', 'broken_stream']);

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
const ABORT_CODES = new Set(['UND_ERR_ABORTED', 'ABORT_ERR']);
const EXCERPT_LENGTH = 200;

/** A failed upstream call, classified once. Providers throw only this. */
export class UpstreamError extends Error {
  readonly kind: UpstreamFailureKind;
  readonly status: number | null;
  readonly retryable: boolean;
  readonly retryAfterMs: number | null;
  readonly upstreamMessage: string | null;
  readonly code: string | null;
  readonly param: string | null;

  /**
   * The provider said it is overloaded: 529, no standard status, is the one Anthropic gives its
   * `overloaded_error` (errors.ts maps the in-stream one to it). A 503 says only "unavailable".
   */
  get overloaded(): boolean {
    return this.status === 529;
  }

  constructor(kind: UpstreamFailureKind, message: string, options: UpstreamErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UpstreamError';
    this.kind = kind;
    this.status = options.status ?? null;
    this.retryable = RETRYABLE_KINDS.has(kind);
    this.retryAfterMs = options.retryAfterMs ?? null;
    this.upstreamMessage = options.upstreamMessage ?? null;
    this.code = options.code ?? null;
    this.param = options.param ?? null;
  }

  /**
   * Classifies a non-2xx upstream response (status mapping after openai-node's APIError.generate);
   * the provider's reader takes its message, code and param from the body, else an excerpt is kept.
   */
  static fromResponse(status: number, headers: UpstreamHeaders, bodyText: string, readError: ErrorReader = () => null): UpstreamError {
    const kind = kindForStatus(status);
    const details = readErrorBody(bodyText, readError);
    const detail = details === null ? '' : `: ${details.message}`;
    return new UpstreamError(kind, `Upstream responded with HTTP ${status}${detail}`, {
      status,
      retryAfterMs: parseRetryAfterMs(headers) ?? details?.retryAfterMs ?? null,
      upstreamMessage: details?.message ?? null,
      code: details?.code ?? null,
      param: details?.param ?? null,
    });
  }

  /** Classifies a thrown network error; an abort of our own signal always wins. */
  static fromNetwork(err: unknown, signal?: AbortSignal, phase: NetworkPhase = 'request'): UpstreamError {
    if (isUpstreamError(err)) return err;
    const description = err instanceof Error ? err.message : String(err);
    if (signal?.aborted === true) {
      return new UpstreamError('aborted', 'The upstream call was aborted', { cause: err });
    }
    const kind = kindForNetworkError(err, phase);
    return new UpstreamError(kind, `Upstream ${kind} failure: ${description}`, { cause: err });
  }
}

/** An UpstreamError for a 2xx body or event that is not the shape the provider documents. */
export function invalidResponse(reason: string, cause?: unknown): UpstreamError {
  return new UpstreamError('invalid_response', `Upstream response is invalid: ${reason}`, { cause });
}

/** True for an UpstreamError, also across module copies (checked by `name`, as BullMQ does). */
export function isUpstreamError(e: unknown): e is UpstreamError {
  if (e instanceof UpstreamError) return true;
  return e instanceof Error && e.name === 'UpstreamError' && 'kind' in e && 'retryable' in e;
}

/** Milliseconds to wait from `retry-after-ms`, or `retry-after` as seconds or an HTTP-date; null if absent or invalid. */
export function parseRetryAfterMs(headers: UpstreamHeaders, now: number = Date.now()): number | null {
  const milliseconds = Number.parseFloat(headerValue(headers, 'retry-after-ms') ?? '');
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return Math.round(milliseconds);

  const retryAfter = headerValue(headers, 'retry-after')?.trim();
  if (retryAfter === undefined || retryAfter === '') return null;
  // RFC 9110 §10.2.3: either delay-seconds or an HTTP-date.
  if (/^\d+(\.\d+)?$/.test(retryAfter)) return Math.round(Number.parseFloat(retryAfter) * 1000);
  // Date.parse also accepts bare numbers such as '-3' (a year); an HTTP-date always names a month.
  const date = /[a-z]{3}/i.test(retryAfter) ? Date.parse(retryAfter) : Number.NaN;
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The kind of failure an HTTP status stands for, wherever a provider reports one (a response, or an error inside a stream). */
export function kindForStatus(status: number): UpstreamFailureKind {
  if (status === 429) return 'rate_limited';
  if (status === 408) return 'timeout';
  if (status >= 500) return 'server_error';
  if (status === 400 || status === 404 || status === 413 || status === 422) return 'invalid_request';
  if (status === 401 || status === 403) return 'unauthorized';
  if (status >= 400) return 'client_error';
  return 'invalid_response';
}

function kindForNetworkError(err: unknown, phase: NetworkPhase): UpstreamFailureKind {
  const codes = errorCodes(err);
  if (codes.some((code) => TIMEOUT_CODES.has(code))) return 'timeout';
  if (codes.some((code) => ABORT_CODES.has(code)) || (err instanceof Error && err.name === 'AbortError')) {
    return 'aborted';
  }
  if (codes.some((code) => CONNECT_CODES.has(code))) return phase === 'body' ? 'broken_stream' : 'connect';
  return 'invalid_response';
}

// fetch wraps the undici error in `cause`; walk the chain so both entry points classify alike.
function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = err;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const code: unknown = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}

function headerValue(headers: UpstreamHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function readErrorBody(bodyText: string, readError: ErrorReader): UpstreamErrorDetails | null {
  const trimmed = bodyText.trim();
  if (trimmed === '') return null;
  const details = readError(parseJsonOrUndefined(trimmed));
  if (details !== null) return details;
  return { message: excerpt(trimmed) };
}

/** A body's text as one line of at most 200 characters. */
export function excerpt(text: string): string {
  const line = text.trim().replace(/\s+/g, ' ');
  return line.length > EXCERPT_LENGTH ? `${line.slice(0, EXCERPT_LENGTH)}…` : line;
}

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
