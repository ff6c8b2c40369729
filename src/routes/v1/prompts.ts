import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { PromptNameSchema } from '../../operations/chat/request-schema.ts';
import { UnknownPromptError } from '../../errors/gateway-error.ts';
import type { PromptCache } from '../../prompts/prompt-cache.ts';
import { promptVersionJson } from '../../prompts/prompt-admin.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

/** GET /v1/prompts/{name}: the active version of the caller's tenant's prompt, with its variables. */
export async function promptRoutes(app: FastifyInstance, options: { prompts: PromptCache }): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/v1/prompts/:name',
    { schema: { params: Type.Object({ name: PromptNameSchema }) }, config: { operation: 'prompts.read' } },
    async (request) => {
      const active = await options.prompts.getActive(request.principal.tenantId, request.params.name);
      if (!active) throw new UnknownPromptError(request.params.name);
      return promptVersionJson(active);
    },
  );
  rejectOtherMethods(app, '/v1/prompts/:name', ['GET']);
}
