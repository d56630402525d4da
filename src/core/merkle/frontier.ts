/**
 * @module core/merkle/frontier
 * The frontier (compact range [0, size)) of an append-only Merkle tree: the roots of the
 * perfect subtrees of the binary decomposition of `size`, left to right, largest first. It is
 * all an appender needs: a new leaf becomes a level-0 subtree, and equal-sized neighbours
 * merge (RFC 9162 §2.1.1 on perfect subtrees) — each merge completes a node that will never
 * change again, which is exactly what a log stores.
 */
import { MemwardenError } from '../errors.js';
import { type ChainHash, EMPTY_ROOT, HASH_SIZE, chainBytes, chainNode, nodeHash } from './hash.js';
import { decomposeRange, pow2 } from './plan.js';

/** A perfect subtree hash: (level, index) covers leaves [index·2^level, (index+1)·2^level). */
export interface MerkleNode {
  readonly level: number;
  readonly index: number;
  readonly hash: Uint8Array;
}

/** The compact range [0, size): perfect subtree roots, left to right, strictly decreasing level. */
export interface Frontier {
  readonly size: number;
  readonly nodes: readonly MerkleNode[];
}

/** The frontier of the empty tree. */
export const EMPTY_FRONTIER: Frontier = Object.freeze({
  size: 0,
  nodes: Object.freeze([]) as readonly MerkleNode[],
});

/**
 * Build a frontier from the hashes of `frontierRefs(size)` (as read from storage). Throws
 * LOG_CORRUPT if a node is missing or malformed.
 */
export function frontierFromHashes(
  size: number,
  hashes: readonly (Uint8Array | undefined)[],
): Frontier {
  const refs = decomposeRange(0, size);
  if (hashes.length !== refs.length)
    throw new MemwardenError('LOG_CORRUPT', 'frontier node count mismatch');
  const nodes = refs.map((r, i) => {
    const h = hashes[i];
    if (h === undefined || h.length !== HASH_SIZE) {
      throw new MemwardenError('LOG_CORRUPT', 'frontier node missing from the store', {
        details: { ...r },
      });
    }
    return { level: r.level, index: r.index, hash: h };
  });
  return { size, nodes };
}

/** The node addresses of the frontier of `size` (what to read to resume appending). */
export function frontierRefs(size: number): { level: number; index: number }[] {
  return decomposeRange(0, size);
}

/** Result of appending leaves to a frontier. */
export interface FrontierAppend {
  readonly frontier: Frontier;
  /** Every node completed by the append: one level-0 node per leaf, then each merge. */
  readonly completed: MerkleNode[];
}

/**
 * Append leaf hashes (already RFC 6962 leaf-hashed) to a frontier. Pure: the input frontier
 * is not modified. Costs one node hash per completed interior node (amortised < 1 per leaf).
 */
export function appendToFrontier(
  frontier: Frontier,
  leafHashes: readonly Uint8Array[],
): FrontierAppend {
  const stack: MerkleNode[] = frontier.nodes.slice();
  const completed: MerkleNode[] = [];
  let size = frontier.size;
  for (const h of leafHashes) {
    if (h.length !== HASH_SIZE)
      throw new MemwardenError('LOG_PROOF_INVALID', 'leaf hash must be 32 bytes');
    let node: MerkleNode = { level: 0, index: size, hash: h };
    completed.push(node);
    // Merge while the last subtree has the same level: the binary carry of size + 1.
    for (;;) {
      const top = stack[stack.length - 1];
      if (top === undefined || top.level !== node.level) break;
      stack.pop();
      node = { level: node.level + 1, index: top.index / 2, hash: nodeHash(top.hash, node.hash) };
      completed.push(node);
    }
    stack.push(node);
    size += 1;
  }
  return { frontier: { size, nodes: stack }, completed };
}

/**
 * MTH of the whole tree from its frontier: the right fold of the subtree roots
 * (RFC 9162 §2.1.1); SHA-256("") for the empty tree.
 */
export function frontierRoot(frontier: Frontier): Uint8Array {
  const n = frontier.nodes;
  if (n.length === 0) return EMPTY_ROOT.slice();
  let h: ChainHash = (n[n.length - 1] as MerkleNode).hash;
  for (let i = n.length - 2; i >= 0; i--) h = chainNode((n[i] as MerkleNode).hash, h);
  return chainBytes(h);
}

/**
 * The right-border hashes of the tree at the frontier's size: `suffix[i]` = MTH of leaves
 * [start of frontier node i, size), i.e. the fold of nodes i…last. These are exactly the
 * non-perfect ranges a proof at this size can need; `suffix[0]` is the root.
 */
export function rightBorderHashes(frontier: Frontier): Map<number, Uint8Array> {
  const out = new Map<number, Uint8Array>();
  const n = frontier.nodes;
  let h: Uint8Array | undefined;
  for (let i = n.length - 1; i >= 0; i--) {
    const node = n[i] as MerkleNode;
    h = h === undefined ? node.hash : nodeHash(node.hash, h);
    out.set(node.index * pow2(node.level), h);
  }
  return out;
}
