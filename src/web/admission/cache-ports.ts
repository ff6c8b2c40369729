import type { ScriptedRedis } from '../../infra/redis/scripts.ts';
import type { RedisKeys } from '../../infra/redis/keys.ts';
import type { Outbox } from '../../infra/outbox/outbox.ts';
import type { CatalogFile } from '../../domain/catalog/schema.ts';
import type { WebMetrics } from '../../infra/metrics/web-metrics.ts';
import { RateLimiter } from '../../domain/rate-limit/rate-limiter.ts';
import { lookUpAnswer } from '../../infra/cache/response-cache.ts';
import type { CachePorts } from './cache-step.ts';

/** The response cache's ports of a web process: its command connection, its outbox, its catalog and metrics. */
export function createCachePorts(redis: ScriptedRedis, keys: RedisKeys, outbox: Outbox, catalog: CatalogFile, metrics: WebMetrics | null): CachePorts {
  const limiter = new RateLimiter({ redis, keys });
  return {
    lookUp: (tenantId, digest) => lookUpAnswer(redis, keys, tenantId, digest),
    chargeRate: (check) => limiter.check(check),
    record: (record) => outbox.push(record.tenantId, { kind: 'usage', record }),
    models: catalog.models,
    observe: metrics && ((tenantId, status, totalBytes) => metrics.cached(tenantId, status, totalBytes)),
  };
}
