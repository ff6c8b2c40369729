/** Mongoose schemas of stored responses: one document per response (a tombstone once deleted) and one per item. */
import { Schema, type Connection, type Model } from 'mongoose';
import { RESPONSE_STATUSES, type ResponseStatus } from '../repository.ts';

/**
 * A response; `_id` is `responseKey(tenant, id)`, so the primary key alone keeps an id once per
 * tenant (and a tombstone in place). The Response object is kept as JSON text: its JSON schemas
 * (`$ref`, `$defs`) and metadata keys may hold names MongoDB would refuse or read as operators.
 */
export interface ResponseDocument {
  _id: string;
  tenant_id: string;
  id: string;
  /** Null on a tombstone, as every field of content is. */
  status: ResponseStatus | null;
  background: boolean;
  response_json: string | null;
  previous_response_id: string | null;
  created_at: Date;
  expires_at: Date | null;
  /** Set: deleted, only the id is kept. */
  deleted_at: Date | null;
  /** The write whose items are the response's: items of any other `rev` are left over from a replaced or unfinished write. */
  rev: string | null;
  /** How many input items `rev` wrote, so that a read racing a replacement notices. */
  input_count: number;
}

/** One input or output item of a response, of one write (`rev`). */
export interface ResponseItemDocument {
  tenant_id: string;
  response_id: string;
  rev: string;
  kind: 'input' | 'output';
  position: number;
  item_id: string;
  item_json: string;
}

/** The response models of one connection. */
export interface ResponseModels {
  Responses: Model<ResponseDocument>;
  Items: Model<ResponseItemDocument>;
}

/** The `_id` of a tenant's response: unambiguous whatever the two ids hold. */
export const responseKey = (tenantId: string, id: string): string => JSON.stringify([tenantId, id]);

const responseSchema = new Schema<ResponseDocument>(
  {
    _id: { type: String, required: true },
    tenant_id: { type: String, required: true },
    id: { type: String, required: true },
    status: { type: String, default: null, enum: [...RESPONSE_STATUSES, null] },
    background: { type: Boolean, default: false },
    response_json: { type: String, default: null },
    previous_response_id: { type: String, default: null },
    created_at: { type: Date, required: true },
    expires_at: { type: Date, default: null },
    deleted_at: { type: Date, default: null },
    rev: { type: String, default: null },
    input_count: { type: Number, default: 0 },
  },
  { collection: 'responses', versionKey: false },
);
// The sweep (expired, past retention, old tombstones) and the reaper (unfinished background ones).
responseSchema.index({ expires_at: 1 }, { partialFilterExpression: { expires_at: { $type: 'date' } } });
responseSchema.index({ created_at: 1 });
responseSchema.index({ deleted_at: 1 }, { partialFilterExpression: { deleted_at: { $type: 'date' } } });
responseSchema.index({ background: 1, status: 1, created_at: 1 });

const itemSchema = new Schema<ResponseItemDocument>(
  {
    tenant_id: { type: String, required: true },
    response_id: { type: String, required: true },
    rev: { type: String, required: true },
    kind: { type: String, required: true, enum: ['input', 'output'] },
    position: { type: Number, required: true },
    item_id: { type: String, required: true },
    item_json: { type: String, required: true },
  },
  { collection: 'response_items', versionKey: false },
);
itemSchema.index({ tenant_id: 1, response_id: 1, rev: 1, kind: 1, position: 1 });
itemSchema.index({ tenant_id: 1, item_id: 1 });

/** Compiles the response models on `connection`. */
export function createResponseModels(connection: Connection): ResponseModels {
  return {
    Responses: connection.model<ResponseDocument>('StoredResponse', responseSchema),
    Items: connection.model<ResponseItemDocument>('StoredResponseItem', itemSchema),
  };
}
