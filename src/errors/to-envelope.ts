import { GatewayError, InternalError } from './gateway-error.ts';

/** The public error envelope of the spec. */
export interface ErrorEnvelope {
  error: {
    type: string;
    code: string;
    message: string;
    param: string | null;
    request_id: string;
  };
}

/** Turns anything thrown into a GatewayError; unknown errors become a 500 that hides internals. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return new InternalError(undefined, error);
}

/** The mapping from a GatewayError to the wire envelope of the spec (every route but Anthropic's /v1/messages). */
export function toEnvelope(error: GatewayError, requestId: string): ErrorEnvelope {
  return {
    error: {
      type: error.type,
      code: error.code,
      message: error.message,
      param: error.param,
      request_id: requestId,
    },
  };
}

/** Anthropic's error body (POST /v1/messages): `{type:'error', error:{type, message}, request_id}`. */
export interface AnthropicErrorEnvelope {
  type: 'error';
  error: { type: string; message: string; code: string; param: string | null };
  request_id: string;
}

/**
 * Anthropic's error type for a status (https://docs.anthropic.com/en/api/errors): what its SDK and
 * Claude Code read to decide whether to retry. The status stays ours.
 */
function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

/** The same GatewayError in Anthropic's shape; the gateway's own code and param ride along in `error`. */
export function toAnthropicEnvelope(error: GatewayError, requestId: string): AnthropicErrorEnvelope {
  return { type: 'error', error: { type: anthropicErrorType(error.status), message: error.message, code: error.code, param: error.param }, request_id: requestId };
}
