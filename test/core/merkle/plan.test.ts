/**
 * Planner, frontier and verifier input checks: coded errors, decomposition shape, and strict
 * rejection of malformed inputs.
 */
import { describe, expect, it } from 'vitest';
import { type ErrorCode, isMemwardenError } from '../../../src/core/errors.js';
import {
  EMPTY_FRONTIER,
  appendToFrontier,
  frontierFromHashes,
  frontierRefs,
  frontierRoot,
  rightBorderHashes,
} from '../../../src/core/merkle/frontier.js';
import { emptyRoot, leafHash } from '../../../src/core/merkle/hash.js';
import {
  consistencyPlan,
  decomposeRange,
  inclusionPlan,
  rootPlan,
  splitPoint,
} from '../../../src/core/merkle/plan.js';
import {
  checkConsistency,
  checkInclusion,
  rootFromInclusionProof,
} from '../../../src/core/merkle/verify.js';
import { MapTree, testLeaves } from './fixtures.js';

function codeOf(fn: () => unknown): ErrorCode | undefined {
  try {
    fn();
  } catch (e) {
    if (isMemwardenError(e)) return e.code;
    throw e;
  }
  return undefined;
}

const h32 = new Uint8Array(32);

describe('planner', () => {
  it('splitPoint is the largest power of two below n', () => {
    expect([2, 3, 4, 5, 8, 9, 2 ** 33 + 1].map(splitPoint)).toEqual([1, 2, 2, 4, 4, 8, 2 ** 33]);
  });

  it('decomposes [0, n) into the binary expansion of n', () => {
    expect(decomposeRange(0, 13)).toEqual([
      { level: 3, index: 0 },
      { level: 2, index: 2 },
      { level: 0, index: 12 },
    ]);
    expect(decomposeRange(4, 7)).toEqual([
      { level: 1, index: 2 },
      { level: 0, index: 6 },
    ]);
    expect(rootPlan(0).nodes).toEqual([]);
    const big = 2 ** 40 + 2 ** 33 + 5;
    expect(decomposeRange(0, big).map((r) => r.level)).toEqual([40, 33, 2, 0]);
  });

  it('rejects bad indices and sizes with codes', () => {
    expect(codeOf(() => inclusionPlan(5, 5))).toBe('LOG_INDEX_OUT_OF_RANGE');
    expect(codeOf(() => inclusionPlan(-1, 5))).toBe('LOG_INDEX_OUT_OF_RANGE');
    expect(codeOf(() => inclusionPlan(0, 0))).toBe('LOG_SIZE_INVALID');
    expect(codeOf(() => inclusionPlan(0, 1.5))).toBe('LOG_SIZE_INVALID');
    expect(codeOf(() => inclusionPlan(0, 2 ** 53))).toBe('LOG_SIZE_INVALID');
    expect(codeOf(() => consistencyPlan(0, 5))).toBe('LOG_SIZE_INVALID');
    expect(codeOf(() => consistencyPlan(6, 5))).toBe('LOG_SIZE_INVALID');
    expect(consistencyPlan(5, 5)).toEqual([]);
    expect(inclusionPlan(0, 1)).toEqual([]);
  });

  it('at most one non-perfect range per proof (the right border)', () => {
    for (let n = 1; n <= 130; n++) {
      for (let m = 0; m < n; m++)
        expect(inclusionPlan(m, n).filter((p) => p.nodes.length > 1).length).toBeLessThanOrEqual(1);
      for (let m = 1; m < n; m++)
        expect(consistencyPlan(m, n).filter((p) => p.nodes.length > 1).length).toBeLessThanOrEqual(
          1,
        );
    }
  });
});

describe('frontier', () => {
  it('appending in any batch split gives the same nodes and roots', () => {
    const hashes = testLeaves(100).map(leafHash);
    const one = appendToFrontier(EMPTY_FRONTIER, hashes);
    let f = EMPTY_FRONTIER;
    const completed = [];
    for (let i = 0; i < 100; i += 7) {
      const r = appendToFrontier(f, hashes.slice(i, i + 7));
      completed.push(...r.completed);
      f = r.frontier;
    }
    expect(f).toEqual(one.frontier);
    expect(completed).toEqual(one.completed);
    // 100 leaves complete 100 + 50 + 25 + 12 + 6 + 3 + 1 perfect subtrees.
    expect(one.completed).toHaveLength(197);
    expect(one.frontier.nodes.map((n) => n.level)).toEqual([6, 5, 2]);
  });

  it('reloads from stored hashes and reports missing ones as LOG_CORRUPT', () => {
    const t = new MapTree(testLeaves(45));
    const refs = frontierRefs(45);
    const f = frontierFromHashes(
      45,
      refs.map((r) => t.nodes.get(`${r.level}:${r.index}`)),
    );
    expect(frontierRoot(f)).toEqual(t.roots[45]);
    expect(
      codeOf(() =>
        frontierFromHashes(
          45,
          refs.map(() => undefined),
        ),
      ),
    ).toBe('LOG_CORRUPT');
    expect(frontierRoot(EMPTY_FRONTIER)).toEqual(emptyRoot());
  });

  it('right-border hashes are the MTH of every suffix range [start, size)', () => {
    const d = testLeaves(45);
    const t = new MapTree(d);
    const border = rightBorderHashes(t.frontier);
    expect(border.get(0)).toEqual(t.roots[45]);
    const fortyFour = new MapTree(d.slice(32));
    expect(border.get(32)).toEqual(fortyFour.roots[13]);
  });

  it('rejects leaf hashes that are not 32 bytes', () => {
    expect(codeOf(() => appendToFrontier(EMPTY_FRONTIER, [new Uint8Array(31)]))).toBe(
      'LOG_PROOF_INVALID',
    );
  });
});

describe('verifier input checks', () => {
  const t = new MapTree(testLeaves(9));
  const root = t.roots[9] as Uint8Array;
  const lh = leafHash(testLeaves(9)[3] as Uint8Array);
  const proof = t.inclusion(3, 9);

  it('codes: index, size, hash lengths, path length, root mismatch', () => {
    expect(codeOf(() => checkInclusion(3, 9, lh, proof, root))).toBeUndefined();
    expect(codeOf(() => checkInclusion(9, 9, lh, proof, root))).toBe('LOG_INDEX_OUT_OF_RANGE');
    expect(codeOf(() => checkInclusion(3, -1, lh, proof, root))).toBe('LOG_SIZE_INVALID');
    expect(codeOf(() => checkInclusion(3, 2 ** 53, lh, proof, root))).toBe('LOG_SIZE_INVALID');
    expect(codeOf(() => checkInclusion(3, 9, lh.subarray(1), proof, root))).toBe(
      'LOG_PROOF_INVALID',
    );
    expect(codeOf(() => checkInclusion(3, 9, lh, proof, root.subarray(1)))).toBe(
      'LOG_PROOF_INVALID',
    );
    expect(
      codeOf(() => checkInclusion(3, 9, lh, [...proof.slice(0, -1), new Uint8Array(33)], root)),
    ).toBe('LOG_PROOF_INVALID');
    expect(codeOf(() => checkInclusion(3, 9, lh, [...proof, h32], root))).toBe('LOG_PROOF_INVALID');
    expect(codeOf(() => checkInclusion(3, 9, lh, proof.slice(1), root))).toBe('LOG_PROOF_INVALID');
    expect(codeOf(() => checkInclusion(3, 9, h32, proof, root))).toBe('LOG_ROOT_MISMATCH');
    expect(codeOf(() => rootFromInclusionProof(0, 1, h32, new Array(65).fill(h32)))).toBe(
      'LOG_PROOF_INVALID',
    );
  });

  it('consistency codes', () => {
    const p = t.consistency(5, 9);
    const r5 = t.roots[5] as Uint8Array;
    expect(codeOf(() => checkConsistency(5, 9, p, r5, root))).toBeUndefined();
    expect(codeOf(() => checkConsistency(0, 9, [], emptyRoot(), root))).toBe('LOG_SIZE_INVALID');
    expect(codeOf(() => checkConsistency(10, 9, p, r5, root))).toBe('LOG_SIZE_INVALID');
    expect(codeOf(() => checkConsistency(5, 9, [], r5, root))).toBe('LOG_PROOF_INVALID');
    expect(codeOf(() => checkConsistency(5, 9, p, r5.subarray(2), root))).toBe('LOG_PROOF_INVALID');
    expect(codeOf(() => checkConsistency(5, 9, p, root, root))).toBe('LOG_ROOT_MISMATCH');
    expect(codeOf(() => checkConsistency(9, 9, [], root, root))).toBeUndefined();
    expect(codeOf(() => checkConsistency(9, 9, [root], root, root))).toBe('LOG_PROOF_INVALID');
  });
});
