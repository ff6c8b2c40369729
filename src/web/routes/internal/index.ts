import type { FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';
import type { AuditRepository } from '../../../infra/store/repository.ts';
import type { PromptAdminDeps } from '../../../domain/prompts/prompt-admin.ts';
import { internalPromptRoutes } from './prompts.ts';
import { internalAuditRoutes } from './audit.ts';
import { internalBudgetRoutes } from './budgets.ts';
import type { BudgetAdminDeps } from '../../../domain/budget/budget-admin.ts';
import type { BudgetLedger } from '../../../domain/budget/budget-ledger.ts';
import { internalPiiPolicyRoutes } from './pii-policy.ts';
import { internalDataPolicyRoutes } from './data-policy.ts';
import { internalCachePolicyRoutes } from './cache-policy.ts';
import type { PiiPolicyAdminDeps } from '../../../domain/pii/pii-policy-admin.ts';
import type { TenantSettingsCache } from '../../../domain/tenants/tenant-settings.ts';
import { internalTenantRoutes } from './tenants.ts';
import type { TenantAdminDeps } from '../../../domain/tenants/tenant-admin.ts';
import { internalKeyRoutes } from './keys.ts';
import type { KeyAdminDeps } from '../../../domain/access/key-admin.ts';
import { internalWebhookRoutes } from './webhooks.ts';
import type { WebhookAdminDeps } from '../../../domain/webhooks/webhook-admin.ts';
import type { CatalogFile } from '../../../domain/catalog/schema.ts';
import type { JobBatch } from '../../../infra/queue/job.ts';
import type { PermissionTable } from '../../auth/permissions.ts';
import { internalMeRoutes } from './me.ts';
import { internalCatalogRoutes, type ReadCircuits } from './catalog.ts';
import { internalQueueRoutes, type LastWorkerBeat } from './queues.ts';

/** What the internal surface's routes need, built by the composition root. */
export interface InternalRouteDeps {
  promptAdmin: PromptAdminDeps;
  budgetAdmin: BudgetAdminDeps;
  piiAdmin: PiiPolicyAdminDeps;
  tenantAdmin: TenantAdminDeps;
  keyAdmin: KeyAdminDeps;
  webhookAdmin: WebhookAdminDeps;
  settings: TenantSettingsCache;
  audit: AuditRepository;
  /** The budget counters: another tenant's budgets and credit, for the operator. */
  ledger: BudgetLedger;
  /** The auth hook's table, from which GET /me lists the caller's permissions. */
  permissions: PermissionTable;
  catalog: CatalogFile;
  circuits: ReadCircuits;
  /** The request queue, one per shard. */
  queues: ReadonlyArray<Queue<JobBatch>>;
  lastWorkerBeat: LastWorkerBeat;
  /** The queue board's path. */
  queueBoard: string;
}

/**
 * The internal surface under /internal/v1 (not part of the public contract). Routes act on
 * the caller's own tenant, except tenants (/tenants, /tenants/{tenant}/…) and keys that name
 * another tenant, which only the operator tenant's admins may reach; the role matrix
 * (src/domain/access/roles.ts) decides.
 */
export async function internalRoutes(app: FastifyInstance, options: InternalRouteDeps): Promise<void> {
  const { operatorTenant } = options.tenantAdmin;
  await app.register(internalMeRoutes, { tenants: options.tenantAdmin.repository.tenants, operatorTenant, permissions: options.permissions });
  await app.register(internalPromptRoutes, { admin: options.promptAdmin });
  await app.register(internalAuditRoutes, { audit: options.audit });
  await app.register(internalBudgetRoutes, { admin: options.budgetAdmin, ledger: options.ledger, settings: options.settings });
  await app.register(internalPiiPolicyRoutes, { admin: options.piiAdmin, settings: options.settings });
  // The data and cache policies need what the PII policy does: the store, the audit sink and the settings' invalidation.
  await app.register(internalDataPolicyRoutes, { admin: options.piiAdmin, settings: options.settings });
  await app.register(internalCachePolicyRoutes, { admin: options.piiAdmin, settings: options.settings });
  await app.register(internalTenantRoutes, { admin: options.tenantAdmin });
  await app.register(internalKeyRoutes, { admin: options.keyAdmin, operatorTenant });
  await app.register(internalWebhookRoutes, { admin: options.webhookAdmin });
  await app.register(internalCatalogRoutes, { catalog: options.catalog, circuits: options.circuits });
  await app.register(internalQueueRoutes, { queues: options.queues, lastBeat: options.lastWorkerBeat, board: options.queueBoard });
}
