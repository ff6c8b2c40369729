/** What both adapters share about stored responses: which statuses are final, how items are indexed, the sweep's horizons. */
import { RESPONSE_STATUSES, type ResponseStatus, type StoredItem, type StoredResponse } from './repository.ts';

/** The statuses a response leaves: a background response in one of them is what the reaper looks at. */
export const UNFINISHED_RESPONSE_STATUSES = ['queued', 'in_progress'] as const satisfies readonly ResponseStatus[];

/** The statuses a response ends in; a record in one of them replaces whatever is stored. */
export const FINAL_RESPONSE_STATUSES: readonly ResponseStatus[] = RESPONSE_STATUSES.filter(
  (status) => !(UNFINISHED_RESPONSE_STATUSES as readonly ResponseStatus[]).includes(status),
);

/** How long a tenant's responses are kept when it has set no data policy. */
export const DEFAULT_RETENTION_DAYS = 30;

/**
 * A deleted response's id is kept this many days beyond the longest retention of any tenant (at
 * least DEFAULT_RETENTION_DAYS), counted from its deletion. It only has to outlive the last write
 * the response's worker can still make (hours: the background deadline); keeping it as long as any
 * response is kept, and a day more, leaves no doubt and costs one small row.
 */
export const TOMBSTONE_MARGIN_DAYS = 1;

/** One item of a response as its adapter indexes it. */
export interface ItemRow {
  kind: 'input' | 'output';
  /** Its place in the request's `input` or in the Response's `output`. */
  position: number;
  item: StoredItem;
}

/** The response's input items, then the items of its Response object's `output` that have an id. */
export function itemRowsOf(record: StoredResponse): ItemRow[] {
  const rows: ItemRow[] = record.input.map((item, position) => ({ kind: 'input', position, item }));
  const output = record.response.output;
  if (!Array.isArray(output)) return rows;
  output.forEach((item: unknown, position) => {
    if (isStoredItem(item)) rows.push({ kind: 'output', position, item });
  });
  return rows;
}

function isStoredItem(item: unknown): item is StoredItem {
  return typeof item === 'object' && item !== null && typeof (item as { id?: unknown }).id === 'string';
}
