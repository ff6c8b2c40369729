/**
 * OpenAI's Batch API: create a batch of an input file's requests, retrieve it as it runs, list,
 * cancel. Its lines run in the workers' batch lane; its output and error files are read through
 * /v1/files. Another tenant's batch is unknown here, exactly as one that never existed.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { InvalidValueError, MissingRequiredFieldError } from '../../../errors/gateway-error.ts';
import type { BatchService, BatchView } from '../../../domain/batches/batch-service.ts';
import { openAiBatchObject } from '../../../domain/batches/batch-object.ts';
import { COMPLETION_WINDOW, OPENAI_BATCH_ENDPOINTS } from '../../../domain/batches/batch-endpoints.ts';
import { readMetadata } from '../../../domain/batches/batch-metadata.ts';
import { readFeature } from '../../admission/feature.ts';
import { parseLimit } from '../query-params.ts';
import { AUTHENTICATED, errors, json, type RouteDocs } from '../../../wire/route-doc.ts';

const IdParams = Type.Object({ id: Type.String({ minLength: 1 }) });

// Every field is read here, not by the schema, so that each refusal names its param in OpenAI's words.
const CreateBody = Type.Object({}, { additionalProperties: true });

const ListQuery = Type.Object({ after: Type.Optional(Type.String({ minLength: 1 })), limit: Type.Optional(Type.String()) });

function objectOf(view: BatchView) {
  return openAiBatchObject(view.batch, view.progress);
}

function readString(body: Record<string, unknown>, param: string): string {
  const value = body[param];
  if (value === undefined || value === null) throw new MissingRequiredFieldError(param);
  if (typeof value !== 'string' || value === '') throw new InvalidValueError(param, `'${param}' must be a non-empty string.`);
  return value;
}

/** POST, GET /v1/batches, GET /v1/batches/{id}, POST /v1/batches/{id}/cancel. */
export async function batchRoutes(app: FastifyInstance, deps: { batches: BatchService }): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const read = { permission: 'batches.read' as const, errorDialect: 'openai' as const };
  const write = { permission: 'batches.write' as const, errorDialect: 'openai' as const };
  routes.post('/v1/batches', { schema: { body: CreateBody }, config: write }, async (request) => {
    const body = request.body as Record<string, unknown>;
    const inputFileId = readString(body, 'input_file_id');
    const endpoint = readString(body, 'endpoint');
    if (!Object.hasOwn(OPENAI_BATCH_ENDPOINTS, endpoint))
      throw new InvalidValueError('endpoint', `'endpoint' must be one of ${Object.keys(OPENAI_BATCH_ENDPOINTS).join(', ')}; got '${endpoint}'.`);
    const window = readString(body, 'completion_window');
    if (window !== COMPLETION_WINDOW) throw new InvalidValueError('completion_window', `'completion_window' must be '${COMPLETION_WINDOW}'; got '${window}'.`);
    const metadata = readMetadata(body.metadata);
    const { tenantId, keyId } = request.principal;
    const view = await deps.batches.create({
      tenantId,
      keyId,
      dialect: 'openai',
      endpoint,
      inputFileId,
      metadata,
      feature: readFeature(request.headers['x-feature']),
      inputParam: 'input_file_id',
    });
    return objectOf(view);
  });
  routes.get('/v1/batches', { schema: { querystring: ListQuery }, config: read }, async (request) => {
    const { views, hasMore } = await deps.batches.list(request.principal.tenantId, 'openai', {
      after: request.query.after ?? null,
      limit: parseLimit(request.query.limit, 20, 100),
    });
    const data = views.map(objectOf);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
  });
  routes.get('/v1/batches/:id', { schema: { params: IdParams }, config: read }, async (request) =>
    objectOf(await deps.batches.get(request.principal.tenantId, 'openai', request.params.id)),
  );
  routes.post('/v1/batches/:id/cancel', { schema: { params: IdParams }, config: write }, async (request) =>
    objectOf(await deps.batches.cancel(request.principal.tenantId, 'openai', request.params.id)),
  );
}

const BatchObject = Type.Object({ id: Type.String(), object: Type.Literal('batch'), status: Type.String() }, { additionalProperties: true });
const NOT_FOUND = { 404: 'No batch of this id (`not_found`): it never existed or is another tenant’s.' };

/** The OpenAPI document's word on the routes. */
export const batchDocs: RouteDocs = {
  'POST /v1/batches': {
    operationId: 'createBatch',
    summary: 'Create a batch',
    description:
      "Runs every line of an uploaded JSONL file (purpose `batch`) against `endpoint`, in the capacity live traffic leaves, within `completion_window` (`24h`). Validated first, as OpenAI validates: one bad line fails the batch before any runs. Each line is admitted as a live request (PII policy, rate limits, budgets) and charged at the catalog's batch price.",
    tags: ['Batches'],
    credentials: 'bearer',
    responses: { 200: json('The Batch object (`validating`).', BatchObject), ...errors('openai', [...AUTHENTICATED, 400, 404]) },
  },
  'GET /v1/batches': {
    operationId: 'listBatches',
    summary: 'List batches',
    description: "The tenant's batches, newest first, paged with `after` and `limit` (1–100, default 20).",
    tags: ['Batches'],
    credentials: 'bearer',
    responses: {
      200: json(
        'A page of batches.',
        Type.Object({
          object: Type.Literal('list'),
          data: Type.Array(BatchObject),
          first_id: Type.Union([Type.String(), Type.Null()]),
          last_id: Type.Union([Type.String(), Type.Null()]),
          has_more: Type.Boolean(),
        }),
      ),
      ...errors('openai', [...AUTHENTICATED, 400]),
    },
  },
  'GET /v1/batches/:id': {
    operationId: 'retrieveBatch',
    summary: 'Retrieve a batch',
    description: 'The batch as it stands: `request_counts` and `usage` move while it runs.',
    tags: ['Batches'],
    credentials: 'bearer',
    responses: { 200: json('The Batch object.', BatchObject), ...errors('openai', [...AUTHENTICATED, 404], NOT_FOUND) },
  },
  'POST /v1/batches/:id/cancel': {
    operationId: 'cancelBatch',
    summary: 'Cancel a batch',
    description:
      '`cancelling` until its running lines end, then `cancelled`; lines that never ran are in its error file (`batch_cancelled`). An ended batch is answered as it is.',
    tags: ['Batches'],
    credentials: 'bearer',
    responses: { 200: json('The Batch object.', BatchObject), ...errors('openai', [...AUTHENTICATED, 404], NOT_FOUND) },
  },
};
