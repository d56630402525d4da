/**
 * @module core/merkle/verify
 * Proof verification exactly as RFC 9162 §2.1.3.2 (inclusion) and §2.1.4.2 (consistency),
 * with strict input checks. Each check has a throwing form (`check…`, coded errors) and a
 * boolean form (`verify…`) that never throws on attacker-controlled input.
 *
 * Edge-case policy (transparency-dev/merkle, the source of our test vectors):
 * - inclusion: every hash (leaf, root, proof elements) must be 32 bytes; leafIndex < treeSize.
 * - consistency: size1 = 0 is always rejected (a proof from the empty tree proves nothing);
 *   size1 = size2 > 0 is accepted iff the proof is empty and root1 equals root2 byte for byte
 *   (no length check then: it is a plain equality of the two claims).
 * Indices are safe integers, so the bit walks use division instead of 32-bit shifts.
 */
import { bytesEqual } from '../bytes.js';
import { type ErrorCode, MemwardenError } from '../errors.js';
import { type ChainHash, HASH_SIZE, chainBytes, chainNode } from './hash.js';

/** Proofs longer than this cannot belong to a tree of < 2^64 leaves. */
const MAX_PROOF_LENGTH = 64;

function fail(code: ErrorCode, message: string): never {
  throw new MemwardenError(code, message);
}

function checkHash(h: Uint8Array, what: string): void {
  if (!(h instanceof Uint8Array) || h.length !== HASH_SIZE)
    fail('LOG_PROOF_INVALID', `${what} must be ${HASH_SIZE} bytes`);
}

function checkProof(proof: readonly Uint8Array[]): void {
  if (!Array.isArray(proof) || proof.length > MAX_PROOF_LENGTH)
    fail('LOG_PROOF_INVALID', 'proof has too many elements');
  for (const p of proof) checkHash(p, 'proof element');
}

function checkSize(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 0)
    fail('LOG_SIZE_INVALID', `${what} must be a non-negative integer`);
}

const odd = (x: number): boolean => x % 2 === 1;
const half = (x: number): number => Math.floor(x / 2);
/** Exact for safe integers: log2 of a power of two is an exact double. */
const isPowerOfTwo = (x: number): boolean =>
  x <= 0x7fffffff ? (x & (x - 1)) === 0 : Math.pow(2, Math.floor(Math.log2(x))) === x;

/**
 * The root implied by an inclusion proof (RFC 9162 §2.1.3.2 steps 1–6). Throws
 * LOG_INDEX_OUT_OF_RANGE, LOG_SIZE_INVALID or LOG_PROOF_INVALID on malformed input.
 */
export function rootFromInclusionProof(
  leafIndex: number,
  treeSize: number,
  leafHash: Uint8Array,
  proof: readonly Uint8Array[],
): Uint8Array {
  checkSize(treeSize, 'treeSize');
  checkSize(leafIndex, 'leafIndex');
  // Step 1: leaf_index ≥ tree_size fails.
  if (leafIndex >= treeSize) fail('LOG_INDEX_OUT_OF_RANGE', 'leaf index outside the tree');
  checkHash(leafHash, 'leaf hash');
  checkProof(proof);
  // Step 2: fn = leaf_index, sn = tree_size - 1; step 3: r = hash.
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r: ChainHash = leafHash;
  // Step 4: walk the path.
  for (const p of proof) {
    if (sn === 0) fail('LOG_PROOF_INVALID', 'proof longer than the path');
    if (odd(fn) || fn === sn) {
      r = chainNode(p, r);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = chainNode(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  // Step 5: sn must be 0 once the path is consumed.
  if (sn !== 0) fail('LOG_PROOF_INVALID', 'proof shorter than the path');
  return chainBytes(r);
}

/** Throwing inclusion check: LOG_ROOT_MISMATCH when the proof is well-formed but wrong. */
export function checkInclusion(
  leafIndex: number,
  treeSize: number,
  leafHash: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): void {
  checkHash(root, 'root');
  const r = rootFromInclusionProof(leafIndex, treeSize, leafHash, proof);
  // Step 6: compare r with root.
  if (!bytesEqual(r, root)) fail('LOG_ROOT_MISMATCH', 'inclusion proof does not lead to the root');
}

/** RFC 9162 §2.1.3.2 as a boolean; never throws. */
export function verifyInclusion(
  leafIndex: number,
  treeSize: number,
  leafHash: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  try {
    checkInclusion(leafIndex, treeSize, leafHash, proof, root);
    return true;
  } catch {
    return false;
  }
}

/**
 * Throwing consistency check (RFC 9162 §2.1.4.2): LOG_SIZE_INVALID for impossible sizes,
 * LOG_PROOF_INVALID for a malformed proof, LOG_ROOT_MISMATCH when it fails to reproduce a root.
 */
export function checkConsistency(
  size1: number,
  size2: number,
  proof: readonly Uint8Array[],
  root1: Uint8Array,
  root2: Uint8Array,
): void {
  checkSize(size1, 'size1');
  checkSize(size2, 'size2');
  if (size1 > size2) fail('LOG_SIZE_INVALID', 'size1 exceeds size2');
  if (size1 === 0) fail('LOG_SIZE_INVALID', 'consistency from the empty tree is meaningless');
  if (!Array.isArray(proof)) fail('LOG_PROOF_INVALID', 'proof must be an array');
  if (size1 === size2) {
    // Not defined by RFC 9162 (0 < m < n); transparency-dev policy, see the module header.
    if (proof.length !== 0) fail('LOG_PROOF_INVALID', 'equal sizes need an empty proof');
    if (!bytesEqual(root1, root2)) fail('LOG_ROOT_MISMATCH', 'equal sizes with different roots');
    return;
  }
  checkHash(root1, 'root1');
  checkHash(root2, 'root2');
  checkProof(proof);
  // Step 1: an empty path fails.
  if (proof.length === 0) fail('LOG_PROOF_INVALID', 'empty consistency proof');
  // Step 2: if first is an exact power of 2, prepend first_hash.
  const path: readonly Uint8Array[] = isPowerOfTwo(size1) ? [root1, ...proof] : proof;
  // Step 3.
  let fn = size1 - 1;
  let sn = size2 - 1;
  // Step 4: strip the common low one-bits.
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  // Step 5.
  let fr: ChainHash = path[0] as Uint8Array;
  let sr: ChainHash = fr;
  // Step 6.
  for (let i = 1; i < path.length; i++) {
    const c = path[i] as Uint8Array;
    if (sn === 0) fail('LOG_PROOF_INVALID', 'proof longer than the path');
    if (odd(fn) || fn === sn) {
      fr = chainNode(c, fr);
      sr = chainNode(c, sr);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = chainNode(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  // Step 7.
  if (sn !== 0) fail('LOG_PROOF_INVALID', 'proof shorter than the path');
  if (!bytesEqual(chainBytes(fr), root1) || !bytesEqual(chainBytes(sr), root2))
    fail('LOG_ROOT_MISMATCH', 'consistency proof does not lead to the roots');
}

/** RFC 9162 §2.1.4.2 as a boolean; never throws. */
export function verifyConsistency(
  size1: number,
  size2: number,
  proof: readonly Uint8Array[],
  root1: Uint8Array,
  root2: Uint8Array,
): boolean {
  try {
    checkConsistency(size1, size2, proof, root1, root2);
    return true;
  } catch {
    return false;
  }
}
