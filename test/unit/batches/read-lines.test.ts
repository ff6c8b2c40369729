import { describe, expect, it } from 'vitest';
import { readLines } from '../../../src/domain/batches/read-lines.ts';

async function* pieces(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function all(text: string, size: number, offset = 0, limit = Infinity) {
  const lines = [];
  for await (const line of readLines(pieces(text, size), offset, limit)) lines.push(line);
  return lines;
}

describe('readLines', () => {
  it('splits lines across chunk boundaries, with the byte offset of each', async () => {
    const text = 'first\nsecond line\r\nthird ü\nlast';
    for (const size of [1, 2, 3, 7, 100]) {
      expect(await all(text, size)).toEqual([
        { text: 'first', offset: 0 },
        { text: 'second line', offset: 6 },
        { text: 'third ü', offset: 19 },
        { text: 'last', offset: 28 },
      ]);
    }
  });

  it('reads no empty line after a final newline, and at most `limit` lines from `offset`', async () => {
    expect(await all('a\nb\n', 3)).toEqual([
      { text: 'a', offset: 0 },
      { text: 'b', offset: 2 },
    ]);
    expect(await all('b\nc\nd\n', 2, 10, 2)).toEqual([
      { text: 'b', offset: 10 },
      { text: 'c', offset: 12 },
    ]);
  });
});

describe('readLines with a longest line', () => {
  it('refuses a line past the limit, naming it, without holding more of it', async () => {
    const read = all('short\n' + 'x'.repeat(50) + '\nlater', 4, 0, Infinity);
    await expect(read).resolves.toHaveLength(3);
    const capped = async () => {
      const lines = [];
      for await (const line of readLines(pieces('short\n' + 'x'.repeat(50) + '\nlater', 4), 0, Infinity, 20)) lines.push(line);
      return lines;
    };
    await expect(capped()).rejects.toMatchObject({ index: 1 });
  });
});
