import type { Logger } from 'pino';
import type { RequestJob } from '../operations/index.ts';
import type { FinalEvent } from '../operations/runner.ts';
import type { OperationCache } from '../operations/operation-cache.ts';
import type { RedisKeys } from '../infra/redis/keys.ts';
import type { ScriptedRedis } from '../infra/redis/scripts.ts';
import { encodeCachedAnswer, storeAnswer } from '../infra/cache/response-cache.ts';

/**
 * Stores a successful answer in its tenant's response cache, as the web decided (the job's
 * `cache`). Called once the client has its answer, so it costs the request no time; a failure is
 * logged and costs only a later hit.
 */
export async function keepInCache(
  deps: { redis: ScriptedRedis; keys: RedisKeys; log: Logger },
  cache: OperationCache<never> | undefined,
  data: RequestJob,
  answer: { final: FinalEvent; emitted: readonly string[]; deployment: string | null },
): Promise<void> {
  const order = data.cache;
  if (!order || !cache) return;
  try {
    const kept = cache.keep(answer.final, answer.emitted);
    if (!kept) return;
    const value = await encodeCachedAnswer({ ...kept, storedAt: Date.now(), deployment: answer.deployment });
    await storeAnswer(deps.redis, deps.keys, { tenantId: data.tenantId, digest: order.digest, value, ttlMs: order.ttlMs, maxBytes: order.maxBytes });
  } catch (error) {
    deps.log.warn({ err: error, requestId: data.requestId }, 'storing the answer in the response cache failed');
  }
}
