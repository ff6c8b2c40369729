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

/** The one mapping from a GatewayError to the wire envelope. */
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
