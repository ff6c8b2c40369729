/**
 * The console's files compressed once, when the build is read, and the encoding a request asks
 * for (RFC 9110 §12.5.3): brotli where the client takes it, else gzip, else the file as it is.
 */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** The encodings a built file may be kept in, the server's preference first. */
export const ENCODINGS = ['br', 'gzip'] as const;
export type Encoding = (typeof ENCODINGS)[number];

/** Content types worth compressing: text of every kind; images and fonts are compressed already. */
const COMPRESSIBLE = /^(text\/|application\/json|image\/svg\+xml)/;

/** `body` in each encoding that makes it smaller, at the slowest settings: it happens once a build. */
export function compressedForms(body: Buffer, contentType: string): Partial<Record<Encoding, Buffer>> {
  if (!COMPRESSIBLE.test(contentType)) return {};
  const forms: Partial<Record<Encoding, Buffer>> = {};
  const br = brotliCompressSync(body, {
    params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
  });
  if (br.length < body.length) forms.br = br;
  const gzip = gzipSync(body, { level: constants.Z_BEST_COMPRESSION });
  if (gzip.length < body.length) forms.gzip = gzip;
  return forms;
}

/** Each coding of an Accept-Encoding header with its weight; a malformed weight counts as 0 (not acceptable). */
function weights(header: string): Map<string, number> {
  const parsed = new Map<string, number>();
  for (const item of header.split(',')) {
    const [coding, ...params] = item.split(';').map((part) => part.trim().toLowerCase());
    if (!coding) continue;
    const q = params.find((param) => param.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    parsed.set(coding, Number.isFinite(weight) && weight >= 0 && weight <= 1 ? weight : 0);
  }
  return parsed;
}

/** The encoding to send among those `available`, or null for the file as it is (no header: identity, as RFC 9110 allows). */
export function chooseEncoding(acceptEncoding: string | undefined, available: Partial<Record<Encoding, Buffer>>): Encoding | null {
  if (!acceptEncoding) return null;
  const accepted = weights(acceptEncoding);
  let best: Encoding | null = null;
  let bestWeight = 0;
  for (const encoding of ENCODINGS) {
    if (!available[encoding]) continue;
    const weight = accepted.get(encoding) ?? accepted.get('*') ?? 0;
    if (weight > bestWeight) [best, bestWeight] = [encoding, weight];
  }
  return best;
}
