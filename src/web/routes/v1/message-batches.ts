/**
 * Anthropic's Message Batches API, in its shapes, for its SDK: create a batch of Messages
 * requests, retrieve, list, cancel, delete, and read its results (JSONL) once it ended. The
 * requests are checked here, as Anthropic checks them, then kept as the batch's input file; the
 * workers' batch lane runs them as OpenAI batches run. Another tenant's batch, and an OpenAI
 * batch, are unknown here, exactly as one that never existed.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ulid } from 'ulid';
import type { FileRepository, StoredBatch } from '../../../infra/store/repository.ts';
import { GatewayError, InvalidValueError, MissingRequiredFieldError, ResourceNotFoundError } from '../../../errors/gateway-error.ts';
import type { BatchService, BatchView } from '../../../domain/batches/batch-service.ts';
import { isObject, type BodyCheck } from '../../../domain/batches/batch-line.ts';
import { MESSAGE_BATCH_ENDPOINT } from '../../../domain/batches/batch-endpoints.ts';
import { isEnded } from '../../../domain/batches/batch-object.ts';
import { deletedMessageBatchObject, messageBatchObject } from '../../../domain/batches/message-batch-object.ts';
import { fileExpiry } from '../../../domain/files/upload-fields.ts';
import { readFeature } from '../../admission/feature.ts';
import { parseLimit } from '../query-params.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';
import { anthropicDoor } from './anthropic-door.ts';
import { ANTHROPIC_VERSION } from '../../../wire/anthropic-messages.ts';
import { AUTHENTICATED, errors, json, type RouteDocs } from '../../../wire/route-doc.ts';

/** What the routes need, built by the composition root. */
export interface MessageBatchRouteDeps {
  batches: BatchService;
  files: FileRepository;
  /** The check of a request's params by endpoint: the operation's schema, a model the catalog serves. */
  check(endpoint: string): BodyCheck;
  /** The most requests of one batch (BATCH_MAX_LINES). */
  maxLines: number;
  /** The largest create body (FILE_MAX_BYTES): its requests become the batch's input file. */
  bodyLimitBytes: number;
  /** How long the input file lives (FILE_TTL_S), as an uploaded batch input does. */
  fileTtlMs: number;
}

const IdParams = Type.Object({ id: Type.String({ minLength: 1 }) });

// Every field is read by readRequests, so that each refusal names its param in Anthropic's words.
const CreateBody = Type.Object({}, { additionalProperties: true });

const ListQuery = Type.Object({
  before_id: Type.Optional(Type.String({ minLength: 1 })),
  after_id: Type.Optional(Type.String({ minLength: 1 })),
  limit: Type.Optional(Type.String()),
});

const LIST_MAX = 1_000;

// Anthropic's rule for a request's custom_id.
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/** One request of a batch, checked. */
interface MessageBatchRequest {
  custom_id: string;
  params: Record<string, unknown>;
}

/** The first unknown key of `value`, named as its param; null when it has only `known` ones. */
function unknownKey(value: Record<string, unknown>, known: readonly string[], at: string): GatewayError | null {
  const key = Object.keys(value).find((name) => !known.includes(name));
  if (key === undefined) return null;
  const param = at === '' ? key : `${at}.${key}`;
  return new InvalidValueError(param, `${param}: Extra inputs are not permitted.`);
}

/** A request's params as the Messages endpoint takes them, its problems named under `requests.<i>.params`. */
function checkParams(params: unknown, at: string, check: BodyCheck): GatewayError | null {
  if (params === undefined) return new MissingRequiredFieldError(at, `${at}: Field required.`);
  if (!isObject(params)) return new InvalidValueError(at, `${at}: Input should be an object (the Messages API's request).`);
  if (params.stream === true) return new InvalidValueError(`${at}.stream`, `${at}.stream: A batch's requests cannot stream.`);
  const problem = check(params);
  if (!problem) return null;
  // The check names the body of a batch's line (`body.model`): here it is the request's params.
  const param = problem.param === null ? at : problem.param.replace(/^body/, at);
  const message = problem.message.replaceAll(`'${problem.param}'`, `'${param}'`);
  return new GatewayError(400, 'invalid_request_error', problem.code, message.includes(param) ? message : `${param}: ${message}`, { param });
}

/** The problem of the request at `index`; `seen`: the custom_ids before it. */
function checkRequest(value: unknown, index: number, seen: Set<string>, check: BodyCheck): GatewayError | null {
  const at = `requests.${index}`;
  if (!isObject(value)) return new InvalidValueError(at, `${at}: Input should be an object with 'custom_id' and 'params'.`);
  const customId = value.custom_id;
  if (customId === undefined) return new MissingRequiredFieldError(`${at}.custom_id`, `${at}.custom_id: Field required.`);
  if (typeof customId !== 'string' || !CUSTOM_ID.test(customId))
    return new InvalidValueError(`${at}.custom_id`, `${at}.custom_id: must be 1 to 64 letters, digits, hyphens or underscores.`);
  if (seen.has(customId))
    return new InvalidValueError(
      `${at}.custom_id`,
      `${at}.custom_id: '${customId}' is used by an earlier request; each custom_id must be unique within the batch.`,
    );
  seen.add(customId);
  return unknownKey(value, ['custom_id', 'params'], at) ?? checkParams(value.params, `${at}.params`, check);
}

/**
 * The body's requests, checked before anything is stored, as Anthropic checks them: at least one,
 * at most `maxLines`, each with a unique custom_id and params the Messages endpoint takes. The
 * first problem is the answer (400, naming its param).
 */
function readRequests(body: unknown, check: BodyCheck, maxLines: number): MessageBatchRequest[] {
  const fields = body as Record<string, unknown>;
  const extra = unknownKey(fields, ['requests'], '');
  if (extra) throw extra;
  const { requests } = fields;
  if (requests === undefined) throw new MissingRequiredFieldError('requests', 'requests: Field required.');
  if (!Array.isArray(requests)) throw new InvalidValueError('requests', 'requests: Input should be a list of requests.');
  if (requests.length === 0) throw new InvalidValueError('requests', 'requests: A message batch must have at least one request.');
  if (requests.length > maxLines)
    throw new InvalidValueError('requests', `requests: A message batch may have at most ${maxLines} requests; this one has ${requests.length}.`);
  const seen = new Set<string>();
  for (const [index, request] of requests.entries()) {
    const problem = checkRequest(request, index, seen, check);
    if (problem) throw problem;
  }
  return requests as MessageBatchRequest[];
}

/** The input file's lines: one request each, as OpenAI's batch input has them. */
async function* inputLines(requests: readonly MessageBatchRequest[]): AsyncGenerator<Uint8Array> {
  for (const { custom_id, params } of requests) {
    yield Buffer.from(`${JSON.stringify({ custom_id, method: 'POST', url: MESSAGE_BATCH_ENDPOINT, body: params })}\n`);
  }
}

/**
 * Where the results are read: a path, which Anthropic's SDKs join to their base URL (a gateway
 * behind a proxy, or under a path prefix, knows no origin of its own to give).
 */
function resultsPath(batchId: string): string {
  return `/v1/messages/batches/${batchId}/results`;
}

/** The batch's requests: counted by its validation; before (or without: failed, or cancelled first), its input file's lines. */
async function requestsOf(files: FileRepository, batch: StoredBatch): Promise<number> {
  if (batch.inProgressAt !== null) return batch.total;
  return (await files.get(batch.tenantId, batch.inputFileId))?.lines ?? 0;
}

/** POST, GET /v1/messages/batches, GET, DELETE /v1/messages/batches/{id}, POST …/{id}/cancel, GET …/{id}/results. */
export async function messageBatchRoutes(app: FastifyInstance, deps: MessageBatchRouteDeps): Promise<void> {
  anthropicDoor(app);
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const door = { errorDialect: 'anthropic' as const, acceptsXApiKey: true };
  const read = { permission: 'batches.read' as const, ...door };
  const write = { permission: 'batches.write' as const, ...door };
  const present = async (view: BatchView, requests?: number) =>
    messageBatchObject(view.batch, view.progress, requests ?? (await requestsOf(deps.files, view.batch)), resultsPath(view.batch.id));

  routes.post(
    '/v1/messages/batches',
    // The params go to the provider, as a Messages request's do: NUL characters pass (bodyTextToProvider).
    { schema: { body: CreateBody }, config: { ...write, bodyTextToProvider: true }, bodyLimit: deps.bodyLimitBytes },
    async (request) => {
      const requests = readRequests(request.body, deps.check(MESSAGE_BATCH_ENDPOINT), deps.maxLines);
      const feature = readFeature(request.headers['x-feature']);
      const { tenantId, keyId } = request.principal;
      const createdAt = new Date();
      const record = {
        id: `file-${ulid()}`,
        tenantId,
        purpose: 'batch' as const,
        filename: 'message_batch_requests.jsonl',
        createdAt,
        expiresAt: fileExpiry('batch', null, createdAt, deps.fileTtlMs),
      };
      const file = await deps.files.create(record, inputLines(requests));
      const view = await deps.batches
        .create({ tenantId, keyId, dialect: 'anthropic', endpoint: MESSAGE_BATCH_ENDPOINT, inputFileId: file.id, metadata: null, feature, inputParam: null })
        .catch(async (error: unknown) => {
          // No batch reads the file: it goes now rather than at its expiry.
          await deps.files.delete(tenantId, file.id).catch(() => undefined);
          throw error;
        });
      return present(view, requests.length);
    },
  );
  routes.get('/v1/messages/batches', { schema: { querystring: ListQuery }, config: read }, async (request) => {
    const { before_id: before, after_id: after } = request.query;
    if (before !== undefined && after !== undefined) throw new InvalidValueError('before_id', "Give 'before_id' or 'after_id', not both.");
    const { views, hasMore } = await deps.batches.list(request.principal.tenantId, 'anthropic', {
      after: after ?? null,
      before: before ?? null,
      limit: parseLimit(request.query.limit, 20, LIST_MAX),
    });
    const data = await Promise.all(views.map((view) => present(view)));
    return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
  });
  routes.get('/v1/messages/batches/:id', { schema: { params: IdParams }, config: read }, async (request) =>
    present(await deps.batches.get(request.principal.tenantId, 'anthropic', request.params.id)),
  );
  routes.post('/v1/messages/batches/:id/cancel', { schema: { params: IdParams }, config: write }, async (request) =>
    present(await deps.batches.cancel(request.principal.tenantId, 'anthropic', request.params.id)),
  );
  routes.delete('/v1/messages/batches/:id', { schema: { params: IdParams }, config: write }, async (request) => {
    const { tenantId } = request.principal;
    const batch = await deps.batches.delete(tenantId, 'anthropic', request.params.id);
    // The input file is the batch's own (made from its requests), unlike an OpenAI batch's upload.
    await deps.files.delete(tenantId, batch.inputFileId);
    return deletedMessageBatchObject(batch.id);
  });
  routes.get('/v1/messages/batches/:id/results', { schema: { params: IdParams }, config: read }, async (request, reply) => {
    const { tenantId } = request.principal;
    const { id } = request.params;
    const { batch } = await deps.batches.get(tenantId, 'anthropic', id);
    if (!isEnded(batch)) throw new InvalidValueError(null, `The message batch '${id}' is still processing; its results can be read once it has ended.`);
    const file = batch.outputFileId === null ? null : await deps.files.get(tenantId, batch.outputFileId);
    if (!file)
      throw new ResourceNotFoundError(`The results file of the message batch '${id}'`, batch.status === 'failed' ? 'none of its requests ran' : 'it expired');
    // Its length is known: a read cut short (the batch deleted meanwhile) is a broken answer, not a short file.
    return reply
      .type('application/x-jsonl')
      .header('content-length', String(file.bytes))
      .send(Readable.from(deps.files.read(tenantId, file.id), { objectMode: false }));
  });
  rejectOtherMethods(app, '/v1/messages/batches', ['GET', 'POST']);
  rejectOtherMethods(app, '/v1/messages/batches/:id', ['GET', 'DELETE']);
  rejectOtherMethods(app, '/v1/messages/batches/:id/cancel', ['POST']);
  rejectOtherMethods(app, '/v1/messages/batches/:id/results', ['GET']);
}

const RFC3339 = Type.String({ format: 'date-time' });
const NullableTime = Type.Union([RFC3339, Type.Null()]);
const Count = Type.Integer({ minimum: 0 });
const MessageBatchSchema = Type.Object({
  id: Type.String({ description: '`msgbatch_…`.' }),
  type: Type.Literal('message_batch'),
  processing_status: Type.Union([Type.Literal('in_progress'), Type.Literal('canceling'), Type.Literal('ended')]),
  request_counts: Type.Object(
    { processing: Count, succeeded: Count, errored: Count, canceled: Count, expired: Count },
    { description: 'Every request counted once; those with a result move out of `processing` as they end.' },
  ),
  ended_at: NullableTime,
  created_at: RFC3339,
  expires_at: RFC3339,
  archived_at: Type.Null(),
  cancel_initiated_at: NullableTime,
  results_url: Type.Union([Type.String(), Type.Null()], { description: 'Once ended: the results’ path, which the SDKs join to their base URL.' }),
});
const VERSION_HEADER = Type.Object({
  'anthropic-version': Type.Optional(Type.String({ pattern: ANTHROPIC_VERSION.source, description: 'Any date is taken.' })),
});
const NOT_FOUND = { 404: 'No message batch of this id (`not_found`): it never existed, is another tenant’s, or is an OpenAI batch.' };
const TAGS = ['Anthropic Message Batches'];

/** The OpenAPI document's word on the routes. */
export const messageBatchDocs: RouteDocs = {
  'POST /v1/messages/batches': {
    operationId: 'createMessageBatch',
    summary: 'Create a message batch',
    description:
      "Anthropic's Message Batches API: `requests`, each a `custom_id` (1–64 of `[a-zA-Z0-9_-]`, unique) and the `params` of a Messages request, checked before anything is kept " +
      '(the first problem answered 400, naming `requests.<i>…`). At most BATCH_MAX_LINES requests, in a body of at most FILE_MAX_BYTES. They run in the capacity live traffic leaves, ' +
      "each admitted as a live request and charged at the catalog's batch price.",
    tags: TAGS,
    credentials: 'bearer-or-x-api-key',
    headers: Type.Object({
      ...VERSION_HEADER.properties,
      'X-Feature': Type.Optional(
        Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$', description: "The feature the batch's requests are counted and budgeted under." }),
      ),
    }),
    responses: { 200: json('The MessageBatch (`in_progress`).', MessageBatchSchema), ...errors('anthropic', [...AUTHENTICATED, 413, 415]) },
  },
  'GET /v1/messages/batches': {
    operationId: 'listMessageBatches',
    summary: 'List message batches',
    description: `The tenant's message batches, newest first, paged with \`after_id\` (older) or \`before_id\` (newer) and \`limit\` (1–${LIST_MAX}, default 20).`,
    tags: TAGS,
    credentials: 'bearer-or-x-api-key',
    headers: VERSION_HEADER,
    responses: {
      200: json(
        'A page of message batches.',
        Type.Object({
          data: Type.Array(MessageBatchSchema),
          has_more: Type.Boolean(),
          first_id: Type.Union([Type.String(), Type.Null()]),
          last_id: Type.Union([Type.String(), Type.Null()]),
        }),
      ),
      ...errors('anthropic', AUTHENTICATED),
    },
  },
  'GET /v1/messages/batches/:id': {
    operationId: 'retrieveMessageBatch',
    summary: 'Retrieve a message batch',
    description: 'The batch as it stands: `request_counts` move while it runs.',
    tags: TAGS,
    credentials: 'bearer-or-x-api-key',
    headers: VERSION_HEADER,
    responses: { 200: json('The MessageBatch.', MessageBatchSchema), ...errors('anthropic', [...AUTHENTICATED, 404], NOT_FOUND) },
  },
  'POST /v1/messages/batches/:id/cancel': {
    operationId: 'cancelMessageBatch',
    summary: 'Cancel a message batch',
    description: '`canceling` until its running requests end, then `ended`; requests that never ran are `canceled`. An ended batch is answered as it is.',
    tags: TAGS,
    credentials: 'bearer-or-x-api-key',
    headers: VERSION_HEADER,
    responses: { 200: json('The MessageBatch.', MessageBatchSchema), ...errors('anthropic', [...AUTHENTICATED, 404], NOT_FOUND) },
  },
  'DELETE /v1/messages/batches/:id': {
    operationId: 'deleteMessageBatch',
    summary: 'Delete a message batch',
    description: 'Removes an ended batch with its requests and results; one still processing is refused (400): cancel it first.',
    tags: TAGS,
    credentials: 'bearer-or-x-api-key',
    headers: VERSION_HEADER,
    responses: {
      200: json('The batch deleted.', Type.Object({ id: Type.String(), type: Type.Literal('message_batch_deleted') })),
      ...errors('anthropic', [...AUTHENTICATED, 404], NOT_FOUND),
    },
  },
  'GET /v1/messages/batches/:id/results': {
    operationId: 'messageBatchResults',
    summary: 'Read a message batch’s results',
    description: 'Once the batch ended (400 before): one JSON line per request, in the order of the requests, streamed.',
    tags: TAGS,
    credentials: 'bearer-or-x-api-key',
    headers: VERSION_HEADER,
    responses: {
      200: {
        description: 'JSON Lines, one result per request.',
        content: {
          'application/x-jsonl': {
            schema: Type.String({
              description:
                "Each line `{custom_id, result}`; `result.type`: `succeeded` (with its `message`), `errored` (with its `error`, Anthropic's error body), `canceled` or `expired` (never ran).",
            }),
          },
        },
      },
      ...errors('anthropic', [...AUTHENTICATED, 404], {
        404: 'No message batch of this id (`not_found`), or its results are gone: it failed before any request ran, or its results file expired.',
      }),
    },
  },
};
