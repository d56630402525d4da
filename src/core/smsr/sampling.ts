/**
 * @module core/smsr/sampling
 * Uniform k-subsets without replacement (Algorithm 1, "sample k from C without replacement")
 * from an injected source of 32-bit words. Uniformity is what Theorem 2 rests on (the paper's
 * E2): every index is drawn with exact rejection sampling (no modulo bias) and the subset by a
 * partial Fisher–Yates shuffle, so each of the C(m, k) subsets has probability exactly 1/C(m, k)
 * given uniform words.
 */

/** A source of independent uniform 32-bit unsigned integers. */
export interface WordSource {
  nextUint32(): number;
}

/** Uniform integer in [0, n) for 1 ≤ n ≤ 2³², by rejection (Lemire's bound-free variant). */
export function uniformBelow(src: WordSource, n: number): number {
  // Accept x < 2^32 − (2^32 mod n): the accepted range is a multiple of n.
  const limit = 0x1_0000_0000 - (0x1_0000_0000 % n);
  for (;;) {
    const x = src.nextUint32();
    if (x < limit) return x % n;
  }
}

/**
 * A uniform k-subset of {0, …, m−1} (in draw order). `scratch`, when given, must have length
 * ≥ m and is reused across calls (no allocation on the hot path).
 */
export function sampleSubset(
  src: WordSource,
  m: number,
  k: number,
  scratch?: Uint32Array,
): number[] {
  const pool = scratch !== undefined && scratch.length >= m ? scratch : new Uint32Array(m);
  for (let i = 0; i < m; i++) pool[i] = i;
  const out = new Array<number>(k);
  for (let i = 0; i < k; i++) {
    const j = i + uniformBelow(src, m - i);
    const pj = pool[j] as number;
    pool[j] = pool[i] as number;
    pool[i] = pj;
    out[i] = pj;
  }
  return out;
}

/**
 * A small, fast, seedable generator (sfc32, seeded from a string by FNV-1a + splitmix32) for
 * tests, the harness and benchmarks. Deterministic and statistically sound for sampling; not a
 * CSPRNG — production smoothing draws from the host's RandomSource (memory/smsr).
 */
export class SeededWords implements WordSource {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: string | number) {
    let h = 0x811c9dc5;
    const s = String(seed);
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    const mix = (): number => {
      h = (h + 0x9e3779b9) | 0;
      let z = h;
      z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
      z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
      return (z ^ (z >>> 15)) >>> 0;
    };
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = mix();
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }
}
