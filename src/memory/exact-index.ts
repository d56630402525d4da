/**
 * @module memory/exact-index
 * A stand-in for `core/vector`'s `VectorIndex` (LOAD-PLAN.md interface) until that lands: an
 * exact cosine scan over unit-normalised copies. Same contract, so the read model switches by
 * changing one import.
 */

export interface VectorHit {
  readonly key: number;
  readonly score: number;
}

export interface VectorIndex {
  readonly dimensions: number;
  readonly size: number;
  add(key: number, v: ArrayLike<number>): void;
  remove(key: number): boolean;
  has(key: number): boolean;
  search(q: ArrayLike<number>, k: number, accept?: (key: number) => boolean): VectorHit[];
}

class ExactIndex implements VectorIndex {
  readonly #rows = new Map<number, Float32Array>();
  constructor(readonly dimensions: number) {}

  get size(): number {
    return this.#rows.size;
  }

  add(key: number, v: ArrayLike<number>): void {
    if (!Number.isInteger(key) || key < 0) throw new RangeError('key must be a non-negative integer');
    if (v.length !== this.dimensions) throw new RangeError('wrong dimensions');
    let sq = 0;
    for (let i = 0; i < v.length; i++) sq += (v[i] as number) * (v[i] as number);
    if (!Number.isFinite(sq) || sq === 0) throw new RangeError('zero or non-finite vector');
    const n = Math.sqrt(sq);
    const u = new Float32Array(v.length);
    for (let i = 0; i < v.length; i++) u[i] = (v[i] as number) / n;
    this.#rows.set(key, u);
  }

  remove(key: number): boolean {
    return this.#rows.delete(key);
  }

  has(key: number): boolean {
    return this.#rows.has(key);
  }

  search(q: ArrayLike<number>, k: number, accept?: (key: number) => boolean): VectorHit[] {
    if (q.length !== this.dimensions) throw new RangeError('wrong dimensions');
    let sq = 0;
    for (let i = 0; i < q.length; i++) sq += (q[i] as number) * (q[i] as number);
    const qn = Math.sqrt(sq);
    if (!Number.isFinite(qn) || qn === 0 || k <= 0) return [];
    const out: VectorHit[] = [];
    for (const [key, u] of this.#rows) {
      if (accept !== undefined && !accept(key)) continue;
      let dot = 0;
      for (let i = 0; i < u.length; i++) dot += (u[i] as number) * (q[i] as number);
      out.push({ key, score: dot / qn });
    }
    out.sort((a, b) => b.score - a.score);
    return out.length > k ? out.slice(0, k) : out;
  }
}

export function createVectorIndex(dimensions: number): VectorIndex {
  return new ExactIndex(dimensions);
}
