/**
 * @module core/prng
 * mulberry32: the one small seeded PRNG every deterministic part uses (Louvain's visiting
 * order, k-means sampling, evaluation corpora, benches and tests), so a seed means the same
 * sequence everywhere. Not for secrets (those come from the RandomSource port).
 */
export type Rng = () => number;

/** Uniform floats in [0, 1) from a 32-bit seed. */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
