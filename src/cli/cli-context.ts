/** What CLI commands work with: the store, and prompt administration wired for a process without a web tier. */
import { Redis } from 'ioredis';
import type { CliConfig } from '../config.ts';
import type { Repository } from '../store/repository.ts';
import type { PromptAdminDeps } from '../prompts/prompt-admin.ts';
import type { AuditSink } from '../audit/audit-event.ts';
import { loadCatalogFile } from '../catalog/load-catalog.ts';
import { createRedisKeys } from '../redis/keys.ts';
import { cacheKey } from '../prompts/prompt-cache.ts';

/** The store, and prompt administration built on first use. */
export interface CliContext {
  repo: Repository;
  /** Audit events go straight to the store: the CLI has no outbox drainer behind it. */
  audit: AuditSink;
  promptAdmin(warn: (line: string) => void): Promise<PromptAdminDeps>;
  close(): Promise<void>;
}

/** Builds the context; Redis is connected only when a command invalidates caches. */
export function createCliContext(repo: Repository, config: CliConfig): CliContext {
  let redis: Redis | null = null;
  const audit: AuditSink = async (event) => {
    await repo.audit.append([event]);
  };
  return {
    repo,
    audit,
    async promptAdmin(warn) {
      const catalog = config.catalogPath ? await loadCatalogFile(config.catalogPath) : null;
      if (!catalog) warn('CATALOG is not set: the prompt\'s model is not checked against the catalog.');
      const keys = createRedisKeys(config.redisPrefix);
      return {
        repository: repo,
        catalog,
        audit,
        invalidate: async (tenantId, name) => {
          if (!config.redisUrl) return warn('REDIS_URL is not set: web processes pick the change up within their cache TTL (5 s).');
          redis ??= new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
          await redis.publish(keys.promptInvalidations, cacheKey(tenantId, name));
        },
      };
    },
    async close() {
      redis?.disconnect();
      await repo.close();
    },
  };
}
