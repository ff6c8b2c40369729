import type { Readable } from 'node:stream';

/** The most of a refused body read and thrown away before answering; past it the client may see a reset. */
export const DISCARD_MAX_BYTES = 64 * 1024 * 1024;
/** The longest a refused body is read for, so that a trickling client cannot hold the answer back. */
export const DISCARD_MAX_MS = 10_000;

/**
 * Reads what is left of a request body and throws it away, up to a bound, before its refusal is
 * answered. A client still sending when the server closes gets a reset, which discards the answer
 * it has not read yet ("fetch failed" instead of the 413): servers linger for the same reason.
 */
export function discardBody(request: Readable, maxBytes = DISCARD_MAX_BYTES, maxMs = DISCARD_MAX_MS): Promise<void> {
  if (request.readableEnded || request.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let read = 0;
    const done = () => {
      clearTimeout(timer);
      request.off('data', onData).off('end', done).off('error', done).off('close', done);
      request.pause();
      resolve();
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > maxBytes) done();
    };
    const timer = setTimeout(done, maxMs);
    request.on('data', onData).once('end', done).once('error', done).once('close', done);
    request.resume();
  });
}
