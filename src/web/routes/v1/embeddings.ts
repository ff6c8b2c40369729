import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { EmbeddingsBodySchema, EmbeddingsResponseSchema } from '../../../wire/openai-embeddings.ts';
import { ADMISSION_HEADERS, ADMITTED, errors, json, type RouteDocs } from '../../openapi/route-doc.ts';
import { embeddingsOperation } from '../../../operations/embeddings/operation.ts';
import { handleRequest, type CompletionServices } from '../../admission/handle-request.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

/** The OpenAPI document's word on the route. */
export const embeddingsDocs: RouteDocs = {
  'POST /v1/embeddings': {
    operationId: 'createEmbeddings',
    summary: 'Create embeddings',
    description: 'OpenAI\'s embeddings request, for a catalog model of mode `embeddings`.',
    tags: ['Embeddings'],
    credentials: 'bearer',
    headers: Type.Object(ADMISSION_HEADERS),
    responses: {
      200: json('The vectors in input order (`base64`: little-endian float32).', EmbeddingsResponseSchema),
      ...errors('openai', ADMITTED, { 400: 'An invalid body, or a model that is not an embeddings model (`unsupported_model`); `param` names the field.', 404: 'The model alias is unknown (`model_not_found`).' }),
    },
  },
};

/** POST /v1/embeddings: the schema at the door, then the admission chain (src/web/admission/handle-request.ts). */
export async function embeddingsRoutes(app: FastifyInstance, options: { services: CompletionServices; bodyLimit: number }): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/v1/embeddings',
    { schema: { body: EmbeddingsBodySchema }, config: { operation: 'embeddings.create', bodyTextToProvider: true }, bodyLimit: options.bodyLimit },
    (request, reply) => handleRequest(options.services, embeddingsOperation, request, request.body, reply),
  );
  rejectOtherMethods(app, '/v1/embeddings', ['POST']);
}
