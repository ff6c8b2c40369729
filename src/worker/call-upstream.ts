import { isUpstreamError } from '../providers/shared/upstream-error.ts';
import type { ProviderTarget } from '../providers/types.ts';
import type { CallOutcome } from '../operations/runner.ts';
import { nextDelay, sleep, type RetryPolicy } from './retry.ts';

/**
 * Tries the candidates in order, each with retries on retryable failures (connect,
 * timeout, 429, 5xx, broken stream), backing off as the policy says and honouring the
 * upstream's Retry-After, all within one time budget per request: each attempt gets what is
 * left of it (`run`'s `timeoutMs`), so the last one ends with the budget. `mayRetry` is asked
 * before every retry: a stream whose first token reached the client says no. Throws the
 * last failure.
 */
export async function callWithRetries<T>(
  targets: readonly ProviderTarget[],
  policy: RetryPolicy,
  signal: AbortSignal,
  run: (target: ProviderTarget, timeoutMs: number) => Promise<T>,
  mayRetry: () => boolean,
): Promise<CallOutcome<T>> {
  const deadline = Date.now() + policy.budgetMs;
  let lastError: unknown;
  for (const target of targets) {
    for (let attempt = 0; ; attempt++) {
      try {
        return { value: await run(target, Math.max(1, deadline - Date.now())), target };
      } catch (error) {
        lastError = error;
        if (signal.aborted || !isUpstreamError(error) || !error.retryable || !mayRetry()) throw error;
        const delay = nextDelay(policy, attempt, error.retryAfterMs, deadline - Date.now());
        if (delay === null) break;
        await sleep(delay, signal);
      }
    }
    if (Date.now() >= deadline) break;
  }
  throw lastError;
}
