import type { FastifyInstance } from 'fastify';
import type { AuditRepository } from '../../store/repository.ts';
import type { PromptAdminDeps } from '../../prompts/prompt-admin.ts';
import { internalPromptRoutes } from './prompts.ts';
import { internalAuditRoutes } from './audit.ts';

/**
 * The internal surface under /internal/v1 (not part of the public contract). Every route
 * acts on the caller's own tenant; the role matrix (src/auth/roles.ts) admits admins,
 * and auditors for verification.
 */
export async function internalRoutes(app: FastifyInstance, options: { promptAdmin: PromptAdminDeps; audit: AuditRepository }): Promise<void> {
  await app.register(internalPromptRoutes, { admin: options.promptAdmin });
  await app.register(internalAuditRoutes, { audit: options.audit });
}
