/**
 * @module core/vector/kmeans
 * Spherical k-means for the IVF lists: Lloyd iterations on a bounded sample (centroid = the
 * normalised mean of its members; an emptied centroid is re-seeded from a sampled row), then
 * one assignment of every row to its nearest centroid. The randomness is a seeded PRNG, so a
 * given sequence of operations always builds the same lists. Every "nearest centroid" step is
 * one kernel call over the centroid block.
 */
import { DotArena } from './kernel.js';

/** Lloyd iterations never look at more rows than this: training cost stays bounded. */
const MAX_SAMPLE = 16_384;

export interface KMeansInput {
  /** The memory holding the rows, and the float offset of each row by slot. */
  readonly rows: Float32Array;
  readonly rowsAt: number;
  /** Live row slots, in storage order. */
  readonly slots: Int32Array;
  readonly dimensions: number;
  readonly stride: number;
  readonly lists: number;
  readonly samplePerList: number;
  readonly iterations: number;
  readonly seed: number;
  readonly simd: boolean;
}

export interface KMeansResult {
  /** `lists × stride` unit centroids (padding zero). */
  readonly centroids: Float32Array;
  /** The nearest centroid of `slots[i]`. */
  readonly assign: Int32Array;
}

/** mulberry32. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function kmeans(input: KMeansInput): KMeansResult {
  const { rows, rowsAt, slots, dimensions: d, stride, lists } = input;
  const n = slots.length;
  const rand = prng(input.seed);
  // A sample: the first `s` entries of a partial Fisher–Yates shuffle of the slots.
  const order = Int32Array.from(slots);
  const s = Math.min(n, Math.max(lists, Math.min(MAX_SAMPLE, lists * input.samplePerList)));
  for (let i = 0; i < s; i++) {
    const j = i + Math.floor(rand() * (n - i));
    const t = order[i] as number;
    order[i] = order[j] as number;
    order[j] = t;
  }
  // Scratch arena: [query | scores (lists) | centroids].
  const qAt = 0;
  const outAt = stride;
  const centAt = outAt + Math.ceil(lists / 8) * 8;
  const T = new DotArena(centAt + lists * stride, input.simd ? {} : { simd: false });
  const F = T.f32;
  const copyRow = (slot: number, to: number): void => {
    const o = rowsAt + slot * stride;
    for (let i = 0; i < d; i++) F[to + i] = rows[o + i] as number;
  };
  for (let c = 0; c < lists; c++) copyRow(order[c] as number, centAt + c * stride);
  const nearest = (slot: number): number => {
    copyRow(slot, qAt);
    T.dots(centAt, qAt, outAt, lists, stride);
    let best = 0;
    let bs = F[outAt] as number;
    for (let c = 1; c < lists; c++) {
      const x = F[outAt + c] as number;
      if (x > bs) {
        bs = x;
        best = c;
      }
    }
    return best;
  };

  const sums = new Float64Array(lists * d);
  const counts = new Int32Array(lists);
  for (let it = 0; it < input.iterations; it++) {
    sums.fill(0);
    counts.fill(0);
    for (let i = 0; i < s; i++) {
      const slot = order[i] as number;
      const c = nearest(slot);
      counts[c] = (counts[c] as number) + 1;
      const o = rowsAt + slot * stride;
      const so = c * d;
      for (let j = 0; j < d; j++) sums[so + j] = (sums[so + j] as number) + (rows[o + j] as number);
    }
    for (let c = 0; c < lists; c++) {
      const co = centAt + c * stride;
      if (counts[c] === 0) {
        copyRow(order[Math.floor(rand() * s)] as number, co);
        continue;
      }
      let ss = 0;
      for (let j = 0; j < d; j++) ss += (sums[c * d + j] as number) ** 2;
      const k = ss > 0 ? 1 / Math.sqrt(ss) : 0;
      for (let j = 0; j < d; j++) F[co + j] = (sums[c * d + j] as number) * k;
    }
  }
  const assign = new Int32Array(n);
  for (let i = 0; i < n; i++) assign[i] = nearest(slots[i] as number);
  return { centroids: F.slice(centAt, centAt + lists * stride), assign };
}
