/**
 * How the Gemini API reports errors: `{"error":{code, message, status, details}}` (google.rpc.Status),
 * as an HTTP error body and, rarely, as an object inside a 2xx answer or stream.
 */
import { isRecord } from '../../wire/json.ts';
import { UpstreamError, excerpt, kindForStatus, type UpstreamErrorDetails } from '../shared/upstream-error.ts';
import type { GeminiError } from './wire.ts';

const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

// The HTTP status each canonical code comes with (google/rpc/code.proto), for an error object without `code`.
const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ABORTED: 409,
  ALREADY_EXISTS: 409,
  RESOURCE_EXHAUSTED: 429,
  CANCELLED: 499,
  INTERNAL: 500,
  UNKNOWN: 500,
  DATA_LOSS: 500,
  NOT_IMPLEMENTED: 501,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

/** The `error` object of an error payload (also the first element of an array answer), or null when the value is not one. */
export function geminiErrorOf(payload: unknown): GeminiError | null {
  const value: unknown = Array.isArray(payload) && payload.length === 1 ? (payload as unknown[])[0] : payload;
  if (!isRecord(value) || !isRecord(value.error)) return null;
  return value.error;
}

/** The details of a Gemini error body: message, the canonical status as code, the first field violation as param, RetryInfo as the wait. */
export function readGeminiError(body: unknown): UpstreamErrorDetails | null {
  const error = geminiErrorOf(body);
  if (error === null) return null;
  return {
    message: typeof error.message === 'string' ? error.message : excerpt(JSON.stringify(error)),
    code: typeof error.status === 'string' ? error.status : null,
    param: firstFieldViolation(error),
    retryAfterMs: retryDelayMs(error),
  };
}

// Classified like an HTTP error of the status in `code`, else of the status its canonical code comes with, else 500.
/** The UpstreamError for an error object inside a 2xx answer or stream. */
export function errorFromPayload(error: GeminiError): UpstreamError {
  const status = typeof error.code === 'number' && error.code >= 400 ? error.code : (STATUS_BY_CODE[error.status ?? ''] ?? 500);
  const details = readGeminiError({ error }) as UpstreamErrorDetails;
  return new UpstreamError(kindForStatus(status), `Upstream reported an error in a 2xx response (${status} ${error.status ?? 'error'}): ${details.message}`, {
    status,
    retryAfterMs: details.retryAfterMs,
    upstreamMessage: details.message,
    code: details.code,
    param: details.param,
  });
}

function detailsOf(error: GeminiError, type: string): Array<Record<string, unknown>> {
  return Array.isArray(error.details) ? error.details.filter((detail) => isRecord(detail) && detail['@type'] === type) : [];
}

function firstFieldViolation(error: GeminiError): string | null {
  for (const detail of detailsOf(error, BAD_REQUEST)) {
    const violations = Array.isArray(detail.fieldViolations) ? (detail.fieldViolations as unknown[]) : [];
    const field = violations.map((violation) => (isRecord(violation) ? violation.field : undefined)).find((value) => typeof value === 'string');
    if (typeof field === 'string') return field;
  }
  return null;
}

// A protobuf Duration in JSON: decimal seconds with an `s` suffix ("38s", "1.5s").
function retryDelayMs(error: GeminiError): number | null {
  for (const detail of detailsOf(error, RETRY_INFO)) {
    const match = typeof detail.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay.trim()) : null;
    if (match?.[1] !== undefined) return Math.round(Number.parseFloat(match[1]) * 1000);
  }
  return null;
}
