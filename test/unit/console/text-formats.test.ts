/**
 * The console's pure text code (console/src/): the prompt versions' line diff, the usage CSV, and the reading of
 * "Try it"'s server-sent events from a stream cut anywhere.
 */
import { describe, expect, it } from 'vitest';
import { diffLines } from '../../../console/src/diff.ts';
import { toCsv } from '../../../console/src/csv.ts';
import { takeEvents } from '../../../console/src/sse.ts';

describe('diffLines', () => {
  it('keeps common lines and marks a changed line as removed, then added', () => {
    expect(diffLines('a\nb\nc', 'a\nB\nc')).toEqual([
      { kind: 'same', text: 'a' },
      { kind: 'removed', text: 'b' },
      { kind: 'added', text: 'B' },
      { kind: 'same', text: 'c' },
    ]);
  });

  it('rebuilds both texts from its lines', () => {
    const before = 'model: x\n\n[system]\nBe terse.\n\n[user]\nHi {{name}}';
    const after = '[system]\nBe kind.\nBe terse.\n\n[user]\nHello {{name}}\nBye';
    const lines = diffLines(before, after);
    expect(lines.filter((l) => l.kind !== 'added').map((l) => l.text)).toEqual(before.split('\n'));
    expect(lines.filter((l) => l.kind !== 'removed').map((l) => l.text)).toEqual(after.split('\n'));
    // The longest common subsequence: [system], Be terse., the blank line, [user].
    expect(lines.filter((l) => l.kind === 'same')).toHaveLength(4);
  });
});

describe('toCsv', () => {
  it('quotes what RFC 4180 says to, and ends each line with CRLF', () => {
    expect(
      toCsv(
        ['a', 'b'],
        [
          ['x,y', 'say "hi"'],
          [1.5, null],
          ['two\nlines', true],
        ],
      ),
    ).toBe('a,b\r\n"x,y","say ""hi"""\r\n1.5,\r\n"two\nlines",true\r\n');
  });

  it('keeps a spreadsheet from running a text cell as a formula, and leaves numbers alone', () => {
    expect(toCsv(['v'], [['=HYPERLINK("x")'], ['@sum'], [-3]])).toBe(`v\r\n"'=HYPERLINK(""x"")"\r\n'@sum\r\n-3\r\n`);
  });
});

describe('takeEvents', () => {
  const stream = 'data: {"a":1}\n\ndata: {"b":2}\n\n: keep-alive\n\ndata: [DONE]\n\n';

  it('gives the data of complete events and keeps the rest for the next piece', () => {
    expect(takeEvents('data: {"a":1}\n\ndata: {"b"')).toEqual({ data: ['{"a":1}'], rest: 'data: {"b"' });
  });

  it('reads the same events however the stream is cut', () => {
    for (let size = 1; size <= stream.length; size++) {
      const data: string[] = [];
      let buffer = '';
      for (let at = 0; at < stream.length; at += size) {
        const taken = takeEvents(buffer + stream.slice(at, at + size));
        data.push(...taken.data);
        buffer = taken.rest;
      }
      expect(data, `pieces of ${size}`).toEqual(['{"a":1}', '{"b":2}', '[DONE]']);
    }
  });

  it('joins multi-line data and accepts CRLF line ends', () => {
    expect(takeEvents('data:one\r\ndata: two\r\n\r\n').data).toEqual(['one\ntwo']);
  });
});
