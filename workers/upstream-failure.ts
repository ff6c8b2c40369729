import { GatewayError, InternalError, ProviderFailedError, ProviderTimeoutError } from '../src/errors/gateway-error.ts';
import { isUpstreamError } from '../src/providers/shared/upstream-error.ts';

/** Maps what an upstream call finally threw to the error the client receives. */
export function toClientError(error: unknown, attempts: number): GatewayError {
  if (error instanceof GatewayError) return error;
  if (!isUpstreamError(error)) return new InternalError(undefined, error);
  const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  if (error.kind === 'timeout') return new ProviderTimeoutError(`The provider did not answer in time (${tries}).`);
  const status = error.status === null ? error.kind.replace('_', ' ') : `HTTP ${error.status}`;
  const detail = error.upstreamMessage ? `: ${error.upstreamMessage}` : '';
  return new ProviderFailedError(`The provider failed with ${status} after ${tries}${detail}`);
}
