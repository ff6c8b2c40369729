import type { FastifyInstance } from 'fastify';
import type { AuditRepository } from '../../store/repository.ts';
import type { PromptAdminDeps } from '../../prompts/prompt-admin.ts';
import { internalPromptRoutes } from './prompts.ts';
import { internalAuditRoutes } from './audit.ts';
import { internalBudgetRoutes } from './budgets.ts';
import type { BudgetAdminDeps } from '../../budget/budget-admin.ts';
import { internalPiiPolicyRoutes } from './pii-policy.ts';
import type { PiiPolicyAdminDeps } from '../../pii/pii-policy-admin.ts';
import type { TenantSettingsCache } from '../../tenants/tenant-settings.ts';

/**
 * The internal surface under /internal/v1 (not part of the public contract). Routes act on
 * the caller's own tenant, except /tenants/{tenant}/…, which only the operator tenant's
 * admins may call; the role matrix (src/auth/roles.ts) decides.
 */
export async function internalRoutes(app: FastifyInstance, options: { promptAdmin: PromptAdminDeps; budgetAdmin: BudgetAdminDeps; piiAdmin: PiiPolicyAdminDeps; settings: TenantSettingsCache; audit: AuditRepository }): Promise<void> {
  await app.register(internalPromptRoutes, { admin: options.promptAdmin });
  await app.register(internalAuditRoutes, { audit: options.audit });
  await app.register(internalBudgetRoutes, { admin: options.budgetAdmin });
  await app.register(internalPiiPolicyRoutes, { admin: options.piiAdmin, settings: options.settings });
}
