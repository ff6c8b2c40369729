import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { EmbeddingsBodySchema } from '../../wire/openai-embeddings.ts';
import { embeddingsOperation } from '../../operations/embeddings/operation.ts';
import { handleRequest, type CompletionServices } from '../../admission/handle-request.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

/** POST /v1/embeddings: the schema at the door, then the admission chain (src/admission/handle-request.ts). */
export async function embeddingsRoutes(app: FastifyInstance, options: { services: CompletionServices; bodyLimit: number }): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/v1/embeddings',
    { schema: { body: EmbeddingsBodySchema }, config: { operation: 'embeddings.create', bodyTextToProvider: true }, bodyLimit: options.bodyLimit },
    (request, reply) => handleRequest(options.services, embeddingsOperation, request, request.body, reply),
  );
  rejectOtherMethods(app, '/v1/embeddings', ['POST']);
}
