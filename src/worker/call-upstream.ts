import { isUpstreamError } from '../providers/shared/upstream-error.ts';
import type { ProviderTarget } from '../providers/types.ts';
import type { CallOutcome } from '../operations/runner.ts';
import type { TargetPool } from '../domain/catalog/targets.ts';
import { ProviderUnavailableError, RateLimitExceededError } from '../errors/gateway-error.ts';
import type { DeploymentRouter } from './routing/deployment-router.ts';
import { nextDelay, sleep, type RetryPolicy } from './retry.ts';

/**
 * Tries the candidates in order, each with retries on retryable failures (connect, timeout, 429,
 * 5xx, broken stream), all within one time budget per request: each attempt gets what is left of it
 * (`run`'s `timeoutMs`), so the last one ends with the budget. Within a candidate each attempt goes
 * to a deployment the router picks: a retry goes at once to a deployment the request has not tried,
 * and backs off (honouring the upstream's Retry-After) only once every one was tried; a deployment
 * paused by a 429 is waited for; a candidate whose deployments all have their breaker open is passed
 * over at once. `mayRetry` is asked before every retry: a stream whose first token reached the client
 * says no. `pauses`: a 429 pauses its deployment for everyone (not a batch line's); `firstTokenAt`:
 * when the request's first chunk went out, for the deployment's latency. Throws the last failure,
 * or 503 when no candidate had a deployment to call.
 */
export async function callWithRetries<T>(
  pools: readonly TargetPool[],
  router: DeploymentRouter,
  policy: RetryPolicy,
  signal: AbortSignal,
  run: (target: ProviderTarget, timeoutMs: number) => Promise<T>,
  mayRetry: () => boolean,
  options: { pauses: boolean; firstTokenAt: () => number | null },
): Promise<CallOutcome<T>> {
  const { pauses, firstTokenAt } = options;
  const deadline = Date.now() + policy.budgetMs;
  let lastError: unknown;
  let failed = false;
  let reopensAt = Infinity;
  let pausedUntil = 0;
  for (const pool of pools) {
    const tried = new Set<string>();
    let attempts = 0;
    let backoffs = 0;
    for (;;) {
      const choice = await router.choose(pool, tried);
      if (choice.kind === 'open') {
        reopensAt = Math.min(reopensAt, choice.untilMs);
        break;
      }
      if (choice.kind === 'paused') {
        if (choice.untilMs >= deadline) {
          pausedUntil = Math.max(pausedUntil, choice.untilMs);
          break;
        }
        await sleep(choice.untilMs - Date.now(), signal);
        continue;
      }
      const { target, probe } = choice;
      tried.add(target.deployment);
      attempts++;
      const startedAt = Date.now();
      router.started(target);
      try {
        const value = await run(target, Math.max(1, deadline - Date.now()));
        const first = firstTokenAt();
        router.ended(target, (first !== null && first >= startedAt ? first : Date.now()) - startedAt);
        router.record(target, probe, null, signal, pauses);
        return { value, target };
      } catch (error) {
        router.ended(target, null);
        router.record(target, probe, error, signal, pauses);
        lastError = error;
        failed = true;
        if (signal.aborted || !isUpstreamError(error) || !error.retryable || !mayRetry()) throw error;
        if (attempts >= policy.maxAttempts) break;
        if (pool.targets.some((other) => !tried.has(other.deployment))) continue;
        const delay = nextDelay(policy, backoffs++, error.retryAfterMs, deadline - Date.now());
        if (delay === null) break;
        await sleep(delay, signal);
      }
    }
    if (Date.now() >= deadline) break;
  }
  if (failed) throw lastError;
  const model = pools.map((pool) => pool.alias).join("', '");
  const secondsTo = (at: number) => Math.max(1, Math.ceil((at - Date.now()) / 1000));
  // A pause outlasting the budget is the provider's rate limit, told as such.
  if (pausedUntil > 0) throw new RateLimitExceededError(`the provider of '${model}' is rate limiting requests`, secondsTo(pausedUntil));
  throw new ProviderUnavailableError(model, Number.isFinite(reopensAt) ? secondsTo(reopensAt) : 1);
}
