/**
 * OpenAI's Files API: upload (a multipart form, streamed into the store as it arrives), list,
 * retrieve, download (streamed from the store a chunk at a time) and delete. Another tenant's
 * file is unknown here, exactly as one that never existed.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import multipart from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import { FILE_PURPOSES, type FilePurpose, type FileRepository, type StoredFile } from '../../../infra/store/repository.ts';
import { InvalidValueError, ResourceNotFoundError, UnsupportedMediaTypeError } from '../../../errors/gateway-error.ts';
import { deletedFileObject, fileObject } from '../../../domain/files/file-object.ts';
import { EXPIRES_AFTER_SECONDS, UPLOAD_PURPOSES } from '../../../domain/files/upload-fields.ts';
import { uploadFile, type UploadRules } from './file-upload.ts';
import { parseLimit } from '../query-params.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';
import { AUTHENTICATED, errors, json, type RouteDocs } from '../../../wire/route-doc.ts';

/** What the routes need, built by the composition root. */
export type FileRouteDeps = UploadRules;

// Any id is looked up: one of no file, however long, is a 404 (the URL's own limit bounds it).
const IdParams = Type.Object({ id: Type.String({ minLength: 1 }) });

const ListQuery = Type.Object({
  purpose: Type.Optional(Type.String()),
  after: Type.Optional(Type.String({ minLength: 1 })),
  limit: Type.Optional(Type.String()),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
});

// The fields around the file are short: these bound what a form may send besides it.
const FORM_LIMITS = { fields: 32, fieldSize: 64 * 1024, parts: 64 };

const LIST_MAX = 10_000;

function notFound(id: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`The file '${id}'`);
}

async function mustFind(files: FileRepository, tenantId: string, id: string): Promise<StoredFile> {
  const file = await files.get(tenantId, id);
  if (!file) throw notFound(id);
  return file;
}

function listPurpose(value: string | undefined): FilePurpose | undefined {
  if (value === undefined || (FILE_PURPOSES as readonly string[]).includes(value)) return value as FilePurpose | undefined;
  throw new InvalidValueError('purpose', `Invalid value for 'purpose': '${value}'; must be one of ${FILE_PURPOSES.join(', ')}.`);
}

/**
 * POST /v1/files in a scope of its own: the form's parser, and no other, so that neither JSON's
 * parser nor BODY_LIMIT_BYTES sees the body; FILE_MAX_BYTES bounds the file as it streams.
 */
async function uploadRoute(app: FastifyInstance, deps: FileRouteDeps): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (request, _payload, done) =>
    done(new UnsupportedMediaTypeError(request.headers['content-type'] ?? 'none', 'multipart/form-data'), undefined),
  );
  // One byte past the limit, so that the stream's own check (a 413, nothing stored) is the one that refuses.
  await app.register(multipart, { limits: { ...FORM_LIMITS, fileSize: deps.maxBytes + 1 } });
  app.post('/v1/files', { config: { permission: 'files.write', errorDialect: 'openai' } }, async (request, reply) => {
    if (!request.isMultipart()) throw new UnsupportedMediaTypeError(request.headers['content-type'] ?? 'none', 'multipart/form-data');
    const file = await uploadFile(request, deps);
    return reply.send(fileObject(file));
  });
}

/** POST, GET /v1/files, GET, DELETE /v1/files/{id}, GET /v1/files/{id}/content. */
export async function fileRoutes(app: FastifyInstance, deps: FileRouteDeps): Promise<void> {
  await app.register(uploadRoute, deps);
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const read = { permission: 'files.read' as const, errorDialect: 'openai' as const };
  const write = { permission: 'files.write' as const, errorDialect: 'openai' as const };
  routes.get('/v1/files', { schema: { querystring: ListQuery }, config: read }, async (request) => {
    const { after, order } = request.query;
    const purpose = listPurpose(request.query.purpose);
    const page = await deps.files.list(request.principal.tenantId, {
      ...(purpose === undefined ? {} : { purpose }),
      after: after ?? null,
      limit: parseLimit(request.query.limit, LIST_MAX, LIST_MAX),
      order: order ?? 'desc',
    });
    const data = page.files.map(fileObject);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore };
  });
  routes.get('/v1/files/:id', { schema: { params: IdParams }, config: read }, async (request) =>
    fileObject(await mustFind(deps.files, request.principal.tenantId, request.params.id)),
  );
  routes.get('/v1/files/:id/content', { schema: { params: IdParams }, config: read }, async (request, reply) => {
    const { tenantId } = request.principal;
    const file = await mustFind(deps.files, tenantId, request.params.id);
    // Its length is known: a read cut short (the file deleted meanwhile) is a broken answer, not a short file.
    // A byte stream holds one chunk ahead of a slow client (an object stream would hold sixteen).
    return reply
      .type('application/octet-stream')
      .header('content-length', String(file.bytes))
      .send(Readable.from(deps.files.read(tenantId, file.id), { objectMode: false }));
  });
  routes.delete('/v1/files/:id', { schema: { params: IdParams }, config: write }, async (request) => {
    const { id } = request.params;
    const { tenantId } = request.principal;
    if (await deps.readByBatch(tenantId, id))
      throw new InvalidValueError(null, `The file '${id}' is the input of a batch that has not ended; cancel the batch, or delete the file once it has ended.`);
    if (!(await deps.files.delete(tenantId, id))) throw notFound(id);
    return deletedFileObject(id);
  });
  rejectOtherMethods(app, '/v1/files', ['GET', 'POST']);
  rejectOtherMethods(app, '/v1/files/:id', ['GET', 'DELETE']);
  rejectOtherMethods(app, '/v1/files/:id/content', ['GET']);
}

const FileObjectSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('file'),
  bytes: Type.Integer({ minimum: 0 }),
  created_at: Type.Integer({ description: 'Unix seconds.' }),
  expires_at: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix seconds; null: kept until deleted.' }),
  filename: Type.String(),
  purpose: Type.Union(FILE_PURPOSES.map((purpose) => Type.Literal(purpose))),
  status: Type.Literal('processed'),
  status_details: Type.Null(),
});
const NOT_FOUND = { 404: 'No file of this id (`not_found`): it never existed, is another tenant’s, was deleted or expired.' };

/** The OpenAPI document's word on the routes. */
export const fileDocs: RouteDocs = {
  'POST /v1/files': {
    operationId: 'createFile',
    summary: 'Upload a file',
    description:
      `A \`multipart/form-data\` form: \`file\`, \`purpose\` (${UPLOAD_PURPOSES.join(', ')}) and optionally \`expires_after[anchor]\` (\`created_at\`) ` +
      `with \`expires_after[seconds]\` (${EXPIRES_AFTER_SECONDS.min}–${EXPIRES_AFTER_SECONDS.max}). A \`batch\` file expires after FILE_TTL_S unless ` +
      'told otherwise, and may hold at most BATCH_MAX_LINES lines; other files are kept until deleted.',
    tags: ['Files'],
    credentials: 'bearer',
    responses: {
      200: json('The file object.', FileObjectSchema),
      ...errors('openai', [...AUTHENTICATED, 413, 415], {
        413: 'The file exceeds FILE_MAX_BYTES (`request_too_large`); nothing of it is stored.',
        415: 'The body is not sent as `multipart/form-data` (`unsupported_media_type`).',
      }),
    },
  },
  'GET /v1/files': {
    operationId: 'listFiles',
    summary: 'List files',
    description: `The caller's tenant's files, of \`purpose\` when given, paged with \`after\`, \`limit\` (1–${LIST_MAX}, default ${LIST_MAX}) and \`order\` of creation (default \`desc\`).`,
    tags: ['Files'],
    credentials: 'bearer',
    responses: {
      200: json(
        'A page of file objects.',
        Type.Object({
          object: Type.Literal('list'),
          data: Type.Array(FileObjectSchema),
          first_id: Type.Union([Type.String(), Type.Null()]),
          last_id: Type.Union([Type.String(), Type.Null()]),
          has_more: Type.Boolean(),
        }),
      ),
      ...errors('openai', AUTHENTICATED),
    },
  },
  'GET /v1/files/:id': {
    operationId: 'retrieveFile',
    summary: 'Retrieve a file',
    tags: ['Files'],
    credentials: 'bearer',
    responses: { 200: json('The file object.', FileObjectSchema), ...errors('openai', [...AUTHENTICATED, 404], NOT_FOUND) },
  },
  'GET /v1/files/:id/content': {
    operationId: 'downloadFile',
    summary: "Retrieve a file's content",
    description: 'The bytes of the file as uploaded (or as a batch wrote them), streamed.',
    tags: ['Files'],
    credentials: 'bearer',
    responses: {
      200: { description: 'The bytes of the file.', content: { 'application/octet-stream': { schema: Type.String({ format: 'binary' }) } } },
      ...errors('openai', [...AUTHENTICATED, 404], NOT_FOUND),
    },
  },
  'DELETE /v1/files/:id': {
    operationId: 'deleteFile',
    summary: 'Delete a file',
    description: 'Deletes the file and its bytes for good.',
    tags: ['Files'],
    credentials: 'bearer',
    responses: {
      200: json('Deleted.', Type.Object({ id: Type.String(), object: Type.Literal('file'), deleted: Type.Literal(true) })),
      ...errors('openai', [...AUTHENTICATED, 404], NOT_FOUND),
    },
  },
};
