/** The limits of an upload, enforced while it streams: a file past them is refused before it is stored whole. */
import { InvalidValueError, RequestTooLargeError } from '../../errors/gateway-error.ts';
import type { FileCounter } from '../../infra/store/file-fields.ts';

/** How large a file may be; `maxLines` is known once the upload's purpose is (a form may send it after its file), null for none. */
export interface UploadLimits {
  maxBytes: number;
  maxLines(): number | null;
}

/** 400 naming `file` when a file has more lines than `maxLines` (null: any). */
export function checkLines(lines: number, maxLines: number | null): void {
  if (maxLines !== null && lines > maxLines)
    throw new InvalidValueError('file', `A batch input file may have at most ${maxLines} lines (requests); this one has more.`);
}

/** `content` passed on and counted into `counter`; throws at the first piece past a limit: 413 for its bytes, 400 for its lines. */
export async function* withinLimits(content: AsyncIterable<Uint8Array>, counter: FileCounter, limits: UploadLimits): AsyncGenerator<Uint8Array> {
  for await (const piece of content) {
    counter.add(piece);
    if (counter.bytes > limits.maxBytes) throw new RequestTooLargeError(limits.maxBytes, 'The file');
    checkLines(counter.lines, limits.maxLines());
    yield piece;
  }
}
