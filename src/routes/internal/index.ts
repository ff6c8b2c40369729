import type { FastifyInstance } from 'fastify';
import type { AuditRepository } from '../../store/repository.ts';
import type { PromptAdminDeps } from '../../prompts/prompt-admin.ts';
import { internalPromptRoutes } from './prompts.ts';
import { internalAuditRoutes } from './audit.ts';
import { internalBudgetRoutes } from './budgets.ts';
import type { BudgetAdminDeps } from '../../budget/budget-admin.ts';

/**
 * The internal surface under /internal/v1 (not part of the public contract). Routes act on
 * the caller's own tenant, except /tenants/{tenant}/…, which only the operator tenant's
 * admins may call; the role matrix (src/auth/roles.ts) decides.
 */
export async function internalRoutes(app: FastifyInstance, options: { promptAdmin: PromptAdminDeps; budgetAdmin: BudgetAdminDeps; audit: AuditRepository }): Promise<void> {
  await app.register(internalPromptRoutes, { admin: options.promptAdmin });
  await app.register(internalAuditRoutes, { audit: options.audit });
  await app.register(internalBudgetRoutes, { admin: options.budgetAdmin });
}
