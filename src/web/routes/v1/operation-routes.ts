/**
 * The routes of one operation (src/operations/): its own through the admission chain
 * (src/web/admission/handle-request.ts), the schema at the door first, and its side routes, which
 * the web tier answers itself. Every one of them takes the operation's permission and dialect.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Operation } from '../../../operations/operation.ts';
import type { Permission } from '../../auth/permissions.ts';
import { handleRequest, type RequestPorts } from '../../admission/handle-request.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';
import { anthropicDoor } from './anthropic-door.ts';

/** The route config every route of the operation shares; a route with a body adds bodyTextToProvider. */
function configOf(operation: Operation) {
  return {
    // The auth plugin's table is built from the same list as the routes, which may hold operations
    // beyond the gateway's own (a test's): the name is one of its permissions.
    permission: operation.permission.name as Permission,
    errorDialect: operation.dialect,
    acceptsXApiKey: operation.dialect === 'anthropic',
    traced: true,
  };
}

/** Registers `operation`'s routes, and 405 answers for the methods its endpoints do not serve. */
export async function operationRoutes(app: FastifyInstance, options: { operation: Operation; ports: RequestPorts; bodyLimit: number }): Promise<void> {
  const { operation, ports, bodyLimit } = options;
  const config = configOf(operation);
  if (operation.dialect === 'anthropic') anthropicDoor(app);
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  routes.route({
    method: operation.method,
    url: operation.path,
    schema: { body: operation.body },
    config: { ...config, bodyTextToProvider: true },
    bodyLimit,
    handler: async (request, reply) => {
      const headers = operation.web.replyHeaders?.(request.body);
      if (headers) reply.headers(headers);
      return handleRequest(ports, operation, request, request.body, reply);
    },
  });
  const sideRoutes = operation.sideRoutes ?? [];
  for (const side of sideRoutes) {
    const reads = side.body === undefined ? { config } : { schema: { body: side.body }, config: { ...config, bodyTextToProvider: true }, bodyLimit };
    routes.route({
      method: side.method,
      url: side.path,
      ...reads,
      handler: async (request) => side.answer({ body: request.body, params: request.params as Record<string, string> }, { catalog: ports.plan.catalog }),
    });
  }
  rejectOtherMethods(app, operation.path, [operation.method]);
  // A side route taking a POST is an endpoint like the operation's own; a resource's GET and DELETE
  // (a stored response) leave the other methods to the 404 of an unknown route.
  for (const side of sideRoutes) if (side.method === 'POST') rejectOtherMethods(app, side.path, ['POST']);
}
