/** One line of a file as it streams past: its text (no newline) and the byte offset where it starts. */
export interface FileLine {
  text: string;
  offset: number;
}

const NEWLINE = 0x0a;
const RETURN = 0x0d;

/** A line longer than the reader allows, which it refuses rather than hold. */
export class LineTooLong extends Error {
  /** 0-based, from where the reading started. */
  readonly index: number;
  constructor(index: number, maxBytes: number) {
    super(`line ${index + 1} is longer than ${maxBytes} bytes`);
    this.index = index;
  }
}

/**
 * The lines of a file read a chunk at a time (starting at byte `offset` of it), at most `limit`:
 * only the line being assembled is held, never the file, and one past `maxLineBytes` throws
 * LineTooLong. A `\r\n` ends a line as `\n` does; an empty last line (a file ending in a
 * newline) is no line.
 */
export async function* readLines(chunks: AsyncIterable<Uint8Array>, offset = 0, limit = Infinity, maxLineBytes = Infinity): AsyncGenerator<FileLine> {
  if (limit <= 0) return;
  let pending: Buffer[] = [];
  let held = 0;
  let start = offset;
  let at = offset;
  let count = 0;
  const take = (tail: Buffer): FileLine => {
    if (held + tail.length > maxLineBytes) throw new LineTooLong(count, maxLineBytes);
    const bytes = pending.length === 0 ? tail : Buffer.concat([...pending, tail]);
    pending = [];
    held = 0;
    const end = bytes.length > 0 && bytes[bytes.length - 1] === RETURN ? bytes.length - 1 : bytes.length;
    return { text: bytes.toString('utf8', 0, end), offset: start };
  };
  for await (const piece of chunks) {
    const chunk = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    let from = 0;
    for (let newline = chunk.indexOf(NEWLINE, from); newline !== -1; newline = chunk.indexOf(NEWLINE, from)) {
      yield take(chunk.subarray(from, newline));
      if (++count >= limit) return;
      start = at + newline + 1;
      from = newline + 1;
    }
    if (from < chunk.length) {
      held += chunk.length - from;
      if (held > maxLineBytes) throw new LineTooLong(count, maxLineBytes);
      pending.push(Buffer.from(chunk.subarray(from)));
    }
    at += chunk.length;
  }
  if (pending.length > 0) yield take(Buffer.alloc(0));
}
