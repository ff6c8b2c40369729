/** How Anthropic reports errors: `{"type":"error","error":{"type":…,"message":…}}`, in HTTP bodies and as `event: error` in streams. */
import { isRecord } from '../../wire/json.ts';
import { UpstreamError, excerpt, type UpstreamErrorDetails, type UpstreamFailureKind } from '../shared/upstream-error.ts';
import type { AnthropicErrorDetail } from './wire.ts';

/** The details of an Anthropic error body (message, and its error type as the code); null for any other shape. */
export function readAnthropicError(body: unknown): UpstreamErrorDetails | null {
  const detail = errorDetailOf(body);
  return detail === null ? null : { message: detail.message, code: detail.type };
}

/** The `error` object of an error payload, or null when the value is not one. */
export function errorDetailOf(payload: unknown): AnthropicErrorDetail | null {
  if (!isRecord(payload) || payload.type !== 'error' || !isRecord(payload.error)) return null;
  const { type, message } = payload.error;
  return {
    type: typeof type === 'string' ? type : 'unknown_error',
    message: typeof message === 'string' ? message : excerpt(JSON.stringify(payload.error)),
  };
}

// Kinds follow the HTTP status each error type comes with (https://docs.anthropic.com/en/api/errors).
const IN_STREAM_KINDS: Readonly<Record<string, { kind: UpstreamFailureKind; status: number }>> = {
  overloaded_error: { kind: 'server_error', status: 529 },
  rate_limit_error: { kind: 'rate_limited', status: 429 },
  api_error: { kind: 'server_error', status: 500 },
  invalid_request_error: { kind: 'invalid_request', status: 400 },
};

/** The UpstreamError for an error inside a 2xx answer (an `event: error` in a stream, or an error body sent with 200). */
export function errorFromEvent(detail: AnthropicErrorDetail): UpstreamError {
  const mapped = IN_STREAM_KINDS[detail.type];
  return new UpstreamError(mapped?.kind ?? 'server_error', `Upstream reported an error in the stream: ${detail.type}: ${detail.message}`, {
    status: mapped?.status ?? null,
    upstreamMessage: detail.message,
    code: detail.type,
  });
}
