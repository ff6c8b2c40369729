import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { PromptNameSchema } from '../../../operations/chat/request-schema.ts';
import { UnknownPromptError } from '../../../errors/gateway-error.ts';
import { MAX_STORED_INTEGER } from '../../../infra/store/limits.ts';
import {
  activatePromptVersion,
  createPromptVersion,
  promptVersionJson,
  PromptVersionInputSchema,
  type PromptAdminDeps,
} from '../../../domain/prompts/prompt-admin.ts';
import { actorOf } from './actor.ts';

const NameParams = Type.Object({ name: PromptNameSchema });

/** Prompt administration of the caller's tenant: create a version, activate any version, list versions. */
export async function internalPromptRoutes(app: FastifyInstance, options: { admin: PromptAdminDeps }): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.post(
    '/prompts/:name/versions',
    { schema: { params: NameParams, body: PromptVersionInputSchema }, config: { permission: 'prompts.write' } },
    async (request, reply) => {
      const version = await createPromptVersion(options.admin, request.principal.tenantId, request.params.name, request.body, actorOf(request));
      const history = await options.admin.repository.prompts.history(request.principal.tenantId, request.params.name);
      return reply.code(201).send(promptVersionJson(version, history?.activeVersion));
    },
  );
  typed.post(
    '/prompts/:name/activate',
    {
      schema: {
        params: NameParams,
        body: Type.Object({ version: Type.Integer({ minimum: 1, maximum: MAX_STORED_INTEGER }) }, { additionalProperties: false }),
      },
      config: { permission: 'prompts.write' },
    },
    async (request) => {
      const version = await activatePromptVersion(options.admin, request.principal.tenantId, request.params.name, request.body.version, actorOf(request));
      return promptVersionJson(version, version.version);
    },
  );
  typed.get('/prompts/:name/versions', { schema: { params: NameParams }, config: { permission: 'prompts.write' } }, async (request) => {
    const history = await options.admin.repository.prompts.history(request.principal.tenantId, request.params.name);
    if (!history) throw new UnknownPromptError(request.params.name);
    return {
      object: 'list',
      name: history.name,
      active_version: history.activeVersion,
      data: history.versions.map((v) => promptVersionJson(v, history.activeVersion)),
    };
  });
}
