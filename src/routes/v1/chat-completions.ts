import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ChatCompletionBodySchema } from '../../chat/request-schema.ts';
import { handleCompletion, type CompletionServices } from '../../chat/pipeline.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

/** POST /v1/chat/completions: the schema at the door, then the completion pipeline (src/chat/pipeline.ts). */
export async function chatCompletionsRoutes(app: FastifyInstance, options: { services: CompletionServices; bodyLimit: number }): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/v1/chat/completions',
    { schema: { body: ChatCompletionBodySchema }, config: { operation: 'chat.create', bodyTextToProvider: true }, bodyLimit: options.bodyLimit },
    (request, reply) => handleCompletion(options.services, request, request.body, reply),
  );
  rejectOtherMethods(app, '/v1/chat/completions', ['POST']);
}
