import type { FastifyInstance } from 'fastify';
import type { CatalogFile } from '../../catalog/schema.ts';
import { listModels } from '../../catalog/model-list.ts';
import { ModelNotFoundError } from '../../errors/gateway-error.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

/**
 * GET /v1/models and GET /v1/models/{id}: the catalog in OpenAI's shape. An alias may hold `/`
 * (`meta-llama/Llama-3.3-70B`), so the id is the rest of the path, sent as is or percent-encoded.
 */
export async function modelRoutes(app: FastifyInstance, options: { catalog: CatalogFile; created: number }): Promise<void> {
  const models = listModels(options.catalog, options.created);
  const byId = new Map(models.map((model) => [model.id, model]));
  const list = { object: 'list', data: models };
  app.get('/v1/models', { config: { operation: 'models.read' } }, async () => list);
  app.get<{ Params: { '*': string } }>('/v1/models/*', { config: { operation: 'models.read' } }, async (request) => {
    const id = request.params['*'];
    const model = byId.get(id);
    if (!model) throw new ModelNotFoundError(id);
    return model;
  });
  rejectOtherMethods(app, '/v1/models', ['GET']);
  rejectOtherMethods(app, '/v1/models/*', ['GET']);
}
