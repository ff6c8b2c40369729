/**
 * The campaign's only source of chance: mulberry32, a 32-bit PRNG small enough to read, seeded from
 * the campaign's seed and a label, so that the fault schedule and the traffic plan each replay exactly
 * for a seed whatever the other draws. Math.random is never used for anything scheduled.
 */
import { mulberry32 } from '../../src/providers/simulator/prng.ts';

/** A 32-bit seed for one stream of draws: the campaign's seed mixed with a label (FNV-1a). */
export function deriveSeed(seed: number, label: string): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (const char of `${seed}:${label}`) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** Draws of one seeded stream. */
export class Rng {
  readonly #next: () => number;

  constructor(seed: number, label: string) {
    this.#next = mulberry32(deriveSeed(seed, label));
  }

  /** A float in [0, 1). */
  float(): number {
    return this.#next();
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.#next() * (max - min + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.#next() < p;
  }

  /** One item, uniformly. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.#next() * items.length)] as T;
  }

  /** One item, by weight. */
  weighted<T>(items: ReadonlyArray<readonly [T, number]>): T {
    const total = items.reduce((sum, [, weight]) => sum + weight, 0);
    let at = this.#next() * total;
    for (const [item, weight] of items) {
      at -= weight;
      if (at < 0) return item;
    }
    return (items.at(-1) as readonly [T, number])[0];
  }

  /** A copy in a random order (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(this.#next() * (i + 1));
      [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
    }
    return copy;
  }

  /** An exponentially distributed wait of the given mean (Poisson arrivals). */
  exponential(mean: number): number {
    return -Math.log(1 - this.#next()) * mean;
  }
}
