/**
 * Test helpers for the vector index: a seeded PRNG, random and clustered data, and the naive
 * reference (float64 cosine over every stored vector, sorted by score then key).
 */
import { expect } from 'vitest';
import type { VectorHit, VectorIndex } from '../../../src/core/vector/index.js';
import { mulberry32 } from '../../../src/core/prng.js';

export const rng = mulberry32;

/** A standard normal draw (Box–Muller). */
export function gauss(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

export function randomVector(r: () => number, d: number): Float32Array {
  return Float32Array.from({ length: d }, () => gauss(r));
}

/**
 * Clustered data like sentence embeddings: `clusters` random unit centres; a point is a
 * centre plus isotropic noise whose total norm is `spread` (cosine to its centre ≈
 * 1/√(1+spread²)).
 */
export function clustered(
  r: () => number,
  d: number,
  clusters: number,
  spread = 1,
): () => Float32Array {
  const centres = Array.from({ length: clusters }, () => unit(randomVector(r, d)));
  const sigma = spread / Math.sqrt(d);
  return () => {
    const c = centres[Math.floor(r() * clusters)] as Float64Array;
    return Float32Array.from({ length: d }, (_, i) => (c[i] as number) + sigma * gauss(r));
  };
}

export function unit(v: ArrayLike<number>): Float64Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += (v[i] as number) ** 2;
  const k = 1 / Math.sqrt(s);
  return Float64Array.from({ length: v.length }, (_, i) => (v[i] as number) * k);
}

/** The naive index: every vector kept as a float64 unit vector. */
export class Naive {
  readonly rows = new Map<number, Float64Array>();
  add(key: number, v: ArrayLike<number>): void {
    this.rows.set(key, unit(v));
  }
  remove(key: number): boolean {
    return this.rows.delete(key);
  }
  search(q: ArrayLike<number>, k: number, accept?: (key: number) => boolean): VectorHit[] {
    const u = unit(q);
    const all: VectorHit[] = [];
    for (const [key, v] of this.rows) {
      if (accept !== undefined && !accept(key)) continue;
      let s = 0;
      for (let i = 0; i < v.length; i++) s += (v[i] as number) * (u[i] as number);
      all.push({ key, score: s });
    }
    all.sort((a, b) => b.score - a.score || a.key - b.key);
    return all.slice(0, k);
  }
}

/** Float32 storage and accumulation make scores differ from float64 by ~1e-6. */
export const EPS = 2e-5;

/**
 * `got` is the exact top-k of `want`, up to near-ties: same length, the i-th scores agree,
 * every key once, each key's score is its true score, and a key only differs from the
 * reference where the reference has another key within EPS of it.
 */
export function expectSameRanking(
  got: VectorHit[],
  want: VectorHit[],
  naive: Naive,
  q: ArrayLike<number>,
): void {
  expect(got.length).toBe(want.length);
  expect(new Set(got.map((h) => h.key)).size).toBe(got.length);
  const u = unit(q);
  for (let i = 0; i < got.length; i++) {
    const g = got[i] as VectorHit;
    const w = want[i] as VectorHit;
    expect(Math.abs(g.score - w.score)).toBeLessThan(EPS);
    const v = naive.rows.get(g.key);
    expect(v).toBeDefined();
    let s = 0;
    for (let j = 0; j < u.length; j++) s += ((v as Float64Array)[j] as number) * (u[j] as number);
    expect(Math.abs(s - g.score)).toBeLessThan(EPS);
    if (g.key !== w.key) expect(Math.abs(s - w.score)).toBeLessThan(EPS);
  }
}

/** Recall@k of `got` against the true top-k keys. */
export function recall(got: VectorHit[], want: VectorHit[]): number {
  if (want.length === 0) return 1;
  const truth = new Set(want.map((h) => h.key));
  return got.filter((h) => truth.has(h.key)).length / want.length;
}

export type { VectorIndex };
