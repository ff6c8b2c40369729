import type { FastifyInstance } from 'fastify';
import type { AuditRepository } from '../../../infra/store/repository.ts';
import type { PromptAdminDeps } from '../../../domain/prompts/prompt-admin.ts';
import { internalPromptRoutes } from './prompts.ts';
import { internalAuditRoutes } from './audit.ts';
import { internalBudgetRoutes } from './budgets.ts';
import type { BudgetAdminDeps } from '../../../domain/budget/budget-admin.ts';
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
}

/**
 * The internal surface under /internal/v1 (not part of the public contract). Routes act on
 * the caller's own tenant, except tenants (/tenants, /tenants/{tenant}/…) and keys that name
 * another tenant, which only the operator tenant's admins may reach; the role matrix
 * (src/domain/access/roles.ts) decides.
 */
export async function internalRoutes(app: FastifyInstance, options: InternalRouteDeps): Promise<void> {
  await app.register(internalPromptRoutes, { admin: options.promptAdmin });
  await app.register(internalAuditRoutes, { audit: options.audit });
  await app.register(internalBudgetRoutes, { admin: options.budgetAdmin });
  await app.register(internalPiiPolicyRoutes, { admin: options.piiAdmin, settings: options.settings });
  // The data and cache policies need what the PII policy does: the store, the audit sink and the settings' invalidation.
  await app.register(internalDataPolicyRoutes, { admin: options.piiAdmin, settings: options.settings });
  await app.register(internalCachePolicyRoutes, { admin: options.piiAdmin, settings: options.settings });
  await app.register(internalTenantRoutes, { admin: options.tenantAdmin });
  await app.register(internalKeyRoutes, { admin: options.keyAdmin, operatorTenant: options.tenantAdmin.operatorTenant });
  await app.register(internalWebhookRoutes, { admin: options.webhookAdmin });
}
