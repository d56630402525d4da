/**
 * Differential test: the naive recursive RFC 6962 §2.1 reference (MTH / PATH / PROOF,
 * recomputing whole subtrees) against the optimised frontier + planner, for every size
 * 1..70 and every index / pair, plus random larger trees.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toHex } from '../../../src/core/bytes.js';
import { leafHash } from '../../../src/core/merkle/hash.js';
import { consistencyPlan, inclusionPlan, planRefs } from '../../../src/core/merkle/plan.js';
import { verifyConsistency, verifyInclusion } from '../../../src/core/merkle/verify.js';
import { MapTree, testLeaves } from './fixtures.js';
import { mth, path, proof } from './naive.js';

const hex = (a: Uint8Array[]): string[] => a.map(toHex);

describe('optimised vs naive reference', () => {
  const data = testLeaves(70, 3);
  const tree = new MapTree(data);

  it('roots for every size 0..70', () => {
    for (let n = 0; n <= 70; n++)
      expect(toHex(tree.roots[n] as Uint8Array)).toBe(toHex(mth(data.slice(0, n))));
  });

  it('every inclusion proof for sizes 1..70', () => {
    let count = 0;
    for (let n = 1; n <= 70; n++) {
      const d = data.slice(0, n);
      for (let m = 0; m < n; m++) {
        const got = tree.inclusion(m, n);
        expect(hex(got)).toEqual(hex(path(m, d)));
        expect(
          verifyInclusion(m, n, leafHash(data[m] as Uint8Array), got, tree.roots[n] as Uint8Array),
        ).toBe(true);
        count++;
      }
    }
    expect(count).toBe((70 * 71) / 2);
  });

  it('every consistency proof for sizes 1 ≤ m ≤ n ≤ 70', () => {
    for (let n = 1; n <= 70; n++) {
      const d = data.slice(0, n);
      for (let m = 1; m <= n; m++) {
        const got = tree.consistency(m, n);
        expect(hex(got)).toEqual(m === n ? [] : hex(proof(m, d)));
        expect(
          verifyConsistency(m, n, got, tree.roots[m] as Uint8Array, tree.roots[n] as Uint8Array),
        ).toBe(true);
      }
    }
  });

  it('random larger trees (up to 1500 leaves)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 71, max: 1500 }),
        fc.nat(),
        fc.nat(),
        fc.integer(),
        (n, a, b, seed) => {
          const d = testLeaves(n, seed & 0xff);
          const t = new MapTree(d);
          expect(toHex(t.roots[n] as Uint8Array)).toBe(toHex(mth(d)));
          const m = a % n;
          expect(hex(t.inclusion(m, n))).toEqual(hex(path(m, d)));
          const s1 = 1 + (b % n);
          expect(hex(t.consistency(s1, n))).toEqual(s1 === n ? [] : hex(proof(s1, d)));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('plans read O(log n) stored nodes (≤ 2·log2 n + 2) even at 2^50 leaves', () => {
    for (const n of [2 ** 20 + 12345, 2 ** 40 - 1, 2 ** 50 + 3]) {
      const bound = 2 * Math.ceil(Math.log2(n)) + 2;
      expect(planRefs(inclusionPlan(n - 2, n)).length).toBeLessThanOrEqual(bound);
      expect(planRefs(inclusionPlan(7, n)).length).toBeLessThanOrEqual(bound);
      expect(planRefs(consistencyPlan(n - 7, n)).length).toBeLessThanOrEqual(bound);
      expect(planRefs(consistencyPlan(3, n)).length).toBeLessThanOrEqual(bound);
    }
  });
});
