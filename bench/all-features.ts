/**
 * The gateway set-up of the benches that compare two revisions: every admission feature on and none
 * refusing (API key, rate limits far above what the machine can send, a budget policy, PII `flag`).
 */
import { BENCH_MODEL, startStack, type BenchStack, type StackOptions } from './stack.ts';
import { LARGE_MICROS } from './admission-tenant.ts';
import { startPrivateRedis, type PrivateRedis } from '../src/dev/private-redis.ts';
import type { CleanupStack } from './cleanup-stack.ts';

/** Environment of web and worker: the rate limiter runs on every request and never refuses. */
const ALL_FEATURES_ENV: Record<string, string> = {
  TENANT_RPM: '100000000',
  KEY_RPM: '100000000',
  TENANT_TPM: '10000000000',
  KEY_TPM: '10000000000',
  PII_DEFAULT_MODE: 'flag',
};

/** One budget policy (a day of 10¹⁵ µ): checked and settled on every request, never refusing. */
const prepareAllFeatures: NonNullable<StackOptions['prepareTenant']> = async (repository, tenantId) => {
  await repository.budgets.createPolicy({ id: 'bud_bench_day', tenantId, feature: null, window: 'day', limitMicros: LARGE_MICROS });
};

/** The benches' request body (system + user message, `max_tokens: 64`); streamed, it asks for usage. */
export function requestBody(stream: boolean): string {
  const base = {
    model: BENCH_MODEL,
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hello to the benchmark.' },
    ],
    max_tokens: 64,
  };
  return JSON.stringify(stream ? { ...base, stream: true, stream_options: { include_usage: true } } : base);
}

/** Headers of a gateway request with the stack's key. */
export function gatewayHeaders(stack: BenchStack): Record<string, string> {
  return { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' };
}

/** One answer before the load: it must succeed, and its x-ratelimit header shows the limiter ran. */
export async function rateLimitHeader(stack: BenchStack): Promise<string | null> {
  const response = await fetch(`${stack.gatewayUrl}/chat/completions`, {
    method: 'POST',
    headers: gatewayHeaders(stack),
    body: requestBody(false),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`first completion: status ${response.status}: ${text.slice(0, 200)}`);
  return response.headers.get('x-ratelimit-limit-requests');
}

/**
 * A private Redis (its counters belong to the run alone) and one web and one worker process from
 * `root` (this checkout when undefined) with every feature on, both undone by `cleanups`.
 * `cpus` pins Redis, web and worker to the gateway's and the upstream to its own; `models` adds catalog aliases;
 * `env` is merged over the every-feature environment (e.g. to turn metrics on).
 */
export async function startAllFeaturesStack(
  cleanups: CleanupStack,
  options: {
    root: string | undefined;
    connections: number;
    cpus?: { gateway: string; upstream: string };
    models?: StackOptions['models'];
    env?: Record<string, string>;
  },
): Promise<{ redisServer: PrivateRedis; stack: BenchStack }> {
  const redisServer = await startPrivateRedis(options.cpus ? { cpus: options.cpus.gateway } : {});
  // One entry for both, registered once the stack is up: an abort during the start would otherwise
  // stop this Redis under processes that then wait for it until the exit cuts them off, left running.
  const stack = await startStack({
    redisUrl: redisServer.url,
    root: options.root,
    workers: 1,
    // Headroom over the connection count, as the other benches give it.
    workerConcurrency: options.connections * 2,
    upstreamConnections: options.connections * 2,
    nodeOptions: { web: '', worker: '' },
    env: { ...ALL_FEATURES_ENV, ...options.env },
    prepareTenant: prepareAllFeatures,
    ...(options.cpus ? { cpus: options.cpus } : {}),
    ...(options.models ? { models: options.models } : {}),
  }).catch(async (error: unknown) => {
    await redisServer.stop();
    throw error;
  });
  cleanups.register(async () => {
    await stack.close();
    await redisServer.stop();
  });
  return { redisServer, stack };
}
