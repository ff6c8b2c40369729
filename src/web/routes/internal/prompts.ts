import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import { PromptNameSchema } from '../../../operations/chat/request-schema.ts';
import { UnknownPromptError } from '../../../errors/gateway-error.ts';
import { MAX_STORED_INTEGER } from '../../../infra/store/limits.ts';
import type { PromptSummary } from '../../../infra/store/repository.ts';
import {
  activatePromptVersion,
  createPromptVersion,
  promptVersionJson,
  PromptVersionInputSchema,
  type PromptAdminDeps,
} from '../../../domain/prompts/prompt-admin.ts';
import { actorOf } from './actor.ts';

const NameParams = Type.Object({ name: PromptNameSchema });

/** GET /internal/v1/prompts's answer: the tenant's prompts by name. */
export const PromptListSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({
      object: Type.Literal('prompt'),
      name: Type.String(),
      active_version: Type.Integer({ minimum: 1 }),
      latest_version: Type.Integer({ minimum: 1 }),
      updated_at: Type.String({ format: 'date-time', description: 'When its newest version was created.' }),
    }),
  ),
});

function promptListJson(prompts: PromptSummary[]): Static<typeof PromptListSchema> {
  return {
    object: 'list',
    data: prompts.map((prompt) => ({
      object: 'prompt',
      name: prompt.name,
      active_version: prompt.activeVersion,
      latest_version: prompt.latestVersion,
      updated_at: prompt.updatedAt.toISOString(),
    })),
  };
}

/**
 * Prompts of the caller's tenant: list them and their versions (whoever reads prompts: a version is
 * no more secret than the active one GET /v1/prompts/{name} shows), create a version and activate
 * any version (its admins).
 */
export async function internalPromptRoutes(app: FastifyInstance, options: { admin: PromptAdminDeps }): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.get('/prompts', { config: { permission: 'prompts.read' } }, async (request) =>
    promptListJson(await options.admin.repository.prompts.list(request.principal.tenantId)),
  );
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
  typed.get('/prompts/:name/versions', { schema: { params: NameParams }, config: { permission: 'prompts.read' } }, async (request) => {
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
