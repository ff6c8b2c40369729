import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { authorize, type Operation, type Principal } from '../auth/roles.ts';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation a route performs; routes without one are public (health checks). */
    operation?: Operation;
  }
  interface FastifyRequest {
    /** The authenticated caller; set on every route that declares an operation. */
    principal: Principal;
  }
}

/**
 * Authenticates every request to a route that declares an operation, before its body is
 * parsed, and applies the role matrix: the one place where access is decided.
 */
export const authPlugin = fp(
  async (app: FastifyInstance, options: { authenticator: ApiKeyAuthenticator }) => {
    app.decorateRequest('principal', null as unknown as Principal);
    app.addHook('onRequest', async (request) => {
      const operation = request.routeOptions.config.operation;
      if (!operation) return;
      const principal = await options.authenticator.authenticate(request.headers.authorization);
      authorize(principal, operation);
      request.principal = principal;
    });
  },
  { name: 'auth' },
);
