/**
 * @module core/detect/kernel
 * The one hot loop of MemSAD: dot products of a candidate against every vector of the query
 * history (1,000 × 384 multiply-adds per write). Plain JavaScript manages ~0.45 ms on this
 * class of machine; a 4-lane WebAssembly SIMD kernel (hand-assembled in `core/vector/kernel.ts`,
 * shared with the vector index) brings it near 0.1 ms.
 * When WebAssembly SIMD is unavailable the JavaScript loop gives identical results (up to
 * float rounding).
 *
 * Layout: rows of `stride` floats (the width rounded up to 8, zero-padded) in one private
 * arena; the candidate and the output live after the rows.
 */

import { DotArena, strideOf } from '../vector/kernel.js';

export { strideOf };

/**
 * A fixed-capacity matrix of row vectors with a fast "dot every row with x" operation. Rows
 * are written in place (the caller decides which slot a vector goes to: a FIFO ring).
 */
export class DotMatrix {
  readonly dimensions: number;
  readonly capacity: number;
  readonly stride: number;
  readonly #arena: DotArena;
  readonly #xAt: number;
  readonly #outAt: number;

  constructor(dimensions: number, capacity: number, opts: { simd?: boolean } = {}) {
    if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError('bad dimensions');
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('bad capacity');
    this.dimensions = dimensions;
    this.capacity = capacity;
    this.stride = strideOf(dimensions);
    this.#xAt = capacity * this.stride;
    this.#outAt = this.#xAt + this.stride;
    this.#arena = new DotArena(this.#outAt + capacity, opts.simd === false ? { simd: false } : {});
  }

  /** True when the SIMD kernel is in use. */
  get simd(): boolean {
    return this.#arena.simd;
  }

  /** Write `v` (length `dimensions`) into row `slot`. */
  setRow(slot: number, v: ArrayLike<number>): void {
    const F = this.#arena.f32;
    const o = slot * this.stride;
    for (let i = 0; i < this.dimensions; i++) F[o + i] = v[i] as number;
  }

  /**
   * Dot `scale·x` with the first `n` rows; returns a view valid until the next call (copy it
   * to keep it).
   */
  dots(x: ArrayLike<number>, n: number, scale = 1): Float32Array {
    const m = Math.min(Math.max(n, 0), this.capacity);
    const F = this.#arena.f32;
    const xa = this.#xAt;
    for (let i = 0; i < this.dimensions; i++) F[xa + i] = (x[i] as number) * scale;
    this.#arena.dots(0, xa, this.#outAt, m, this.stride);
    return F.subarray(this.#outAt, this.#outAt + m);
  }
}

/** Dot product of two equal-length vectors (JavaScript). */
export function dotProduct(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let s = 0;
  for (let i = 0; i < n; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

/** Cosine similarity; 0 when either vector is zero. */
export function cosineSim(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let s = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < n; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    s += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : s / Math.sqrt(na * nb);
}

/** A unit-length copy (zero stays zero). */
export function normalized(v: ArrayLike<number>): Float32Array {
  return normalizeInto(new Float32Array(v.length), v);
}

/**
 * `normalized(v)` written into `out` (of `v`'s length) instead of a new array: the same
 * operations, the same values. Returns `out`.
 */
export function normalizeInto(out: Float32Array, v: ArrayLike<number>): Float32Array {
  // `set` copies a typed array natively (`Float32Array.from` iterates it: ~5× slower).
  out.set(v);
  let n = 0;
  for (let i = 0; i < out.length; i++) n += (out[i] as number) ** 2;
  if (n > 0) {
    const k = 1 / Math.sqrt(n);
    for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) * k;
  }
  return out;
}
