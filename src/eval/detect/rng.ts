/**
 * @module eval/detect/rng
 * Seeded PRNG (mulberry32) for the evaluation: every corpus, split and attack is a pure
 * function of its seed, so results are reproducible.
 */
import { type Rng, mulberry32 } from '../../core/prng.js';
export type { Rng };

export const rng = mulberry32;

export function pick<T>(r: Rng, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)] as T;
}

export function shuffle<T>(r: Rng, xs: readonly T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a;
}
