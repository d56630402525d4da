/**
 * @module core/merkle/plan
 * Pure proof planning. A log stores only perfect subtrees: node (level, index) covers leaves
 * [index·2^level, (index+1)·2^level), level 0 being the leaf hashes. Every element of an
 * inclusion or consistency proof is MTH of some range [start, end) of the RFC 6962 tree; a
 * plan names that range and the perfect subtrees it decomposes into (left to right, largest
 * first). A perfect range is one stored node; a non-perfect range can only touch the right
 * border of the tree and its hash is the right fold of its decomposition (RFC 9162 §2.1.1:
 * MTH(D[n]) = HASH(0x01 ‖ MTH(D[0:k]) ‖ MTH(D[k:n])) with k the largest power of two < n).
 *
 * Plans cost O(log n) integer work and no hashing; assembling a proof reads O(log n) stored
 * nodes and never recomputes the tree. Sizes and indices are safe integers (< 2^53), so the
 * arithmetic avoids 32-bit bitwise operators.
 */
import { MemwardenError } from '../errors.js';
import { type ChainHash, chainBytes, chainNode } from './hash.js';

/** Address of a stored perfect subtree. */
export interface NodeRef {
  readonly level: number;
  readonly index: number;
}

/** One proof element: MTH(D[start:end]) computed from `nodes` (perfect, left to right). */
export interface RangePlan {
  readonly start: number;
  readonly end: number;
  readonly nodes: readonly NodeRef[];
}

const TWO_32 = 2 ** 32;
const INT31 = 0x7fffffff;
/**
 * POW2[i] = 2^i for i ≤ 53. A table, because `2 ** i` goes through a slow runtime path on
 * Node 20 (~150 ns, measured) and plans compute it per proof element.
 */
const POW2: readonly number[] = Array.from({ length: 54 }, (_, i) => Math.pow(2, i));

/** 2^level for a level in [0, 53]. */
export function pow2(level: number): number {
  return POW2[level] as number;
}

/** floor(log2(x)) for a safe integer x ≥ 1. */
export function floorLog2(x: number): number {
  if (x < TWO_32) return 31 - Math.clz32(x);
  return 63 - Math.clz32(Math.floor(x / TWO_32));
}

/** Number of trailing zero bits of a safe integer x ≥ 1. */
function trailingZeros(x: number): number {
  if (x <= INT31) return 31 - Math.clz32(x & -x);
  const low = x % TWO_32;
  if (low !== 0) return 31 - Math.clz32(low & -low);
  return 32 + trailingZeros(Math.floor(x / TWO_32));
}

/** The largest power of two strictly less than n, for n ≥ 2 (RFC 9162 §2.1.1, "k"). */
export function splitPoint(n: number): number {
  return pow2(floorLog2(n - 1));
}

/** Throws LOG_SIZE_INVALID unless `n` is a safe integer ≥ `min`. */
export function assertSize(n: number, min: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < min) {
    throw new MemwardenError('LOG_SIZE_INVALID', `${what} must be an integer ≥ ${min}`, {
      details: { [what]: n },
    });
  }
}

/**
 * The perfect subtrees exactly covering leaves [start, end), left to right: at each step the
 * largest aligned power-of-two block that fits. For ranges of the RFC 6962 tree (and for
 * [0, n)) this is the left-heavy split the MTH recursion uses.
 */
export function decomposeRange(start: number, end: number): NodeRef[] {
  const out: NodeRef[] = [];
  let a = start;
  while (a < end) {
    let level = floorLog2(end - a);
    if (a !== 0) level = Math.min(level, trailingZeros(a));
    const width = pow2(level);
    out.push({ level, index: a / width });
    a += width;
  }
  return out;
}

function range(start: number, end: number): RangePlan {
  return { start, end, nodes: decomposeRange(start, end) };
}

/** A range known to be one perfect subtree of 2^level leaves. */
function perfect(start: number, level: number): RangePlan {
  return { start, end: start + pow2(level), nodes: [{ level, index: start / pow2(level) }] };
}

/** The perfect subtrees whose fold is MTH(D[0:size]); empty for the empty tree. */
export function rootPlan(size: number): RangePlan {
  assertSize(size, 0, 'size');
  return range(0, size);
}

/**
 * The audit path PATH(m, D[n]) as ranges, bottom-up (the order of the proof), following the
 * recursion of RFC 9162 §2.1.3.1 iteratively from the top.
 */
export function inclusionPlan(leafIndex: number, treeSize: number): RangePlan[] {
  assertSize(treeSize, 1, 'treeSize');
  if (!Number.isSafeInteger(leafIndex) || leafIndex < 0 || leafIndex >= treeSize) {
    throw new MemwardenError('LOG_INDEX_OUT_OF_RANGE', 'leaf index outside the tree', {
      details: { leafIndex, treeSize },
    });
  }
  const topDown: RangePlan[] = [];
  let lo = 0;
  let hi = treeSize;
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    // RFC 9162 §2.1.3.1: m < k → PATH(m, D[0:k]) : MTH(D[k:n]); else PATH(m-k, D[k:n]) : MTH(D[0:k])
    if (leafIndex - lo < k) {
      topDown.push(range(lo + k, hi));
      hi = lo + k;
    } else {
      // D[lo:lo+k] is a perfect subtree: k = 2^level and lo is a multiple of k.
      topDown.push(perfect(lo, floorLog2(k)));
      lo += k;
    }
  }
  return topDown.reverse();
}

/**
 * The consistency proof PROOF(m, D[n]) as ranges, in proof order (RFC 9162 §2.1.4.1,
 * SUBPROOF with b = true). Empty when m = n. m = 0 is rejected: a proof from the empty tree
 * carries no information, and verifiers following transparency-dev reject it.
 */
export function consistencyPlan(size1: number, size2: number): RangePlan[] {
  assertSize(size1, 1, 'size1');
  assertSize(size2, 1, 'size2');
  if (size1 > size2) {
    throw new MemwardenError('LOG_SIZE_INVALID', 'size1 must not exceed size2', {
      details: { size1, size2 },
    });
  }
  if (size1 === size2) return [];
  const topDown: RangePlan[] = [];
  let lo = 0;
  let hi = size2;
  let m = size1;
  let b = true;
  // SUBPROOF(m, D[lo:hi], b) until m equals the subtree size.
  while (m !== hi - lo) {
    const k = splitPoint(hi - lo);
    if (m <= k) {
      // m ≤ k: SUBPROOF(m, D[0:k], b) : MTH(D[k:n])
      topDown.push(range(lo + k, hi));
      hi = lo + k;
    } else {
      // m > k: SUBPROOF(m - k, D[k:n], false) : MTH(D[0:k]) — a perfect subtree
      topDown.push(perfect(lo, floorLog2(k)));
      lo += k;
      m -= k;
      b = false;
    }
  }
  // m = n: SUBPROOF(m, D[m], true) = {}, SUBPROOF(m, D[m], false) = {MTH(D[m])}.
  const out: RangePlan[] = b ? [] : [range(lo, hi)];
  for (let i = topDown.length - 1; i >= 0; i--) out.push(topDown[i] as RangePlan);
  return out;
}

/** True when the range is one perfect subtree (a single stored node). */
export function isPerfect(plan: RangePlan): boolean {
  return plan.nodes.length === 1;
}

/**
 * MTH of a range from its perfect subtrees (left to right): the right fold
 * H(n0, H(n1, … H(n_{k-2}, n_{k-1}))) — RFC 9162 §2.1.1 applied along the right border.
 */
export function foldRight(hashes: readonly Uint8Array[], from = 0, to = hashes.length): Uint8Array {
  if (to <= from) throw new MemwardenError('LOG_CORRUPT', 'cannot fold an empty range');
  let h: ChainHash = hashes[to - 1] as Uint8Array;
  for (let i = to - 2; i >= from; i--) h = chainNode(hashes[i] as Uint8Array, h);
  return chainBytes(h);
}

/** Every stored node a plan reads, flattened in plan order (for one batched lookup). */
export function planRefs(plan: readonly RangePlan[]): NodeRef[] {
  const out: NodeRef[] = [];
  for (const el of plan) for (const r of el.nodes) out.push(r);
  return out;
}

/**
 * Assemble a proof from a plan and the hashes of `planRefs(plan)` (same order). A missing
 * node means the store does not hold the tree it claims: LOG_CORRUPT.
 */
export function assembleProof(
  plan: readonly RangePlan[],
  hashes: readonly (Uint8Array | undefined)[],
): Uint8Array[] {
  const proof: Uint8Array[] = [];
  let o = 0;
  for (const el of plan) {
    const n = el.nodes.length;
    for (let i = o; i < o + n; i++) {
      if (hashes[i] === undefined) {
        throw new MemwardenError('LOG_CORRUPT', 'a planned node is missing from the store', {
          details: { start: el.start, end: el.end },
        });
      }
    }
    proof.push(foldRight(hashes as readonly Uint8Array[], o, o + n));
    o += n;
  }
  return proof;
}
