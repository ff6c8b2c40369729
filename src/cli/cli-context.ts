/** What CLI commands work with: the store, and prompt administration wired for a process without a web tier. */
import { connectRedis, type RedisClient, type RedisTarget } from '../infra/redis/connections.ts';
import type { CliConfig } from '../config.ts';
import type { Repository } from '../infra/store/repository.ts';
import type { PromptAdminDeps } from '../domain/prompts/prompt-admin.ts';
import type { AuditSink } from '../domain/audit/audit-event.ts';
import { loadCatalogFile } from '../domain/catalog/load-catalog.ts';
import { createRedisKeys } from '../infra/redis/keys.ts';
import { cacheKey } from '../domain/prompts/prompt-cache.ts';
import type { BudgetAdminDeps } from '../domain/budget/budget-admin.ts';
import { BudgetLedger } from '../domain/budget/budget-ledger.ts';
import { storeSpendSource } from '../domain/budget/store-spend-source.ts';
import { defineScripts } from '../infra/redis/scripts.ts';

/** The store, and prompt administration built on first use. */
export interface CliContext {
  repo: Repository;
  /** Audit events go straight to the store: the CLI has no outbox drainer behind it. */
  audit: AuditSink;
  promptAdmin(warn: (line: string) => void): Promise<PromptAdminDeps>;
  /** Throws when neither REDIS_URL nor REDIS_CLUSTER_NODES is set. */
  budgetAdmin(): BudgetAdminDeps;
  /** Makes every web process forget the tenant's cached keys and status (after a revocation). */
  invalidateAuth(tenantId: string, warn: (line: string) => void): Promise<void>;
  close(): Promise<void>;
}

/** Builds the context; Redis is connected only when a command invalidates caches. */
export function createCliContext(repo: Repository, config: CliConfig): CliContext {
  let redis: Promise<RedisClient> | null = null;
  const connect = (target: RedisTarget) => (redis ??= connectRedis(target, 'commands', 'gw-cli', () => undefined));
  const keys = createRedisKeys(config.redisPrefix, config.queueShards);
  const NO_REDIS = 'Neither REDIS_URL nor REDIS_CLUSTER_NODES is set: web processes pick the change up within their cache TTL (5 s).';
  const audit: AuditSink = async (event) => {
    await repo.audit.append([event]);
  };
  return {
    repo,
    audit,
    async promptAdmin(warn) {
      const catalog = config.catalogPath ? await loadCatalogFile(config.catalogPath) : null;
      if (!catalog) warn("CATALOG is not set: the prompt's model is not checked against the catalog.");
      return {
        repository: repo,
        catalog,
        audit,
        invalidate: async (tenantId, name) => {
          if (!config.redis) return warn(NO_REDIS);
          await (await connect(config.redis)).publish(keys.promptInvalidations, cacheKey(tenantId, name));
        },
      };
    },
    budgetAdmin() {
      // A top-up must reach the live balance in Redis as well as the store, or it would not count until a rebuild.
      const target = config.redis;
      if (!target) throw new Error('REDIS_URL or REDIS_CLUSTER_NODES must be set for budgets, credits and plans: they take effect through Redis.');
      const ledger = async () =>
        new BudgetLedger({ redis: defineScripts(await connect(target)), keys, spend: storeSpendSource(repo), reservationTtlMs: 60_000 });
      return {
        repository: repo,
        audit,
        creditRedis: async (tenantId, toppedUp, amount) => (await ledger()).topUp(tenantId, toppedUp, amount),
        invalidate: async (tenantId) => void (await (await connect(target)).publish(keys.settingsInvalidations, tenantId)),
      };
    },
    async invalidateAuth(tenantId, warn) {
      if (!config.redis) return warn(NO_REDIS);
      await (await connect(config.redis)).publish(keys.authInvalidations, tenantId);
    },
    async close() {
      if (redis) (await redis.catch(() => null))?.disconnect();
      await repo.close();
    },
  };
}
