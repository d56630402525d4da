/**
 * @module adapters/embeddings/vector
 * Small vector helpers shared by the embedders and their tests.
 */

/** Euclidean norm. */
export function l2Norm(v: Float32Array): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) {
    const x = v[i] as number;
    s += x * x;
  }
  return Math.sqrt(s);
}

/** Scale `v` in place to unit length; a zero vector is left as is. Returns `v`. */
export function l2NormalizeInPlace(v: Float32Array): Float32Array {
  const n = l2Norm(v);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / n;
  return v;
}

/** Dot product; equals cosine similarity for unit vectors. Throws on a width mismatch. */
export function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new RangeError('vector widths differ');
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

/** Cosine similarity in [-1, 1] (0 when either vector is zero). */
export function cosine(a: Float32Array, b: Float32Array): number {
  const d = l2Norm(a) * l2Norm(b);
  return d === 0 ? 0 : dot(a, b) / d;
}
