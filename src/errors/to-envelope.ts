import { Type, type Static } from '@sinclair/typebox';
import { GatewayError, InternalError } from './gateway-error.ts';

/** The public error envelope of the spec: the body of every non-2xx answer (the OpenAPI document's `ErrorEnvelope`). */
export const ErrorEnvelopeSchema = Type.Object(
  {
    error: Type.Object({
      type: Type.Union([
        Type.Literal('invalid_request_error'),
        Type.Literal('authentication_error'),
        Type.Literal('rate_limit_error'),
        Type.Literal('api_error'),
      ]),
      code: Type.String({ description: 'Machine-readable sub-code, e.g. `rate_limit_exceeded`, `model_not_found`.' }),
      message: Type.String(),
      param: Type.Union([Type.String(), Type.Null()], { description: 'The offending parameter, null when none applies.' }),
      request_id: Type.String({ pattern: '^req_', description: 'Trace handle, also sent as the `x-request-id` header.' }),
    }),
  },
  { description: 'The error envelope of every non-2xx answer.' },
);

/** The public error envelope of the spec. */
export type ErrorEnvelope = Static<typeof ErrorEnvelopeSchema>;

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

const ANTHROPIC_ERROR_TYPES = [
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'overloaded_error',
  'timeout_error',
  'api_error',
] as const;

/** Anthropic's error body, answered on its Messages API (the OpenAPI document's `AnthropicErrorEnvelope`). */
export const AnthropicErrorEnvelopeSchema = Type.Object(
  {
    type: Type.Literal('error'),
    error: Type.Object({
      type: Type.Union(ANTHROPIC_ERROR_TYPES.map((type) => Type.Literal(type))),
      message: Type.String(),
      code: Type.String({ description: "The gateway's code, as in the spec's envelope." }),
      param: Type.Union([Type.String(), Type.Null()]),
    }),
    request_id: Type.String({ pattern: '^req_' }),
  },
  { description: "Anthropic's error body, with the gateway's status, code and param." },
);

/** Anthropic's error body (POST /v1/messages): `{type:'error', error:{type, message}, request_id}`. */
export type AnthropicErrorEnvelope = Static<typeof AnthropicErrorEnvelopeSchema>;

/**
 * Anthropic's error type for an error (https://docs.anthropic.com/en/api/errors): what its SDK and
 * Claude Code read to decide whether to retry, by its status but for a provider's overload, which
 * stays one whatever status it has become. The status stays ours.
 */
function anthropicErrorType({ status, overloaded }: GatewayError): AnthropicErrorEnvelope['error']['type'] {
  if (overloaded) return 'overloaded_error';
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
  return { type: 'error', error: { type: anthropicErrorType(error), message: error.message, code: error.code, param: error.param }, request_id: requestId };
}
