import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ChatCompletionBodySchema } from '../../../operations/chat/request-schema.ts';
import { ChatCompletionChunkSchema, ChatCompletionSchema } from '../../../wire/openai-chat.ts';
import { ADMITTED, ErrorEnvelopeRef, STREAMING_ADMISSION_HEADERS, errors, jsonOrEvents, type RouteDocs } from '../../openapi/route-doc.ts';
import { chatOperation } from '../../../operations/chat/operation.ts';
import { handleRequest, type CompletionServices } from '../../admission/handle-request.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

/** A completion as the gateway answers it: OpenAI's, with the spec's `request_id`. */
export const ChatCompletionResponseSchema = Type.Composite([ChatCompletionSchema, Type.Object({ request_id: Type.String({ pattern: '^req_' }) })], { additionalProperties: true });

/** The OpenAPI document's word on the route. */
export const chatCompletionsDocs: RouteDocs = {
  'POST /v1/chat/completions': {
    operationId: 'createChatCompletion',
    summary: 'Create a chat completion',
    description: 'OpenAI\'s chat completions request, or a named prompt (`prompt` and `variables` instead of `model` and `messages`).',
    tags: ['Chat'],
    credentials: 'bearer',
    headers: Type.Object(STREAMING_ADMISSION_HEADERS),
    responses: {
      200: jsonOrEvents('The completion; with `stream: true`, its chunks as server-sent events.', ChatCompletionResponseSchema, {
        description: '`data: <chunk>` lines, each with an `id:` line to resume from, ending with `data: [DONE]`. A failure after the first chunk is one `data:` line with the error envelope, and the end of the stream.',
        data: Type.Union([ChatCompletionChunkSchema, ErrorEnvelopeRef]),
      }),
      ...errors('openai', ADMITTED, { 404: 'The model alias or the prompt name is unknown (`model_not_found`, `prompt_not_found`).' }),
    },
  },
};

/** POST /v1/chat/completions: the schema at the door, then the admission chain (src/web/admission/handle-request.ts). */
export async function chatCompletionsRoutes(app: FastifyInstance, options: { services: CompletionServices; bodyLimit: number }): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/v1/chat/completions',
    { schema: { body: ChatCompletionBodySchema }, config: { operation: 'chat.create', bodyTextToProvider: true }, bodyLimit: options.bodyLimit },
    (request, reply) => handleRequest(options.services, chatOperation, request, request.body, reply),
  );
  rejectOtherMethods(app, '/v1/chat/completions', ['POST']);
}
