/** How OpenAI-compatible servers report errors: `{"error":{message, type, code, param}}`, or `{"error":"…"}` (Ollama, some proxies). */
import { UpstreamError, excerpt, type UpstreamErrorDetails } from '../shared/upstream-error.ts';

/** True when a parsed JSON value is an error object (`{"error": …}`) rather than a completion or chunk. */
export function isErrorPayload(data: unknown): data is { error: unknown } {
  return typeof data === 'object' && data !== null && 'error' in data && data.error !== null && data.error !== undefined;
}

/** The details of an OpenAI-style error body; null for any other shape. */
export function readOpenAiError(body: unknown): UpstreamErrorDetails | null {
  if (!isErrorPayload(body)) return null;
  const error = body.error;
  if (typeof error === 'string') return { message: error };
  if (typeof error !== 'object' || error === null) return null;
  const fields = error as { message?: unknown; code?: unknown; param?: unknown };
  const message = typeof fields.message === 'string' ? fields.message : excerpt(JSON.stringify(error));
  // OpenAI's `code` is a string or null; some servers send a number (the HTTP status), which says nothing more.
  return { message, code: typeof fields.code === 'string' ? fields.code : null, param: typeof fields.param === 'string' ? fields.param : null };
}

/**
 * The UpstreamError for an `{"error":…}` payload in a 2xx body or stream (vLLM, OpenRouter and OpenAI
 * itself send one mid-stream before closing).
 */
export function errorFromPayload(payload: { error: unknown }, kind: 'server_error' | 'broken_stream'): UpstreamError {
  const details = readOpenAiError(payload);
  const message = details?.message ?? excerpt(JSON.stringify(payload.error));
  return new UpstreamError(kind, `Upstream reported an error in a 2xx response: ${message}`, { upstreamMessage: message, code: details?.code ?? null });
}
