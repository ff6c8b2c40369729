/** The simulator's embeddings: a deterministic unit vector per input, so the same text always embeds the same. */
import { mulberry32 } from './prng.ts';
import { seedFrom } from './text.ts';

/** The vector length when neither the request (`dimensions`) nor the catalog says. */
export const DEFAULT_DIMENSIONS = 256;

/** A unit vector seeded by the item. */
export function simulatedVector(item: string | number[], dimensions: number): number[] {
  const next = mulberry32(seedFrom(item));
  const values = Array.from({ length: dimensions }, () => next() * 2 - 1);
  const norm = Math.sqrt(values.reduce((sum, value) => sum + value * value, 0)) || 1;
  return values.map((value) => value / norm);
}
