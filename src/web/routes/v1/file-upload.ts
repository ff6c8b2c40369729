/**
 * POST /v1/files's form, read as it arrives: the file part streams into the store while its bytes
 * and lines are counted against the limits, and the fields around it (`purpose`, `expires_after[…]`)
 * may come before or after it, as the `openai` SDK sends them in the order of its caller's object.
 * Whatever refuses the upload (a limit passed, a bad field after the file) throws inside the
 * content the store reads, so that nothing of the file stays.
 */
import type { FastifyRequest } from 'fastify';
import type { Multipart, MultipartFile, MultipartValue } from '@fastify/multipart';
import { ulid } from 'ulid';
import type { FilePurpose, FileRepository, StoredFile } from '../../../infra/store/repository.ts';
import {
  ClientClosedRequestError,
  GatewayError,
  InvalidValueError,
  MalformedRequestError,
  MissingRequiredFieldError,
  RequestTooLargeError,
} from '../../../errors/gateway-error.ts';
import { FileCounter } from '../../../infra/store/file-fields.ts';
import { expiresAfterSeconds, fileExpiry, uploadPurpose } from '../../../domain/files/upload-fields.ts';
import { checkLines, withinLimits } from '../../../domain/files/upload-limits.ts';
import { discardBody } from '../../plugins/discard-body.ts';

/** Where an upload goes, and what it is checked against. */
export interface UploadRules {
  files: FileRepository;
  /** The largest file stored (FILE_MAX_BYTES); a larger upload is refused 413 and nothing of it kept. */
  maxBytes: number;
  /** How long a `batch` file lives when its upload sets no `expires_after` (FILE_TTL_S). */
  ttlMs: number;
  /** The most lines of a `batch` file (BATCH_MAX_LINES). */
  maxBatchLines: number;
  /** Whether a batch not ended reads a file: it may not be deleted until then. */
  readByBatch(tenantId: string, fileId: string): Promise<boolean>;
}

type Parts = AsyncIterator<Multipart> & AsyncIterable<Multipart>;

/** What reading the form threw, as the client's error: a client gone ends the request quietly, anything else its parser throws is a malformed form. */
function formError(request: FastifyRequest, error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  // The request itself is destroyed once read whole; its connection, only when the client went away.
  if (request.raw.socket.destroyed) return new ClientClosedRequestError();
  return new MalformedRequestError(`The multipart form cannot be read: ${error instanceof Error ? error.message : String(error)}.`);
}

/** `source` (the form's parts, a file's bytes) with what its parser throws made the client's error. */
async function* fromForm<T>(request: FastifyRequest, source: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* source;
  } catch (error) {
    throw formError(request, error);
  }
}

/** One upload's form: its fields so far (the last of a name wins), and the record they settle. */
class UploadForm {
  readonly fields = new Map<string, string>();
  readonly counter = new FileCounter();
  /** The record the store takes; its purpose and expiry are settled by the fields, when they come. */
  readonly record: Omit<StoredFile, 'bytes' | 'lines'>;
  private purposeKnown = false;
  private readonly rules: UploadRules;

  constructor(tenantId: string, rules: UploadRules) {
    this.rules = rules;
    // The purpose is a placeholder until the form names one.
    this.record = { id: `file-${ulid()}`, tenantId, purpose: 'user_data', filename: '', createdAt: new Date(), expiresAt: null };
  }

  add(part: MultipartValue): void {
    this.fields.set(part.fieldname, typeof part.value === 'string' ? part.value : String(part.value));
  }

  /** Applies the fields read so far; `final`: the form has ended, and `purpose` must be among them. */
  settle(final: boolean): void {
    if (!final && !this.fields.has('purpose')) return;
    const purpose: FilePurpose = uploadPurpose(this.fields.get('purpose'));
    const after = expiresAfterSeconds(this.fields.get('expires_after[anchor]'), this.fields.get('expires_after[seconds]'));
    this.record.purpose = purpose;
    this.record.expiresAt = fileExpiry(purpose, after, this.record.createdAt, this.rules.ttlMs);
    this.purposeKnown = true;
  }

  /** The line limit, once the purpose is known: a `batch` file's. */
  maxLines(): number | null {
    return this.purposeKnown && this.record.purpose === 'batch' ? this.rules.maxBatchLines : null;
  }
}

/** Reads fields up to the first file part; null when the form ends without one. */
async function untilFile(parts: Parts, form: UploadForm): Promise<MultipartFile | null> {
  for (;;) {
    const next = await parts.next();
    if (next.done) return null;
    if (next.value.type === 'file') return next.value;
    form.add(next.value);
  }
}

/** The file's bytes within the limits, then the rest of the form: the store's content ends only once the form is settled. */
async function* formContent(bytes: AsyncIterable<Uint8Array>, parts: Parts, form: UploadForm, maxBytes: number): AsyncGenerator<Uint8Array> {
  yield* withinLimits(bytes, form.counter, { maxBytes, maxLines: () => form.maxLines() });
  for await (const part of parts) {
    if (part.type === 'file') throw new InvalidValueError(part.fieldname, 'Send one file per upload, as `file`.');
    form.add(part);
  }
  form.settle(true);
  checkLines(form.counter.lines, form.maxLines());
}

async function store(request: FastifyRequest, rules: UploadRules): Promise<StoredFile> {
  const parts = fromForm(request, request.parts());
  const form = new UploadForm(request.principal.tenantId, rules);
  const file = await untilFile(parts, form);
  // Fields before the file are checked before any of it is stored.
  form.settle(false);
  if (!file) throw new MissingRequiredFieldError('file');
  if (file.fieldname !== 'file') throw new InvalidValueError(file.fieldname, `Unknown parameter '${file.fieldname}'; send the file as 'file'.`);
  // PostgreSQL's text refuses NUL, which a form's filename may hold.
  form.record.filename = file.filename.replaceAll('\u0000', '\ufffd');
  return rules.files.create(form.record, formContent(fromForm<Uint8Array>(request, file.file), parts, form, rules.maxBytes));
}

/**
 * Stores the form's file and returns its record. A refused upload's body is read and thrown away
 * before the answer (a 413's by the error handler), so that the client, still sending, reads it.
 */
export async function uploadFile(request: FastifyRequest, rules: UploadRules): Promise<StoredFile> {
  try {
    return await store(request, rules);
  } catch (error) {
    // The form's parser stops with its part unread; the rest of the body is no longer its.
    request.raw.unpipe();
    if (!(error instanceof RequestTooLargeError)) await discardBody(request.raw);
    throw error;
  }
}
