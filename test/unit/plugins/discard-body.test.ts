import { describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { discardBody } from '../../../src/web/plugins/discard-body.ts';

/** A body that never ends: `count()` says how many bytes were read from it. */
function endless(chunkBytes: number) {
  let produced = 0;
  const stream = new Readable({
    read() {
      produced += chunkBytes;
      setImmediate(() => this.push(Buffer.alloc(chunkBytes)));
    },
  });
  return { stream, count: () => produced };
}

describe('discardBody', () => {
  it('reads a body to its end', async () => {
    const stream = Readable.from([Buffer.alloc(1000), Buffer.alloc(1000)], { objectMode: false });
    await discardBody(stream, 10_000, 5_000);
    expect(stream.readableEnded).toBe(true);
  });

  it('stops once more than the byte bound was read, and leaves the rest unread', async () => {
    const body = endless(1024);
    await discardBody(body.stream, 10 * 1024, 5_000);
    expect(body.count()).toBeGreaterThan(10 * 1024);
    expect(body.count()).toBeLessThan(64 * 1024);
    expect(body.stream.isPaused()).toBe(true);
  });

  it('stops at the time bound on a body that trickles', async () => {
    const trickle = new Readable({ read() {} });
    const started = Date.now();
    await discardBody(trickle, 1024 * 1024, 100);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(trickle.readableEnded).toBe(false);
  });
});
