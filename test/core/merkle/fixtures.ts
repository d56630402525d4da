/**
 * @module test/core/merkle/fixtures
 * Helpers shared by the Merkle tests: the vendored RFC 6962 vectors and a synchronous
 * Map-backed tree built with the optimised frontier, with plan-driven proofs.
 */
import { readFileSync } from 'node:fs';
import { fromHex } from '../../../src/core/bytes.js';
import {
  appendToFrontier,
  EMPTY_FRONTIER,
  frontierRoot,
  type Frontier,
} from '../../../src/core/merkle/frontier.js';
import { leafHash } from '../../../src/core/merkle/hash.js';
import {
  assembleProof,
  consistencyPlan,
  inclusionPlan,
  planRefs,
  type RangePlan,
} from '../../../src/core/merkle/plan.js';

export const VECTORS_PATH = new URL(
  '../../vectors/rfc6962/vectors.json',
  import.meta.url,
);

export interface InclusionCase {
  id?: string;
  treeSize: number;
  leafIndex: number;
  leafHash: string;
  proof: string[];
  root: string;
  valid: boolean;
  desc?: string;
  policyDependent?: boolean;
}
export interface ConsistencyCase {
  id?: string;
  size1: number;
  size2: number;
  proof: string[];
  root1: string;
  root2: string;
  valid: boolean;
  desc?: string;
  policyDependent?: boolean;
}
export interface Vectors {
  hasherVectors: {
    desc: string;
    input?: null;
    leafHex?: string;
    leftHex?: string;
    rightHex?: string;
    want: string;
  }[];
  leaves: string[];
  leafHashes: string[];
  nodeHashes: { levels: string[][] };
  roots: { treeSize: number; root: string }[];
  inclusion: InclusionCase[];
  consistency: ConsistencyCase[];
  rfc6962Section2_1_3Example: {
    labels: Record<string, string>;
    inclusion: (InclusionCase & { proofLabels: string[] })[];
    consistency: (ConsistencyCase & { proofLabels: string[] })[];
  };
  derived: { inclusion: InclusionCase[]; consistency: ConsistencyCase[] };
}

export const vectors = JSON.parse(readFileSync(VECTORS_PATH, 'utf8')) as Vectors;
export const hexes = (a: readonly string[]): Uint8Array[] => a.map(fromHex);

/** A tree held in a Map of perfect subtrees, grown with the optimised frontier. */
export class MapTree {
  frontier: Frontier = EMPTY_FRONTIER;
  readonly nodes = new Map<string, Uint8Array>();
  /** Roots at every size, recorded as the tree grows. */
  readonly roots: Uint8Array[] = [frontierRoot(EMPTY_FRONTIER)];

  constructor(data: readonly Uint8Array[] = []) {
    for (const d of data) this.push(d);
  }

  push(d: Uint8Array): void {
    const r = appendToFrontier(this.frontier, [leafHash(d)]);
    for (const n of r.completed) this.nodes.set(`${n.level}:${n.index}`, n.hash);
    this.frontier = r.frontier;
    this.roots.push(frontierRoot(this.frontier));
  }

  private resolve(plan: RangePlan[]): Uint8Array[] {
    return assembleProof(
      plan,
      planRefs(plan).map((r) => this.nodes.get(`${r.level}:${r.index}`)),
    );
  }

  inclusion(index: number, size: number): Uint8Array[] {
    return this.resolve(inclusionPlan(index, size));
  }

  consistency(m: number, n: number): Uint8Array[] {
    return this.resolve(consistencyPlan(m, n));
  }
}

export function testLeaves(n: number, seed = 0): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    const len = (i * 7 + seed) % 13;
    const d = new Uint8Array(len);
    for (let j = 0; j < len; j++) d[j] = (i * 31 + j * 17 + seed) & 0xff;
    out.push(d);
  }
  return out;
}
