import type { FastifyInstance } from 'fastify';
import type { AuditRepository } from '../../../infra/store/repository.ts';

/** GET /internal/v1/audit/verify: recomputes the caller's tenant's hash chain and names the first broken link. */
export async function internalAuditRoutes(app: FastifyInstance, options: { audit: AuditRepository }): Promise<void> {
  app.get('/audit/verify', { config: { permission: 'audit.verify' } }, async (request) => {
    const result = await options.audit.verify(request.principal.tenantId);
    return result.ok
      ? { object: 'audit.verification', ok: true, events: result.events }
      : { object: 'audit.verification', ok: false, events: result.events, broken_at: result.brokenAt, reason: result.reason };
  });
}
