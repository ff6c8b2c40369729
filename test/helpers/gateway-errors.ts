/** What unit tests of the door's refusals share. */
import { GatewayError } from '../../src/errors/gateway-error.ts';

/** The GatewayError `run` throws; fails the test when it throws nothing or something else. */
export function gatewayError(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}
