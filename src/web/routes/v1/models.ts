import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { CatalogFile } from '../../../domain/catalog/schema.ts';
import { listModels, ModelObjectSchema } from '../../../domain/catalog/model-list.ts';
import { AUTHENTICATED, errors, json, type RouteDocs } from '../../../wire/route-doc.ts';
import { ModelNotFoundError } from '../../../errors/gateway-error.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

/** GET /v1/models's answer. */
export const ModelListSchema = Type.Object({ object: Type.Literal('list'), data: Type.Array(ModelObjectSchema) });

/** The OpenAPI document's word on the routes. */
export const modelDocs: RouteDocs = {
  'GET /v1/models': {
    operationId: 'listModels',
    summary: 'List models',
    description: "The three tiers first, then every catalog alias, in the catalog's order.",
    tags: ['Models'],
    credentials: 'bearer',
    responses: { 200: json('The catalog.', ModelListSchema), ...errors('openai', AUTHENTICATED) },
  },
  'GET /v1/models/*': {
    operationId: 'retrieveModel',
    summary: 'Retrieve a model',
    tags: ['Models'],
    credentials: 'bearer',
    path: '/v1/models/{id}',
    params: Type.Object({ id: Type.String({ description: 'A catalog alias or tier; one holding `/` may be sent as is or percent-encoded.' }) }),
    responses: { 200: json('The model.', ModelObjectSchema), ...errors('openai', [...AUTHENTICATED, 404], { 404: 'No such alias (`model_not_found`).' }) },
  },
};

/**
 * GET /v1/models and GET /v1/models/{id}: the catalog in OpenAI's shape. An alias may hold `/`
 * (`meta-llama/Llama-3.3-70B`), so the id is the rest of the path, sent as is or percent-encoded.
 */
export async function modelRoutes(app: FastifyInstance, options: { catalog: CatalogFile; created: number }): Promise<void> {
  const models = listModels(options.catalog, options.created);
  const byId = new Map(models.map((model) => [model.id, model]));
  const list: Static<typeof ModelListSchema> = { object: 'list', data: models };
  app.get('/v1/models', { config: { permission: 'models.read' } }, async () => list);
  app.get<{ Params: { '*': string } }>('/v1/models/*', { config: { permission: 'models.read' } }, async (request) => {
    const id = request.params['*'];
    const model = byId.get(id);
    if (!model) throw new ModelNotFoundError(id);
    return model;
  });
  rejectOtherMethods(app, '/v1/models', ['GET']);
  rejectOtherMethods(app, '/v1/models/*', ['GET']);
}
