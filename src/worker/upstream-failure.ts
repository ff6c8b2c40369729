import {
  GatewayError,
  InternalError,
  ProviderFailedError,
  ProviderRejectedRequestError,
  ProviderTimeoutError,
  RateLimitExceededError,
} from '../errors/gateway-error.ts';
import { isUpstreamError, type UpstreamError } from '../providers/shared/upstream-error.ts';
import { unavailableError } from '../infra/unavailable.ts';

/** What the mapping needs to know of the run besides the error. */
export interface FailureContext {
  attempts: number;
  /** The catalog alias tried last. */
  model: string;
  /** The wait to advise on a provider rate limit that named none (the retry policy's next backoff). */
  fallbackRetryAfterMs: number;
}

/**
 * Maps what an upstream call finally threw to the error the client receives. The provider's own
 * refusal of the request keeps its meaning (400/422, not retryable); a rate limit that outlasted the
 * retry budget stays a 429 with Retry-After; our key refused, 5xx and broken answers are 502;
 * timeouts are 504.
 */
export function toClientError(error: unknown, context: FailureContext): GatewayError {
  if (error instanceof GatewayError) return error;
  if (!isUpstreamError(error)) return unavailableError(error) ?? new InternalError(undefined, error);
  const tries = context.attempts === 1 ? '1 attempt' : `${context.attempts} attempts`;
  switch (error.kind) {
    case 'timeout':
      return new ProviderTimeoutError(`The provider did not answer in time (${tries}).`);
    case 'invalid_request':
      return new ProviderRejectedRequestError({
        status: error.status ?? 400,
        code: error.code,
        param: error.param,
        model: context.model,
        upstreamMessage: error.upstreamMessage,
      });
    case 'rate_limited': {
      const seconds = Math.max(1, Math.ceil((error.retryAfterMs ?? context.fallbackRetryAfterMs) / 1000));
      return new RateLimitExceededError(`the provider of '${context.model}' is rate limiting requests (${tries})`, seconds);
    }
    default:
      return providerFailed(error, tries);
  }
}

function providerFailed(error: UpstreamError, tries: string): ProviderFailedError {
  const status = error.status === null ? error.kind.replace('_', ' ') : `HTTP ${error.status}`;
  const detail = error.upstreamMessage ? `: ${error.upstreamMessage}` : '';
  return new ProviderFailedError(`The provider failed with ${status} after ${tries}${detail}`, { overloaded: error.overloaded });
}
