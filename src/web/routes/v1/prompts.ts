import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { PromptNameSchema } from '../../../operations/chat/request-schema.ts';
import { UnknownPromptError } from '../../../errors/gateway-error.ts';
import type { PromptCache } from '../../../domain/prompts/prompt-cache.ts';
import { promptVersionJson } from '../../../domain/prompts/prompt-admin.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';
import { AUTHENTICATED, errors, json, type RouteDocs } from '../../../wire/route-doc.ts';

/** A prompt version on the wire (src/domain/prompts/prompt-admin.ts promptVersionJson). */
export const PromptVersionSchema = Type.Object({
  object: Type.Literal('prompt.version'),
  name: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  model: Type.String({ description: 'The catalog alias the prompt runs on.' }),
  parameters: Type.Record(Type.String(), Type.Unknown(), { description: 'Chat parameters applied with it.' }),
  messages: Type.Array(Type.Object({ role: Type.String(), content: Type.String() })),
  variables: Type.Array(Type.String(), { description: 'The `{{name}}` placeholders of the messages.' }),
  created_at: Type.String({ format: 'date-time' }),
  created_by: Type.String(),
});

/** The OpenAPI document's word on the route. */
export const promptDocs: RouteDocs = {
  'GET /v1/prompts/:name': {
    operationId: 'getPrompt',
    summary: 'Resolve the active version of a prompt',
    tags: ['Prompts'],
    credentials: 'bearer',
    responses: {
      200: json('The active version.', PromptVersionSchema),
      ...errors('openai', [...AUTHENTICATED, 404], { 404: 'The tenant has no prompt of that name (`prompt_not_found`).' }),
    },
  },
};

/** GET /v1/prompts/{name}: the active version of the caller's tenant's prompt, with its variables. */
export async function promptRoutes(app: FastifyInstance, options: { prompts: PromptCache }): Promise<void> {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get('/v1/prompts/:name', { schema: { params: Type.Object({ name: PromptNameSchema }) }, config: { permission: 'prompts.read' } }, async (request) => {
      const active = await options.prompts.getActive(request.principal.tenantId, request.params.name);
      if (!active) throw new UnknownPromptError(request.params.name);
      return promptVersionJson(active);
    });
  rejectOtherMethods(app, '/v1/prompts/:name', ['GET']);
}
