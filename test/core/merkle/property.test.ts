/**
 * Property tests: for random trees (size ≤ 300) every inclusion and consistency proof from the
 * planner verifies, and every one-bit flip of any proof element, of the leaf hash or of a root
 * makes verification fail.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { leafHash } from '../../../src/core/merkle/hash.js';
import { verifyConsistency, verifyInclusion } from '../../../src/core/merkle/verify.js';
import { MapTree, testLeaves } from './fixtures.js';

function flips(h: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let bit = 0; bit < h.length * 8; bit++) {
    const c = h.slice();
    c[bit >> 3] = (c[bit >> 3] as number) ^ (1 << (bit & 7));
    out.push(c);
  }
  return out;
}

const replaceAt = (a: Uint8Array[], i: number, v: Uint8Array): Uint8Array[] =>
  a.map((x, j) => (j === i ? v : x));

describe('proof properties on random trees', () => {
  it('inclusion proofs verify; every single-bit flip fails', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.nat(), fc.nat(), (n, a, seed) => {
        const d = testLeaves(n, seed & 0xff);
        const t = new MapTree(d);
        const m = a % n;
        const size = m + 1 + (seed % (n - m));
        const lh = leafHash(d[m] as Uint8Array);
        const root = t.roots[size] as Uint8Array;
        const p = t.inclusion(m, size);
        expect(verifyInclusion(m, size, lh, p, root)).toBe(true);
        p.forEach((el, i) => {
          for (const f of flips(el))
            expect(verifyInclusion(m, size, lh, replaceAt(p, i, f), root)).toBe(false);
        });
        for (const f of flips(root)) expect(verifyInclusion(m, size, lh, p, f)).toBe(false);
        for (const f of flips(lh)) expect(verifyInclusion(m, size, f, p, root)).toBe(false);
        // Wrong index / size, truncated and extended proofs.
        if (size > 1) expect(verifyInclusion((m + 1) % size, size, lh, p, root)).toBe(false);
        if (p.length > 0) expect(verifyInclusion(m, size, lh, p.slice(0, -1), root)).toBe(false);
        expect(verifyInclusion(m, size, lh, [...p, root], root)).toBe(false);
      }),
      { numRuns: 60 },
    );
  });

  it('consistency proofs verify; every single-bit flip fails', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 300 }), fc.nat(), fc.nat(), (n, a, b) => {
        const t = new MapTree(testLeaves(n, b & 0xff));
        const s2 = 2 + (a % (n - 1));
        const s1 = 1 + (b % (s2 - 1));
        const r1 = t.roots[s1] as Uint8Array;
        const r2 = t.roots[s2] as Uint8Array;
        const p = t.consistency(s1, s2);
        expect(verifyConsistency(s1, s2, p, r1, r2)).toBe(true);
        p.forEach((el, i) => {
          for (const f of flips(el))
            expect(verifyConsistency(s1, s2, replaceAt(p, i, f), r1, r2)).toBe(false);
        });
        for (const f of flips(r1)) expect(verifyConsistency(s1, s2, p, f, r2)).toBe(false);
        for (const f of flips(r2)) expect(verifyConsistency(s1, s2, p, r1, f)).toBe(false);
        expect(verifyConsistency(s1, s2, p.slice(0, -1), r1, r2)).toBe(false);
        expect(verifyConsistency(s1, s2, [...p, r2], r1, r2)).toBe(false);
        // (A wrong size2 is not checked here: a proof can validly tie r1 to a *different* tree
        // whose root happens to be r2 — the verifier checks roots, not sizes.)
      }),
      { numRuns: 60 },
    );
  });
});
