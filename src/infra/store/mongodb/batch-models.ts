/** Mongoose schemas of batches (one document each, `_id` its id) and of their lines' results (one per line). */
import type { BatchResultFields } from '../batch-fields.ts';
import { Schema, type Connection, type Model } from 'mongoose';
import { BATCH_STATUSES, type BatchDialect, type BatchError, type BatchSegment, type BatchStatus, type BatchUsage } from '../repository.ts';

/**
 * A batch; field names mirror the PostgreSQL columns but for two. Its metadata is kept as JSON
 * text, as a response's object is: its keys are the client's, which MongoDB may refuse or read as
 * operators. Its errors are `validation_errors`, since mongoose reserves `errors`.
 */
export interface BatchDocument {
  _id: string;
  tenant_id: string;
  key_id: string;
  dialect: BatchDialect;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  metadata_json: string | null;
  feature: string | null;
  validation_errors: BatchError[];
  total: number;
  segments: BatchSegment[];
  output_file_id: string | null;
  error_file_id: string | null;
  usage: BatchUsage | null;
  created_at: Date;
  expires_at: Date;
  in_progress_at: Date | null;
  finalizing_at: Date | null;
  completed_at: Date | null;
  failed_at: Date | null;
  expired_at: Date | null;
  cancelling_at: Date | null;
  cancelled_at: Date | null;
}

/** The result of one line of a batch. */
export type BatchResultDocument = BatchResultFields;

/** The batch models of one connection. */
export interface BatchModels {
  Batches: Model<BatchDocument>;
  Results: Model<BatchResultDocument>;
}

const optionalDate = { type: Date, default: null };

const batchSchema = new Schema<BatchDocument>(
  {
    _id: { type: String, required: true },
    tenant_id: { type: String, required: true },
    key_id: { type: String, required: true },
    dialect: { type: String, required: true, enum: ['openai', 'anthropic'] },
    endpoint: { type: String, required: true },
    input_file_id: { type: String, required: true },
    completion_window: { type: String, required: true },
    status: { type: String, required: true, enum: BATCH_STATUSES },
    metadata_json: { type: String, default: null },
    feature: { type: String, default: null },
    validation_errors: { type: Schema.Types.Mixed, default: () => [] },
    total: { type: Number, required: true },
    segments: { type: Schema.Types.Mixed, default: () => [] },
    output_file_id: { type: String, default: null },
    error_file_id: { type: String, default: null },
    usage: { type: Schema.Types.Mixed, default: null },
    created_at: { type: Date, required: true },
    expires_at: { type: Date, required: true },
    in_progress_at: optionalDate,
    finalizing_at: optionalDate,
    completed_at: optionalDate,
    failed_at: optionalDate,
    expired_at: optionalDate,
    cancelling_at: optionalDate,
    cancelled_at: optionalDate,
  },
  { collection: 'batches', versionKey: false },
);
// A tenant's list, newest first; and the batches not final, which the supervisor pages through by
// id (a range per active status, merged; a partial index would need $in, which only MongoDB 6 takes).
batchSchema.index({ tenant_id: 1, dialect: 1, created_at: -1, _id: -1 });
batchSchema.index({ status: 1, _id: 1 });

const resultSchema = new Schema<BatchResultDocument>(
  {
    tenant_id: { type: String, required: true },
    batch_id: { type: String, required: true },
    line: { type: Number, required: true },
    custom_id: { type: String, required: true },
    request_id: { type: String, required: true },
    status: { type: String, required: true, enum: ['succeeded', 'failed'] },
    status_code: { type: Number, required: true },
    body: { type: String, required: true },
    input_tokens: { type: Number, required: true },
    cached_tokens: { type: Number, required: true },
    output_tokens: { type: Number, required: true },
    reasoning_tokens: { type: Number, required: true },
    total_tokens: { type: Number, required: true },
  },
  { collection: 'batch_results', versionKey: false },
);
// One result per line: the first written stays, a later one is refused as a duplicate.
resultSchema.index({ batch_id: 1, line: 1 }, { unique: true });

/** Compiles the batch models on `connection`. */
export function createBatchModels(connection: Connection): BatchModels {
  return {
    Batches: connection.model<BatchDocument>('Batch', batchSchema),
    Results: connection.model<BatchResultDocument>('BatchResult', resultSchema),
  };
}
