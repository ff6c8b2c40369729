import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ResponsesRequestSchema } from '../../wire/openai-responses.ts';
import { responsesOperation } from '../../operations/responses/operation.ts';
import { handleRequest, type CompletionServices } from '../../admission/handle-request.ts';
import { ResourceNotFoundError } from '../../errors/gateway-error.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

/**
 * POST /v1/responses through the admission chain. The gateway stores no responses, so reading or
 * deleting one is a 404 that says so rather than a bare unknown route.
 */
export async function responsesRoutes(app: FastifyInstance, options: { services: CompletionServices; bodyLimit: number }): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/v1/responses',
    { schema: { body: ResponsesRequestSchema }, config: { operation: 'responses.create', bodyTextToProvider: true }, bodyLimit: options.bodyLimit },
    (request, reply) => handleRequest(options.services, responsesOperation, request, request.body, reply),
  );
  const stored = async (request: FastifyRequest<{ Params: { id: string } }>) => {
    throw new ResourceNotFoundError(`The response '${request.params.id}'`, 'this gateway stores no responses (each is answered with store: false)');
  };
  app.get('/v1/responses/:id', { config: { operation: 'responses.create' } }, stored);
  app.delete('/v1/responses/:id', { config: { operation: 'responses.create' } }, stored);
  rejectOtherMethods(app, '/v1/responses', ['POST']);
}
