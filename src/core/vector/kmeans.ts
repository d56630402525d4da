/**
 * @module core/vector/kmeans
 * Spherical k-means for the IVF lists, run in bounded steps: the caller copies a sample of
 * rows in ({@link KMeansTrainer.addSample}), then calls {@link KMeansTrainer.step} with a work
 * budget until {@link KMeansTrainer.done}. Lloyd iterations on the sample (centroid = the
 * normalised mean of its members; an emptied centroid is re-seeded from a sampled row). The
 * randomness is a seeded PRNG and the work is counted in multiply-adds, not time, so a given
 * sequence of operations always builds the same centroids however the steps are cut.
 * Every "nearest centroid" step is one kernel call over the centroid block, with the sample
 * row itself as the query (the sample lives in the trainer's own arena).
 */
import { DotArena } from './kernel.js';

/** Lloyd iterations never look at more rows than this: training cost stays bounded. */
export const MAX_SAMPLE = 16_384;

export interface TrainerOptions {
  readonly dimensions: number;
  readonly stride: number;
  /** Centroids wanted (fewer when fewer rows are sampled). */
  readonly lists: number;
  /** Sample rows the caller will add at most. */
  readonly capacity: number;
  readonly iterations: number;
  readonly rand: () => number;
  readonly simd: boolean;
}

export class KMeansTrainer {
  readonly #d: number;
  readonly #stride: number;
  readonly #iterations: number;
  readonly #rand: () => number;
  readonly #capacity: number;
  #lists: number;
  /** Scratch arena: [scores (lists, padded) | centroids | sample rows]. */
  readonly #T: DotArena;
  readonly #centAt: number;
  readonly #rowsAt: number;
  #s = 0;
  #started = false;
  #it = 0;
  #i = 0;
  readonly #sums: Float64Array;
  #counts: Int32Array;
  #lastCounts: Int32Array | null = null;

  constructor(o: TrainerOptions) {
    this.#d = o.dimensions;
    this.#stride = o.stride;
    this.#iterations = o.iterations;
    this.#rand = o.rand;
    this.#capacity = o.capacity;
    this.#lists = o.lists;
    this.#centAt = Math.ceil(o.lists / 8) * 8;
    this.#rowsAt = this.#centAt + o.lists * o.stride;
    this.#T = new DotArena(this.#rowsAt + o.capacity * o.stride, o.simd ? {} : { simd: false });
    this.#sums = new Float64Array(o.lists * o.dimensions);
    this.#counts = new Int32Array(o.lists);
  }

  /** Rows sampled so far. */
  get sampled(): number {
    return this.#s;
  }

  /** Centroids (final once {@link done}). */
  get lists(): number {
    return this.#lists;
  }

  get done(): boolean {
    return this.#started && this.#it >= this.#iterations;
  }

  /** Copy one unit row (`stride` floats of `src` from `at`) into the sample. */
  addSample(src: Float32Array, at: number): void {
    if (this.#started || this.#s >= this.#capacity) throw new RangeError('k-means: sample full');
    const to = this.#rowsAt + this.#s * this.#stride;
    this.#T.f32.set(src.subarray(at, at + this.#stride), to);
    this.#s++;
  }

  /**
   * Run Lloyd iterations for about `budget` multiply-adds (at least one row); returns the work
   * done. The first call fixes the sample and seeds the centroids with its first rows (the
   * caller's sample order is random), using at most as many centroids as sampled rows.
   */
  step(budget: number): number {
    if (!this.#started) this.#start();
    const F = this.#T.f32;
    const st = this.#stride;
    const d = this.#d;
    const lists = this.#lists;
    const centAt = this.#centAt;
    const sums = this.#sums;
    const counts = this.#counts;
    let work = 0;
    while (this.#it < this.#iterations && work < budget) {
      if (this.#i === this.#s) {
        this.#update();
        work += lists * d;
        continue;
      }
      const o = this.#rowsAt + this.#i * st;
      this.#T.dots(centAt, o, 0, lists, st);
      let best = 0;
      let bs = F[0] as number;
      for (let c = 1; c < lists; c++) {
        const x = F[c] as number;
        if (x > bs) {
          bs = x;
          best = c;
        }
      }
      counts[best] = (counts[best] as number) + 1;
      const so = best * d;
      for (let j = 0; j < d; j++) sums[so + j] = (sums[so + j] as number) + (F[o + j] as number);
      this.#i++;
      work += lists * st + d;
    }
    return work;
  }

  /** `lists × stride` unit centroids (padding zero). */
  centroids(): Float32Array {
    return this.#T.f32.slice(this.#centAt, this.#centAt + this.#lists * this.#stride);
  }

  /** Sample rows per list at the last assignment (an even split before any iteration ran). */
  counts(): Int32Array {
    if (this.#lastCounts !== null) return this.#lastCounts;
    const even = Math.ceil(this.#s / Math.max(1, this.#lists));
    return new Int32Array(this.#lists).fill(even);
  }

  #start(): void {
    this.#started = true;
    this.#lists = Math.max(1, Math.min(this.#lists, this.#s));
    this.#counts = new Int32Array(this.#lists);
    const F = this.#T.f32;
    const st = this.#stride;
    for (let c = 0; c < this.#lists; c++)
      F.copyWithin(this.#centAt + c * st, this.#rowsAt + c * st, this.#rowsAt + (c + 1) * st);
  }

  /** End of an iteration: centroids = normalised means; an empty one re-seeded from a sampled row. */
  #update(): void {
    const F = this.#T.f32;
    const d = this.#d;
    const st = this.#stride;
    for (let c = 0; c < this.#lists; c++) {
      const co = this.#centAt + c * st;
      if (this.#counts[c] === 0) {
        const r = Math.floor(this.#rand() * this.#s);
        F.copyWithin(co, this.#rowsAt + r * st, this.#rowsAt + (r + 1) * st);
        continue;
      }
      let ss = 0;
      for (let j = 0; j < d; j++) ss += (this.#sums[c * d + j] as number) ** 2;
      const k = ss > 0 ? 1 / Math.sqrt(ss) : 0;
      for (let j = 0; j < d; j++) F[co + j] = (this.#sums[c * d + j] as number) * k;
    }
    this.#lastCounts = this.#counts.slice();
    this.#sums.fill(0);
    this.#counts.fill(0);
    this.#i = 0;
    this.#it++;
  }
}
