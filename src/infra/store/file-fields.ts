/** What both adapters share about stored files: how their bytes and lines are counted, how long an unfinished one stays. */

const NEWLINE = 0x0a;

/**
 * A file being written carries this expiry until it is complete: the sweep removes what an upload
 * interrupted by a crash left, once no upload can still be running (the request timeout is far shorter).
 */
export const UNFINISHED_FILE_TTL_MS = 86_400_000;

/** Counts the bytes and lines of a file as its pieces pass. */
export class FileCounter {
  bytes = 0;
  private newlines = 0;
  private last = NEWLINE;

  add(piece: Uint8Array): void {
    if (piece.length === 0) return;
    this.bytes += piece.length;
    for (let at = piece.indexOf(NEWLINE); at !== -1; at = piece.indexOf(NEWLINE, at + 1)) this.newlines++;
    this.last = piece[piece.length - 1] as number;
  }

  /** Its lines: a last line without its newline counts too; an empty file has none. */
  get lines(): number {
    return this.newlines + (this.last === NEWLINE ? 0 : 1);
  }
}
