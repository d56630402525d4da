/**
 * RFC 6962 / RFC 9162 vectors from transparency-dev/merkle (test/vectors/rfc6962, see
 * SOURCE.md): hasher vectors, roots 0..8, every inclusion and consistency probe including
 * all must-reject mutations, the RFC 6962 §2.1.3 worked example and the derived proofs.
 * Policy-dependent cases follow transparency-dev's policy (see core/merkle/verify.ts).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../../src/core/bytes.js';
import { isMemwardenError } from '../../../src/core/errors.js';
import { emptyRoot, leafHash, leafHashChain, nodeHash } from '../../../src/core/merkle/hash.js';
import {
  checkConsistency,
  checkInclusion,
  verifyConsistency,
  verifyInclusion,
} from '../../../src/core/merkle/verify.js';
import { MapTree, hexes, vectors } from './fixtures.js';
import { mth } from './naive.js';

const leaves = hexes(vectors.leaves);

describe('RFC 6962 hasher vectors', () => {
  it('has 4 hasher vectors', () => expect(vectors.hasherVectors).toHaveLength(4));
  for (const v of vectors.hasherVectors) {
    it(v.desc, () => {
      let got: Uint8Array;
      if (v.leftHex !== undefined && v.rightHex !== undefined)
        got = nodeHash(fromHex(v.leftHex), fromHex(v.rightHex));
      else if (v.leafHex !== undefined) got = leafHash(fromHex(v.leafHex));
      else got = emptyRoot();
      expect(toHex(got)).toBe(v.want);
    });
  }

  it('leaf hashes and every perfect-subtree hash of the 8-leaf tree', () => {
    expect(leaves.map((l) => toHex(leafHash(l)))).toEqual(vectors.leafHashes);
    // The chain-string form (first verification's leaf check) is the same hash, byte for byte.
    const latin1 = (l: Uint8Array) => Buffer.from(leafHashChain(l), 'latin1').toString('hex');
    expect(leaves.map(latin1)).toEqual(vectors.leafHashes);
    const t = new MapTree(leaves);
    vectors.nodeHashes.levels.forEach((level, h) =>
      level.forEach((want, i) => expect(toHex(t.nodes.get(`${h}:${i}`) as Uint8Array)).toBe(want)),
    );
  });

  it('leafHash and leafHashChain = SHA-256(0x00 ‖ d) for sizes across the reused scratch', () => {
    for (const n of [0, 1, 80, 255, 256, 257, 5000, 65_535, 65_536, 70_000, 80, 3]) {
      const d = new Uint8Array(n).map((_, i) => (i * 31 + n) & 0xff);
      const want = createHash('sha256').update(Uint8Array.of(0)).update(d).digest('hex');
      expect(toHex(leafHash(d))).toBe(want);
      expect(Buffer.from(leafHashChain(d), 'latin1').toString('hex')).toBe(want);
    }
  });

  it('roots for sizes 0..8 (frontier and naive MTH)', () => {
    const t = new MapTree(leaves);
    expect(vectors.roots).toHaveLength(9);
    for (const { treeSize, root } of vectors.roots) {
      expect(toHex(t.roots[treeSize] as Uint8Array)).toBe(root);
      expect(toHex(mth(leaves.slice(0, treeSize)))).toBe(root);
    }
  });
});

describe('inclusion probes (transparency-dev testdata)', () => {
  it('covers all 98 cases, 6 valid', () => {
    expect(vectors.inclusion).toHaveLength(98);
    expect(vectors.inclusion.filter((c) => c.valid)).toHaveLength(6);
  });
  for (const c of vectors.inclusion) {
    it(`${c.id} → ${c.valid ? 'accept' : 'reject'}${c.policyDependent ? ' (policy)' : ''}`, () => {
      const args = [
        c.leafIndex,
        c.treeSize,
        fromHex(c.leafHash),
        hexes(c.proof),
        fromHex(c.root),
      ] as const;
      expect(verifyInclusion(...args)).toBe(c.valid);
      if (!c.valid) {
        let err: unknown;
        try {
          checkInclusion(...args);
        } catch (e) {
          err = e;
        }
        expect(isMemwardenError(err)).toBe(true);
      }
    });
  }
});

describe('consistency probes (transparency-dev testdata)', () => {
  it('covers all 98 cases, 6 valid', () => {
    expect(vectors.consistency).toHaveLength(98);
    expect(vectors.consistency.filter((c) => c.valid)).toHaveLength(6);
  });
  for (const c of vectors.consistency) {
    it(`${c.id} → ${c.valid ? 'accept' : 'reject'}${c.policyDependent ? ' (policy)' : ''}`, () => {
      const args = [c.size1, c.size2, hexes(c.proof), fromHex(c.root1), fromHex(c.root2)] as const;
      expect(verifyConsistency(...args)).toBe(c.valid);
      if (!c.valid) expect(() => checkConsistency(...args)).toThrow();
    });
  }
});

describe('RFC 6962 §2.1.3 worked example (7 leaves)', () => {
  const ex = vectors.rfc6962Section2_1_3Example;
  const t = new MapTree(leaves.slice(0, 7));
  it('root is the example hash', () =>
    expect(toHex(t.roots[7] as Uint8Array)).toBe(ex.labels['hash']));
  for (const c of ex.inclusion) {
    it(`audit path for d${c.leafIndex} is [${c.proofLabels.join(', ')}]`, () => {
      const proof = t.inclusion(c.leafIndex, c.treeSize);
      expect(proof.map(toHex)).toEqual(c.proofLabels.map((l) => ex.labels[l]));
      expect(
        verifyInclusion(c.leafIndex, c.treeSize, fromHex(c.leafHash), proof, fromHex(c.root)),
      ).toBe(true);
    });
  }
  for (const c of ex.consistency) {
    it(`PROOF(${c.size1}, D[${c.size2}]) = [${c.proofLabels.join(', ')}]`, () => {
      const proof = t.consistency(c.size1, c.size2);
      expect(proof.map(toHex)).toEqual(c.proofLabels.map((l) => ex.labels[l]));
      expect(verifyConsistency(c.size1, c.size2, proof, fromHex(c.root1), fromHex(c.root2))).toBe(
        true,
      );
    });
  }
});

describe('derived proofs (n ≤ 8) and the planner reproduces every valid external proof', () => {
  const t = new MapTree(leaves);
  it('36 inclusion proofs: planner output equals the vector and verifies', () => {
    expect(vectors.derived.inclusion).toHaveLength(36);
    for (const c of vectors.derived.inclusion) {
      expect(t.inclusion(c.leafIndex, c.treeSize).map(toHex)).toEqual(c.proof);
      expect(
        verifyInclusion(
          c.leafIndex,
          c.treeSize,
          fromHex(c.leafHash),
          hexes(c.proof),
          fromHex(c.root),
        ),
      ).toBe(true);
    }
  });
  it('28 consistency proofs: planner output equals the vector and verifies', () => {
    expect(vectors.derived.consistency).toHaveLength(28);
    for (const c of vectors.derived.consistency) {
      expect(t.consistency(c.size1, c.size2).map(toHex)).toEqual(c.proof);
      expect(
        verifyConsistency(c.size1, c.size2, hexes(c.proof), fromHex(c.root1), fromHex(c.root2)),
      ).toBe(true);
    }
  });
  it('external happy paths are reproduced by the planner', () => {
    for (const c of vectors.inclusion.filter((x) => x.valid)) {
      expect(t.inclusion(c.leafIndex, c.treeSize).map(toHex)).toEqual(c.proof);
    }
    for (const c of vectors.consistency.filter((x) => x.valid && x.size1 < x.size2)) {
      expect(t.consistency(c.size1, c.size2).map(toHex)).toEqual(c.proof);
    }
  });
});
