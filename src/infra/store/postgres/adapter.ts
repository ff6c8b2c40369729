/** The Repository over PostgreSQL (`pg.Pool`), for hosts that ship PostgreSQL as their database. */
import { Pool } from 'pg';
import type { Repository } from '../repository.ts';
import { createAuditRepository } from './audit.ts';
import { createBatchRepository } from './batches.ts';
import { createBudgetRepository } from './budgets.ts';
import { createFileRepository } from './files.ts';
import { createPolicyRepository } from './policies.ts';
import { runMigrations } from './migrations.ts';
import { createPromptRepository } from './prompts.ts';
import { createResponseRepository } from './responses.ts';
import { createApiKeyRepository, createTenantRepository } from './tenants-keys.ts';
import { createUsageRepository } from './usage.ts';
import { createWebhookRepository } from './webhooks.ts';

/** A Repository on a small pool that fails fast (5 s) when PostgreSQL is unreachable. */
export function createPostgresRepository(databaseUrl: string): Repository {
  const pool = new Pool({ connectionString: databaseUrl, max: 10, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000 });
  // An idle client that loses its server emits here; the pool already discards it, and the next
  // query reports the outage. Without a listener the event would crash the process.
  pool.on('error', () => undefined);
  let closing: Promise<void> | null = null;
  return {
    kind: 'postgres',
    tenants: createTenantRepository(pool),
    apiKeys: createApiKeyRepository(pool),
    prompts: createPromptRepository(pool),
    usage: createUsageRepository(pool),
    audit: createAuditRepository(pool),
    budgets: createBudgetRepository(pool),
    policies: createPolicyRepository(pool),
    responses: createResponseRepository(pool),
    webhooks: createWebhookRepository(pool),
    files: createFileRepository(pool),
    batches: createBatchRepository(pool),
    migrate: () => runMigrations(pool),
    async ping() {
      await pool.query('SELECT 1');
    },
    close() {
      closing ??= pool.end();
      return closing;
    },
  };
}
