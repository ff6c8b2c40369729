import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Principal } from '../../domain/access/roles.ts';
import { authorize, type Permission, type PermissionTable } from '../auth/permissions.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { InvalidApiKeyError, PermissionDeniedError } from '../../errors/gateway-error.ts';
import { auditEvent, type AuditSink } from '../../domain/audit/audit-event.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The permission a route requires; routes without one are public (health checks). */
    permission?: Permission;
    /** The key may come in `x-api-key` too, as Anthropic's clients send it (Authorization wins when both are sent). */
    acceptsXApiKey?: boolean;
    /** The key may come as the password of HTTP Basic credentials, which a browser sends with every request of a page it loads (the queue board). */
    acceptsBasicAuth?: boolean;
  }
  interface FastifyRequest {
    /** The authenticated caller; set on every route that declares a permission. */
    principal: Principal;
  }
}

/** Records a denial for the tenant it concerns; a known tenant is needed, so unknown keys are not audited. */
function auditDenial(audit: AuditSink, request: FastifyRequest, permission: Permission, error: unknown, principal: Principal | null): void {
  const known = error instanceof InvalidApiKeyError ? error.knownKey : error instanceof PermissionDeniedError && principal ? principal : null;
  if (!known) return;
  const reason = 'reason' in known ? known.reason : 'role_not_allowed';
  const event = auditEvent({
    tenantId: known.tenantId,
    actor: known.keyId,
    action: 'auth.denied',
    target: permission,
    outcome: 'denied',
    requestId: request.id,
    details: { reason, method: request.method, path: request.routeOptions.url ?? request.url },
  });
  audit(event).catch((auditError: unknown) => request.log.error({ err: auditError }, 'recording a denial in the audit log failed'));
}

/** The `Authorization` header, or on a route that accepts it the `x-api-key` header or a Basic password as a bearer credential. */
function credentialOf(request: FastifyRequest): string | undefined {
  const { authorization } = request.headers;
  if (request.routeOptions.config.acceptsBasicAuth && authorization?.startsWith('Basic ')) {
    const userAndPassword = Buffer.from(authorization.slice('Basic '.length), 'base64').toString('utf8');
    return `Bearer ${userAndPassword.slice(userAndPassword.indexOf(':') + 1)}`;
  }
  const apiKey = request.headers['x-api-key'];
  if (authorization !== undefined || !request.routeOptions.config.acceptsXApiKey || typeof apiKey !== 'string') return authorization;
  return `Bearer ${apiKey}`;
}

/**
 * Authenticates every request to a route that declares a permission, before its body is
 * parsed, and applies the role matrix (`permissions`): the one place where access is decided.
 * Denials of a known tenant's credentials are audited.
 */
export const authPlugin = fp(
  async (app: FastifyInstance, options: { authenticator: Authenticator; audit: AuditSink; operatorTenant: string; permissions: PermissionTable }) => {
    app.decorateRequest('principal', null as unknown as Principal);
    app.addHook('onRequest', async (request) => {
      const { permission } = request.routeOptions.config;
      if (!permission) return;
      let principal: Principal | null = null;
      try {
        principal = await options.authenticator.authenticate(credentialOf(request));
        authorize(principal, permission, options.operatorTenant, options.permissions);
      } catch (error) {
        auditDenial(options.audit, request, permission, error, principal);
        throw error;
      }
      request.principal = principal;
    });
  },
  { name: 'auth' },
);
