import type { FileRepository, StoredBatch } from '../../infra/store/repository.ts';
import { readLines, type FileLine } from '../../domain/batches/read-lines.ts';

/**
 * The input lines of the batch's segment `index`, read from its offset to the next segment's: a
 * segment of small lines reads its few kilobytes, not the rest of the stored chunk they start in.
 */
export function segmentLines(files: FileRepository, batch: StoredBatch, index: number): AsyncGenerator<FileLine> {
  const segment = batch.segments[index];
  if (!segment) throw new Error(`batch ${batch.id} has no segment ${index}`);
  const end = batch.segments[index + 1]?.offset;
  return readLines(files.read(batch.tenantId, batch.inputFileId, segment.offset, end), 0, segment.lines);
}
