/** The console's files compressed once a build, and the encoding chosen from a request's Accept-Encoding. */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { chooseEncoding, compressedForms } from '../../../src/web/console/content-encoding.ts';

const script = Buffer.from('export function f(){return 1}\n'.repeat(200));
const both = compressedForms(script, 'text/javascript; charset=utf-8');

describe('compressedForms', () => {
  it('keeps text in brotli and gzip, each decoding to the file', () => {
    expect(brotliDecompressSync(both.br as Buffer)).toEqual(script);
    expect(gunzipSync(both.gzip as Buffer)).toEqual(script);
    expect((both.br as Buffer).length).toBeLessThan(script.length / 10);
  });

  it('keeps no form that is not smaller, and none of an image', () => {
    expect(compressedForms(Buffer.from('a'), 'text/css; charset=utf-8')).toEqual({});
    expect(compressedForms(script, 'image/png')).toEqual({});
    expect(Object.keys(compressedForms(script, 'image/svg+xml')).sort()).toEqual(['br', 'gzip']);
  });
});

describe('chooseEncoding', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['identity', null],
    ['gzip', 'gzip'],
    ['gzip, deflate, br, zstd', 'br'],
    ['BR;q=1.0', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', null],
    ['*', 'br'],
    ['*;q=0.8, br;q=0', 'gzip'],
    ['deflate', null],
    ['gzip;q=banana, br;q=2', null],
  ])('Accept-Encoding %j gives %j', (header, expected) => {
    expect(chooseEncoding(header, both)).toBe(expected);
  });

  it('only chooses among the forms the file has', () => {
    expect(chooseEncoding('br, gzip', { gzip: both.gzip })).toBe('gzip');
    expect(chooseEncoding('br, gzip', {})).toBeNull();
  });
});
