import { ulid } from 'ulid';
import type { BatchJob } from '../../infra/queue/batch-jobs.ts';
import type { BatchDialect, BatchProgress, FileRepository, BatchRepository, StoredBatch } from '../../infra/store/repository.ts';
import { GatewayError, InvalidValueError, ResourceNotFoundError } from '../../errors/gateway-error.ts';
import { NOT_YET_VALIDATED, NO_PROGRESS, isEnded } from './batch-object.ts';

/** What batches are made and read with, built once by the web tier's composition root. */
export interface BatchServiceDeps {
  batches: BatchRepository;
  files: FileRepository;
  /** Queues a job of the batch lane (validation, on creation). */
  enqueue(job: BatchJob): Promise<void>;
  /** How long a completion window of '24h' lasts. */
  windowMs: number;
}

/** A batch to create, its request already checked for shape. */
export interface NewBatch {
  tenantId: string;
  keyId: string;
  dialect: BatchDialect;
  endpoint: string;
  inputFileId: string;
  metadata: Record<string, string> | null;
  feature: string | null;
  /** The request parameter that named the input file, for its errors (an inline batch has none). */
  inputParam: string | null;
}

/** A batch and its lines' results so far. */
export interface BatchView {
  batch: StoredBatch;
  progress: BatchProgress;
}

/** The id of a new batch in its API's shape. */
function newBatchId(dialect: BatchDialect): string {
  return dialect === 'anthropic' ? `msgbatch_${ulid().toLowerCase()}` : `batch_${ulid().toLowerCase()}`;
}

/**
 * Batches as both APIs (OpenAI's, Anthropic's Message Batches) make and read them. One tenant's
 * batch is unknown to another, exactly as one that never existed; a batch of the other API too.
 */
export class BatchService {
  readonly #deps: BatchServiceDeps;

  constructor(deps: BatchServiceDeps) {
    this.#deps = deps;
  }

  /** Records the batch (validating) and queues its validation; its input must be the tenant's file of purpose `batch`. */
  async create(request: NewBatch): Promise<BatchView> {
    const file = await this.#deps.files.get(request.tenantId, request.inputFileId);
    if (!file)
      throw new GatewayError(404, 'invalid_request_error', 'not_found', `The file '${request.inputFileId}' does not exist.`, { param: request.inputParam });
    if (file.purpose !== 'batch')
      throw new InvalidValueError(request.inputParam, `The file '${file.id}' has purpose '${file.purpose}'; a batch's input must have purpose 'batch'.`);
    const createdAt = new Date();
    const batch: StoredBatch = {
      id: newBatchId(request.dialect),
      tenantId: request.tenantId,
      keyId: request.keyId,
      dialect: request.dialect,
      endpoint: request.endpoint,
      inputFileId: file.id,
      completionWindow: '24h',
      status: 'validating',
      metadata: request.metadata,
      feature: request.feature,
      createdAt,
      expiresAt: new Date(createdAt.getTime() + this.#deps.windowMs),
      ...NOT_YET_VALIDATED,
      errors: [],
      segments: [],
    };
    await this.#deps.batches.create(batch);
    // A batch whose validation could not be queued is not lost: the workers' supervisor queues it.
    await this.#deps.enqueue({ kind: 'validate', tenantId: batch.tenantId, batchId: batch.id }).catch(() => undefined);
    return { batch, progress: NO_PROGRESS };
  }

  /** The tenant's batch of that API, with its progress; 404 otherwise. */
  async get(tenantId: string, dialect: BatchDialect, id: string): Promise<BatchView> {
    const batch = await this.#find(tenantId, dialect, id);
    return { batch, progress: await this.#progressOf(batch) };
  }

  /** A page of the tenant's batches of that API, newest first. */
  async list(
    tenantId: string,
    dialect: BatchDialect,
    page: { after: string | null; before?: string | null; limit: number },
  ): Promise<{ views: BatchView[]; hasMore: boolean }> {
    const { batches, hasMore } = await this.#deps.batches.list(tenantId, { dialect, ...page });
    const views = await Promise.all(batches.map(async (batch) => ({ batch, progress: await this.#progressOf(batch) })));
    return { views, hasMore };
  }

  /**
   * Cancels a batch not ended: it is `cancelling` until its running lines have ended, then
   * `cancelled`, the lines that never ran in its error file. An ended batch is answered as it is.
   */
  async cancel(tenantId: string, dialect: BatchDialect, id: string): Promise<BatchView> {
    const batch = await this.#find(tenantId, dialect, id);
    if (isEnded(batch) || batch.status === 'cancelling' || batch.status === 'finalizing') return { batch, progress: await this.#progressOf(batch) };
    const changed = await this.#deps.batches.transition(tenantId, id, ['validating', 'in_progress'], { status: 'cancelling', cancellingAt: new Date() });
    return this.get(tenantId, dialect, (changed ?? batch).id);
  }

  /** Removes an ended batch, its results and its output files; one still running cannot be. */
  async delete(tenantId: string, dialect: BatchDialect, id: string): Promise<StoredBatch> {
    const batch = await this.#find(tenantId, dialect, id);
    if (!isEnded(batch))
      throw new InvalidValueError(null, `The batch '${id}' is still ${batch.status.replace('_', ' ')}; cancel it, and delete it once it has ended.`);
    await this.#deps.batches.delete(tenantId, id);
    for (const fileId of [batch.outputFileId, batch.errorFileId]) if (fileId) await this.#deps.files.delete(tenantId, fileId);
    return batch;
  }

  async #find(tenantId: string, dialect: BatchDialect, id: string): Promise<StoredBatch> {
    const batch = await this.#deps.batches.get(tenantId, id);
    if (!batch || batch.dialect !== dialect) throw new ResourceNotFoundError(`The batch '${id}'`);
    return batch;
  }

  #progressOf(batch: StoredBatch): Promise<BatchProgress> {
    return batch.status === 'validating' || batch.status === 'failed' ? Promise.resolve(NO_PROGRESS) : this.#deps.batches.progress(batch.tenantId, batch.id);
  }
}
