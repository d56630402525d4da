/**
 * Deterministic clustered vectors and the stored entries that carry them, for the ANN index
 * tests on PGlite (test/adapters/vector-index.test.ts) and the PostgreSQL server
 * (test/adapters/pg-vector-index.test.ts): 384-dimensional unit vectors, point `i` in cluster
 * `i % clusters`, so recall against the exact scan is meaningful.
 */
import type { StoredEntry } from '../../src/ports/storage.js';

/** Clustered unit vectors (deterministic). */
export function point(i: number, clusters = 20): Float32Array {
  let s = (i * 2654435761) >>> 0;
  const r = (): number => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const c = i % clusters;
  const v = new Float32Array(384);
  for (let k = 0; k < 384; k++) v[k] = (k % clusters === c ? 1 : 0) + 0.15 * r();
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

/** Entry `i` of `owner`, at leaf `i`, embedded at {@link point}(i). */
export const entry = (i: number, owner: string): StoredEntry => ({
  id: `${owner}-${i}`,
  owner,
  tier: 'USER_OBSERVED',
  bytes: new Uint8Array([i & 0xff]),
  leafIndex: i,
  macKid: 'm',
  mac: new Uint8Array(32),
  writer: owner,
  content: `entry ${i}`,
  embedding: point(i),
});
