import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ResponseSchema, ResponseStreamEventSchema, ResponsesRequestSchema } from '../../../wire/openai-responses.ts';
import { ErrorEnvelopeSchema } from '../../../errors/to-envelope.ts';
import { ADMITTED, AUTHENTICATED, STREAMING_ADMISSION_HEADERS, errors, jsonOrEvents, type RouteDocs } from '../../openapi/route-doc.ts';
import { responsesOperation } from '../../../operations/responses/operation.ts';
import { chatToolsOf } from '../../../operations/responses/tools.ts';
import { handleRequest, type CompletionServices } from '../../admission/handle-request.ts';
import { ResourceNotFoundError } from '../../../errors/gateway-error.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

/** A failure after the stream began: numbered like the events before it, with the spec's envelope under `error`. */
const StreamErrorEventSchema = Type.Object({
  type: Type.Literal('error'),
  code: Type.String(),
  message: Type.String(),
  param: Type.Union([Type.String(), Type.Null()]),
  sequence_number: Type.Integer({ minimum: 0 }),
  error: ErrorEnvelopeSchema.properties.error,
});

/** Names the hosted tools the gateway left out of the request (`web_search, mcp`), which no provider runs. */
const DROPPED_TOOLS_HEADER = 'x-gateway-dropped-tools';

/** Reading or deleting a stored response: the gateway stores none. */
function storedResponseDoc(operationId: string, summary: string) {
  return {
    operationId,
    summary,
    description: 'Always 404: the gateway stores no responses (each is answered with `store: false`).',
    tags: ['Responses'],
    credentials: 'bearer' as const,
    responses: errors('openai', [...AUTHENTICATED, 404], { 404: 'The gateway stores no responses (`not_found`).' }),
  };
}

/** The OpenAPI document's word on the routes. */
export const responsesDocs: RouteDocs = {
  'POST /v1/responses': {
    operationId: 'createResponse',
    summary: 'Create a response (OpenAI Responses API, stateless)',
    description: 'OpenAI\'s Responses API without stored state: send the whole conversation in `input`.',
    tags: ['Responses'],
    credentials: 'bearer',
    headers: Type.Object(STREAMING_ADMISSION_HEADERS),
    responses: {
      200: {
        ...jsonOrEvents('The response; with `stream: true`, OpenAI\'s named events.', ResponseSchema, {
          description: '`event: <type>` and `data: <event>` pairs, each numbered by `sequence_number`, from response.created to response.completed (or response.incomplete). A failure after the first event is the `error` event.',
          data: Type.Union([ResponseStreamEventSchema, StreamErrorEventSchema]),
        }),
        headers: { 'X-Gateway-Dropped-Tools': Type.String({ description: 'The hosted tool types left out of the request, which no provider behind the gateway runs (`web_search, file_search`); absent when none were.' }) },
      },
      ...errors('openai', ADMITTED, { 404: 'The model alias is unknown (`model_not_found`).' }),
    },
  },
  'GET /v1/responses/:id': storedResponseDoc('getResponse', 'Retrieve a stored response'),
  'DELETE /v1/responses/:id': storedResponseDoc('deleteResponse', 'Delete a stored response'),
};

/**
 * POST /v1/responses through the admission chain. Its tools are translated first, so that the
 * hosted tools left out are named in a header before any answer (a stream sends the headers set
 * here with its first event), and a request that cannot do without them is refused without it. The
 * gateway stores no responses, so reading or deleting one is a 404 that says so rather than a bare
 * unknown route.
 */
export async function responsesRoutes(app: FastifyInstance, options: { services: CompletionServices; bodyLimit: number }): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/v1/responses',
    { schema: { body: ResponsesRequestSchema }, config: { operation: 'responses.create', bodyTextToProvider: true }, bodyLimit: options.bodyLimit },
    async (request, reply) => {
      const { dropped } = chatToolsOf(request.body);
      if (dropped.length > 0) reply.header(DROPPED_TOOLS_HEADER, dropped.join(', '));
      return handleRequest(options.services, responsesOperation, request, request.body, reply);
    },
  );
  const stored = async (request: FastifyRequest<{ Params: { id: string } }>) => {
    throw new ResourceNotFoundError(`The response '${request.params.id}'`, 'this gateway stores no responses (each is answered with store: false)');
  };
  app.get('/v1/responses/:id', { config: { operation: 'responses.create' } }, stored);
  app.delete('/v1/responses/:id', { config: { operation: 'responses.create' } }, stored);
  rejectOtherMethods(app, '/v1/responses', ['POST']);
}
