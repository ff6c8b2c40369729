/** The simulator's deterministic text. */
import { mulberry32 } from './prng.ts';

// Common English words that o200k encodes as one token each (with their leading space), so that
// the generated piece count is the completion token count.
const VOCABULARY = [
  'the',
  'gateway',
  'routes',
  'each',
  'request',
  'to',
  'a',
  'model',
  'and',
  'returns',
  'tokens',
  'in',
  'order',
  'while',
  'workers',
  'stream',
  'data',
  'from',
  'one',
  'server',
  'that',
  'makes',
  'every',
  'answer',
  'simple',
  'fast',
  'with',
  'clear',
  'text',
  'for',
  'all',
  'users',
] as const;

/** A 32-bit seed from a value, such as a request's messages (FNV-1a over its JSON). */
export function seedFrom(value: unknown): number {
  const text = JSON.stringify(value ?? []);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** `count` one-token pieces from the seed; joined, they form the answer. */
export function generatePieces(seed: number, count: number): string[] {
  const next = mulberry32(seed);
  const pieces: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const word = VOCABULARY[Math.floor(next() * VOCABULARY.length)] ?? 'the';
    pieces.push(i === 0 ? word : ` ${word}`);
  }
  return pieces;
}
