/**
 * What refuses a translated request (the door's checks of its chat view, a provider's request
 * builder in the worker) names chat's parameters, or the provider's; the client sent its own
 * dialect's. Renaming them makes the error name what the client can change.
 */
import { GatewayError } from '../errors/gateway-error.ts';

/** The error with its parameter named as `names` maps it, in `param` and in the message; anything else as it is. */
export function inClientTerms(error: unknown, names: Readonly<Record<string, string>>): unknown {
  if (!(error instanceof GatewayError) || error.param === null) return error;
  const param = names[error.param];
  if (param === undefined) return error;
  const message = error.message.replaceAll(`'${error.param}'`, `'${param}'`);
  return new GatewayError(error.status, error.type, error.code, message, { param, retryAfterSeconds: error.retryAfterSeconds, cause: error });
}

/** Runs `work` (returning a value or a promise), renaming the parameter of what it throws. */
export function renamingParams<T>(work: () => T, names: Readonly<Record<string, string>>): T {
  const rename = (error: unknown): never => {
    throw inClientTerms(error, names);
  };
  try {
    const result = work();
    return (result instanceof Promise ? result.catch(rename) : result) as T;
  } catch (error) {
    return rename(error);
  }
}
