/** How the worker retries one request's upstream calls (DESIGN.md, Worker). */
export interface RetryPolicy {
  maxAttempts: number;
  budgetMs: number;
  baseMs: number;
  maxDelayMs: number;
}

/** `min(base·2^attempt, max)` plus 0–25 % jitter; attempt counts from 0. */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const wait = Math.min(policy.baseMs * 2 ** attempt, policy.maxDelayMs);
  return Math.round(wait + wait * 0.25 * random());
}

/**
 * The delay before the next attempt, or null when the request must give up: attempts
 * used up, or the wait (the upstream's Retry-After when it sent one) would overrun the budget.
 */
export function nextDelay(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs: number | null,
  remainingBudgetMs: number,
  random: () => number = Math.random,
): number | null {
  if (attempt + 1 >= policy.maxAttempts) return null;
  const delay = retryAfterMs ?? backoffDelay(policy, attempt, random);
  return delay < remainingBudgetMs ? delay : null;
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
