/**
 * Files in MongoDB's GridFS, bucket `files`: their bytes in `files.chunks`, their record in
 * `files.files` with `metadata` {tenantId, purpose, createdAt, expiresAt, lines}. GridFS writes
 * the record once the last chunk is in, so a file being written is never listed. An upload marker
 * (`file_uploads`) lives while a file is written, so that the sweep finds the chunks of an upload
 * a crash cut short.
 */
import { ACTIVE_BATCH_STATUSES } from '../batch-fields.ts';
import { finished } from 'node:stream/promises';
import mongoose, { Schema, type Connection, type Model } from 'mongoose';
import type { FilePurpose, FileRepository, StoredFile } from '../repository.ts';
import { FileCounter, UNFINISHED_FILE_TTL_MS } from '../file-fields.ts';

/** GridFS's chunk size for files: every chunk but a file's last is this long. */
export const FILE_CHUNK_BYTES = 1024 * 1024;

const BUCKET = 'files';

/** What the gateway keeps of a file beside GridFS's own fields. */
interface FileMetadata {
  tenantId: string;
  purpose: FilePurpose;
  createdAt: Date;
  expiresAt: Date | null;
  lines: number;
}

/** A GridFS files document, as the driver writes it. */
export interface FileDocument {
  _id: string;
  length: number;
  chunkSize: number;
  uploadDate: Date;
  filename: string;
  metadata: FileMetadata;
}

/** A file being written: its chunks are removed past `until` unless it was completed. */
export interface FileUploadDocument {
  _id: string;
  until: Date;
}

/** The file models of one connection. */
export interface FileModels {
  Files: Model<FileDocument>;
  Uploads: Model<FileUploadDocument>;
}

const fileSchema = new Schema<FileDocument>(
  {
    _id: { type: String, required: true },
    length: { type: Number, required: true },
    chunkSize: { type: Number, required: true },
    uploadDate: { type: Date, required: true },
    filename: { type: String, required: true },
    metadata: {
      tenantId: { type: String, required: true },
      purpose: { type: String, required: true },
      createdAt: { type: Date, required: true },
      expiresAt: { type: Date, default: null },
      lines: { type: Number, required: true },
    },
  },
  { collection: `${BUCKET}.files`, versionKey: false },
);
fileSchema.index({ 'metadata.tenantId': 1, 'metadata.createdAt': 1, _id: 1 });
fileSchema.index({ 'metadata.expiresAt': 1 }, { partialFilterExpression: { 'metadata.expiresAt': { $type: 'date' } } });
// The index GridFS makes itself on first upload, declared so that syncIndexes keeps it.
fileSchema.index({ filename: 1, uploadDate: 1 });

const uploadSchema = new Schema<FileUploadDocument>(
  { _id: { type: String, required: true }, until: { type: Date, required: true } },
  { collection: 'file_uploads', versionKey: false },
);
uploadSchema.index({ until: 1 });

/** Compiles the file models on `connection`. */
export function createFileModels(connection: Connection): FileModels {
  return {
    Files: connection.model<FileDocument>('StoredFile', fileSchema),
    Uploads: connection.model<FileUploadDocument>('FileUpload', uploadSchema),
  };
}

type Bucket = InstanceType<typeof mongoose.mongo.GridFSBucket>;
type UploadStream = ReturnType<Bucket['openUploadStreamWithId']>;
type GridId = Parameters<Bucket['openUploadStreamWithId']>[0];

// GridFS takes any BSON value as a file's _id (the GridFS spec's `id: BsonValue`); the driver's
// types say ObjectId only. Our ids are the gateway's own strings, as in every other collection.
const gridId = (id: string): GridId => id as unknown as GridId;

function toStored(doc: FileDocument): StoredFile {
  const { tenantId, purpose, createdAt, expiresAt, lines } = doc.metadata;
  return { id: doc._id, tenantId, purpose, filename: doc.filename, bytes: doc.length, lines, createdAt, expiresAt: expiresAt ?? null };
}

/** The files of a tenant not past their expiry. */
function visibleTo(tenantId: string): mongoose.QueryFilter<FileDocument> {
  return { 'metadata.tenantId': tenantId, $or: [{ 'metadata.expiresAt': null }, { 'metadata.expiresAt': { $gt: new Date() } }] };
}

// Resolves once GridFS took the piece: its callback waits for the chunks it filled to be inserted,
// so that nothing is still being written when an upload is aborted.
function write(upload: UploadStream, piece: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => upload.write(piece, (error) => (error ? reject(error) : resolve())));
}

async function end(upload: UploadStream): Promise<void> {
  upload.end();
  await finished(upload);
}

/** Reads the records of the tenant's files a page at a time, by (createdAt, id) from the file of id `after`. */
async function listFiles(models: FileModels, tenantId: string, page: Parameters<FileRepository['list']>[1]) {
  const filter: mongoose.QueryFilter<FileDocument> = visibleTo(tenantId);
  if (page.purpose) filter['metadata.purpose'] = page.purpose;
  if (page.after !== null) {
    const after = await models.Files.findOne({ _id: page.after, 'metadata.tenantId': tenantId }).lean<FileDocument>();
    // An `after` that is not one of the tenant's files gives an empty page.
    if (!after) return { files: [], hasMore: false };
    const beyond = page.order === 'asc' ? '$gt' : '$lt';
    const at = after.metadata.createdAt;
    filter.$and = [{ $or: [{ 'metadata.createdAt': { [beyond]: at } }, { 'metadata.createdAt': at, _id: { [beyond]: after._id } }] }];
  }
  const direction = page.order === 'asc' ? 1 : -1;
  const docs = await models.Files.find(filter)
    .sort({ 'metadata.createdAt': direction, _id: direction })
    .limit(page.limit + 1)
    .lean<FileDocument[]>();
  return { files: docs.slice(0, page.limit).map(toStored), hasMore: docs.length > page.limit };
}

/** The FileRepository over GridFS on `connection`. */
export function createFileRepository(connection: Connection, models: FileModels): FileRepository {
  // One bucket: it looks for GridFS's indexes on its first upload only.
  let gridfs: Bucket | null = null;
  const bucket = (): Bucket => {
    if (!connection.db) throw new Error('MongoDB connection is not open.');
    gridfs ??= new mongoose.mongo.GridFSBucket(connection.db, { bucketName: BUCKET, chunkSizeBytes: FILE_CHUNK_BYTES });
    return gridfs;
  };
  const chunks = () => {
    if (!connection.db) throw new Error('MongoDB connection is not open.');
    return connection.db.collection(`${BUCKET}.chunks`);
  };
  const find = (tenantId: string, id: string) => models.Files.findOne({ ...visibleTo(tenantId), _id: id }).lean<FileDocument>();

  return {
    async create(file, content) {
      const found = await models.Files.findById(file.id).lean<FileDocument>();
      if (found) {
        if (found.metadata.tenantId !== file.tenantId) throw new Error(`The file id '${file.id}' is taken.`);
        return toStored(found);
      }
      await models.Uploads.updateOne({ _id: file.id }, { $set: { until: new Date(Date.now() + UNFINISHED_FILE_TTL_MS) } }, { upsert: true });
      // What an unfinished writer of this id left.
      await chunks().deleteMany({ files_id: file.id });
      const metadata: FileMetadata = { tenantId: file.tenantId, purpose: file.purpose, createdAt: file.createdAt, expiresAt: file.expiresAt, lines: 0 };
      const upload = bucket().openUploadStreamWithId(gridId(file.id), file.filename, { metadata });
      // Its errors reach the write that met them, or end's; unheard, one would end the process.
      upload.on('error', () => undefined);
      const counter = new FileCounter();
      try {
        for await (const piece of content) {
          counter.add(piece);
          await write(upload, piece);
        }
      } catch (error) {
        await upload.abort().catch(() => undefined);
        await chunks()
          .deleteMany({ files_id: file.id })
          .catch(() => undefined);
        await models.Uploads.deleteOne({ _id: file.id }).catch(() => undefined);
        throw error;
      }
      // GridFS writes the files document from this same object once the last chunk is in: the
      // record's fields are read only now, so a caller may settle them while `content` runs.
      Object.assign(metadata, { purpose: file.purpose, expiresAt: file.expiresAt, lines: counter.lines });
      await end(upload);
      await models.Uploads.deleteOne({ _id: file.id });
      return toStored({ _id: file.id, length: counter.bytes, chunkSize: FILE_CHUNK_BYTES, uploadDate: new Date(), filename: file.filename, metadata });
    },
    async get(tenantId, id) {
      const doc = await find(tenantId, id);
      return doc ? toStored(doc) : null;
    },
    list: (tenantId, page) => listFiles(models, tenantId, page),
    async *read(tenantId, id, offset = 0, end = Infinity) {
      const doc = await models.Files.findOne({ _id: id, 'metadata.tenantId': tenantId }).lean<FileDocument>();
      const until = Math.min(end, doc?.length ?? 0);
      if (offset >= until) return;
      // The driver skips to the chunk of `start` and fetches chunks in cursor batches, none past `end`.
      for await (const data of bucket().openDownloadStream(gridId(id), { start: offset, end: until })) yield data as Buffer;
    },
    async delete(tenantId, id) {
      const doc = await models.Files.findOneAndDelete({ _id: id, 'metadata.tenantId': tenantId }).lean<FileDocument>();
      if (!doc) return false;
      await chunks().deleteMany({ files_id: id });
      // An expired file the sweep has not reached yet goes too, but was no longer there to the client.
      const expiresAt = doc.metadata.expiresAt ?? null;
      return expiresAt === null || expiresAt > new Date();
    },
    async sweep(now, limit) {
      const due = await models.Files.find({ 'metadata.expiresAt': { $lte: now } }, { _id: 1 })
        .limit(limit)
        .lean<Array<{ _id: string }>>();
      // A running batch's input stays until the batch has ended, whatever its own expiry.
      const read = new Set<string>(
        await connection
          .collection('batches')
          .distinct('input_file_id', { input_file_id: { $in: due.map((file) => file._id) }, status: { $in: [...ACTIVE_BATCH_STATUSES] } }),
      );
      const expired = due.filter((file) => !read.has(file._id));
      let swept = 0;
      for (const { _id } of expired) {
        // Another sweeper may have removed it first; its chunks go either way.
        swept += (await models.Files.deleteOne({ _id })).deletedCount;
        await chunks().deleteMany({ files_id: _id });
      }
      const abandoned = await models.Uploads.find({ until: { $lte: now } })
        .limit(limit)
        .lean<FileUploadDocument[]>();
      for (const { _id } of abandoned) {
        // A marker outliving its file's completion (its removal failed) leaves the file's chunks alone.
        if (!(await models.Files.exists({ _id }))) await chunks().deleteMany({ files_id: _id });
        await models.Uploads.deleteOne({ _id });
      }
      return swept;
    },
  };
}
