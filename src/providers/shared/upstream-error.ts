/** The one classification of upstream failures; the worker's retry loop reads `retryable` and `retryAfterMs`. */

/** Why an upstream call failed. */
export type UpstreamFailureKind =
  | 'connect'
  | 'timeout'
  | 'rate_limited'
  | 'server_error'
  | 'client_error'
  | 'broken_stream'
  | 'invalid_response'
  | 'aborted';

/** Headers as undici's `request` returns them, or a fetch `Headers`. */
export type UpstreamHeaders = Headers | Record<string, string | string[] | undefined>;

/** When the failure happened: before the response headers, or while reading the body. */
export type NetworkPhase = 'request' | 'body';

/** Options of the UpstreamError constructor. */
export interface UpstreamErrorOptions {
  status?: number | null;
  retryAfterMs?: number | null;
  upstreamMessage?: string | null;
  cause?: unknown;
}

const RETRYABLE_KINDS: ReadonlySet<UpstreamFailureKind> = new Set([
  'connect',
  'timeout',
  'rate_limited',
  'server_error',
  'broken_stream',
]);

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

  constructor(kind: UpstreamFailureKind, message: string, options: UpstreamErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UpstreamError';
    this.kind = kind;
    this.status = options.status ?? null;
    this.retryable = RETRYABLE_KINDS.has(kind);
    this.retryAfterMs = options.retryAfterMs ?? null;
    this.upstreamMessage = options.upstreamMessage ?? null;
  }

  /** Classifies a non-2xx upstream response (status mapping after openai-node's APIError.generate). */
  static fromResponse(status: number, headers: UpstreamHeaders, bodyText: string): UpstreamError {
    const kind = kindForStatus(status);
    const upstreamMessage = extractUpstreamMessage(bodyText);
    const detail = upstreamMessage === null ? '' : `: ${upstreamMessage}`;
    return new UpstreamError(kind, `Upstream responded with HTTP ${status}${detail}`, {
      status,
      retryAfterMs: parseRetryAfterMs(headers),
      upstreamMessage,
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

function kindForStatus(status: number): UpstreamFailureKind {
  if (status === 429) return 'rate_limited';
  if (status === 408) return 'timeout';
  if (status >= 500) return 'server_error';
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

function extractUpstreamMessage(bodyText: string): string | null {
  const trimmed = bodyText.trim();
  if (trimmed === '') return null;
  const message = openAiStyleMessage(trimmed);
  if (message !== null) return message;
  const excerpt = trimmed.replace(/\s+/g, ' ');
  return excerpt.length > EXCERPT_LENGTH ? `${excerpt.slice(0, EXCERPT_LENGTH)}…` : excerpt;
}

// OpenAI sends {error:{message}}; Ollama and some proxies send {error:"…"}.
function openAiStyleMessage(text: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || !('error' in parsed)) return null;
  const error: unknown = parsed.error;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string') {
    return error.message;
  }
  return null;
}
