/** What both adapters share about batches: which statuses are active, and which of a set of results is kept. */
import type { BatchLineResult, BatchStatus } from './repository.ts';

/** The statuses of a batch not final yet: what the supervisor looks at. */
export const ACTIVE_BATCH_STATUSES = ['validating', 'in_progress', 'finalizing', 'cancelling'] as const satisfies readonly BatchStatus[];

/**
 * The first result of each line, in their order: a line given twice in one call keeps its first,
 * as a line already stored does, whatever order the store happens to insert rows in.
 */
export function firstPerLine(results: readonly BatchLineResult[]): BatchLineResult[] {
  const seen = new Set<string>();
  return results.filter((result) => {
    const key = JSON.stringify([result.batchId, result.line]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
