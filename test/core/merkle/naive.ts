/**
 * @module test/core/merkle/naive
 * A deliberately naive reference straight from the RFC 6962 §2.1 definitions (MTH, PATH,
 * PROOF/SUBPROOF), recomputing whole subtrees recursively. Independent of src/core/merkle
 * except for SHA-256 itself (node:crypto here, not the optimised nodeHash).
 */
import { createHash } from 'node:crypto';

const sha = (...parts: Uint8Array[]): Uint8Array => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};

export const naiveLeaf = (d: Uint8Array): Uint8Array => sha(Uint8Array.of(0), d);
const naiveNode = (l: Uint8Array, r: Uint8Array): Uint8Array => sha(Uint8Array.of(1), l, r);

/** k: the largest power of two smaller than n (n > 1). */
function k(n: number): number {
  let p = 1;
  while (p * 2 < n) p *= 2;
  return p;
}

/** MTH(D[n]) over raw leaf inputs (RFC 6962 §2.1). */
export function mth(d: readonly Uint8Array[]): Uint8Array {
  if (d.length === 0) return sha();
  if (d.length === 1) return naiveLeaf(d[0] as Uint8Array);
  const s = k(d.length);
  return naiveNode(mth(d.slice(0, s)), mth(d.slice(s)));
}

/** PATH(m, D[n]) (RFC 6962 §2.1.1). */
export function path(m: number, d: readonly Uint8Array[]): Uint8Array[] {
  if (d.length <= 1) return [];
  const s = k(d.length);
  if (m < s) return [...path(m, d.slice(0, s)), mth(d.slice(s))];
  return [...path(m - s, d.slice(s)), mth(d.slice(0, s))];
}

function subproof(m: number, d: readonly Uint8Array[], b: boolean): Uint8Array[] {
  const n = d.length;
  if (m === n) return b ? [] : [mth(d)];
  const s = k(n);
  if (m <= s) return [...subproof(m, d.slice(0, s), b), mth(d.slice(s))];
  return [...subproof(m - s, d.slice(s), false), mth(d.slice(0, s))];
}

/** PROOF(m, D[n]) (RFC 6962 §2.1.2), for 0 < m ≤ n. */
export function proof(m: number, d: readonly Uint8Array[]): Uint8Array[] {
  return subproof(m, d, true);
}
