/** The one reading of "a dependency is away": Redis or the store unreachable is a 503 to retry, wherever it is met. */
import { ServiceUnavailableError } from '../errors/gateway-error.ts';
import { isRedisUnavailable } from './redis/connections.ts';
import { isStoreUnavailable } from './store/store-unavailable.ts';

// A refused, reset or timed-out socket: ioredis and pg report it alike, so the message cannot say which.
const SOCKET_ERROR = /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH/;

/** The 503 for an error that means Redis or the store cannot be reached (the error itself, or what caused it); null for any other. */
export function unavailableError(error: unknown): ServiceUnavailableError | null {
  if (isStoreUnavailable(error)) return new ServiceUnavailableError('The gateway cannot reach its database right now; retry shortly.', 1);
  for (const candidate of [error, error instanceof Error ? error.cause : undefined]) {
    if (!(candidate instanceof Error)) continue;
    const code = (candidate as NodeJS.ErrnoException).code ?? '';
    if (SOCKET_ERROR.test(candidate.message) || SOCKET_ERROR.test(code)) {
      return new ServiceUnavailableError('The gateway cannot reach its state store or its database right now; retry shortly.', 1);
    }
    if (isRedisUnavailable(candidate)) return new ServiceUnavailableError('The gateway cannot reach its state store right now; retry shortly.', 1);
  }
  return null;
}
