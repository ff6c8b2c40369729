import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ChatCompletionBodySchema } from '../../operations/chat/request-schema.ts';
import { chatOperation } from '../../operations/chat/operation.ts';
import { handleRequest, type CompletionServices } from '../../admission/handle-request.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

/** POST /v1/chat/completions: the schema at the door, then the admission chain (src/admission/handle-request.ts). */
export async function chatCompletionsRoutes(app: FastifyInstance, options: { services: CompletionServices; bodyLimit: number }): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/v1/chat/completions',
    { schema: { body: ChatCompletionBodySchema }, config: { operation: 'chat.create', bodyTextToProvider: true }, bodyLimit: options.bodyLimit },
    (request, reply) => handleRequest(options.services, chatOperation, request, request.body, reply),
  );
  rejectOtherMethods(app, '/v1/chat/completions', ['POST']);
}
