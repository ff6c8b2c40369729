import type { Outbox } from '../../infra/outbox/outbox.ts';
import type { CatalogFile } from '../../domain/catalog/schema.ts';
import type { WebMetrics } from '../../infra/metrics/web-metrics.ts';
import type { CachePorts } from './cache-step.ts';

/** The response cache's ports of a web process: its outbox, its catalog and metrics (admission reads the cache). */
export function createCachePorts(outbox: Outbox, catalog: CatalogFile, metrics: WebMetrics | null): CachePorts {
  return {
    record: (record) => outbox.push(record.tenantId, { kind: 'usage', record }),
    models: catalog.models,
    observe: metrics && ((tenantId, status, totalBytes) => metrics.cached(tenantId, status, totalBytes)),
  };
}
