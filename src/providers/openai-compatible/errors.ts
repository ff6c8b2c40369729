/** Errors an OpenAI-compatible upstream reports inside a 2xx body. */
import { UpstreamError } from '../shared/upstream-error.ts';

/** True when a parsed JSON value is an error object (`{"error": …}`) rather than a completion or chunk. */
export function isErrorPayload(data: unknown): data is { error: unknown } {
  return typeof data === 'object' && data !== null && 'error' in data && data.error !== null && data.error !== undefined;
}

/**
 * The UpstreamError for an `{"error":…}` payload in a 2xx body or stream (vLLM, OpenRouter and OpenAI
 * itself send one mid-stream before closing).
 */
export function errorFromPayload(payload: { error: unknown }, kind: 'server_error' | 'broken_stream'): UpstreamError {
  const message = errorMessage(payload.error);
  return new UpstreamError(kind, `Upstream reported an error in a 2xx response: ${message}`, { upstreamMessage: message });
}

/** An UpstreamError for a 2xx body that is not the shape we expect. */
export function invalidResponse(reason: string, cause?: unknown): UpstreamError {
  return new UpstreamError('invalid_response', `Upstream response is invalid: ${reason}`, { cause });
}

function errorMessage(error: unknown): string {
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string') {
    return error.message;
  }
  return JSON.stringify(error).slice(0, 200);
}
