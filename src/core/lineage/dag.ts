/**
 * @module core/lineage/dag
 * The derivation DAG of MemLineage §3.5: V = memory entries, an edge (p, c) iff p was in the
 * model's context when c was written, weighted by an attribution algorithm.
 *
 * Cycles are impossible by construction: a node can only name parents that are already in
 * the DAG and strictly older (by insertion and, when timestamps are given, by `ts`), so every
 * edge points from an earlier to a later node. Self-edges are `LINEAGE_CYCLE`; re-adding an
 * id (which could otherwise rewire the graph backwards) is `LINEAGE_CYCLE` too; unknown or
 * duplicate parents, bad weights and non-increasing timestamps are `LINEAGE_INVALID`.
 *
 * Labels are computed once, at insertion, with Equation (1) over the parents' labels
 * (`propagation.ts`); because parents never change afterwards, a node's label is final.
 */
import { MemwardenError } from '../errors.js';
import { LIMITS } from '../entry/types.js';
import { type SourceTier, type TrustLabel, isSourceTier } from '../trust.js';
import {
  type LineageOptions,
  type ParentEdge,
  isStrongEdge,
  propagate,
  thresholdFor,
  validateEdges,
  validateLineageOptions,
} from './propagation.js';

/** A node to add: the lineage-relevant fields of an entry (`EntryBody` fits). */
export interface DagNodeInput {
  readonly id: string;
  readonly tier: SourceTier;
  /** Parent ids, already in the DAG. */
  readonly parents?: readonly string[];
  /** One attribution weight in [0, 1] per parent. */
  readonly weights?: readonly number[];
  /** Per parent: declared explicitly by the writer (§6.6 zero-threshold knob). */
  readonly explicit?: readonly boolean[];
  /** Write time (any monotone unit); when given, every parent's must be strictly smaller. */
  readonly ts?: bigint | number;
  /** Derived by the model (default: has parents). See `ChildFacts.derived`. */
  readonly derived?: boolean;
  /** Multi-hop summary (§6.6 lower τ). */
  readonly multiHop?: boolean;
}

/** A node as stored: its edges, which of them are strong, and its propagated label. */
export interface DagNode {
  readonly id: string;
  readonly tier: SourceTier;
  readonly parents: readonly string[];
  readonly weights: readonly number[];
  /** `strong[i]` ⇔ the edge from `parents[i]` passes its threshold (w > τ). */
  readonly strong: readonly boolean[];
  readonly label: TrustLabel;
  readonly ts?: bigint | number;
  readonly derived: boolean;
}

/** The derivation DAG with propagated labels. */
export class LineageDag {
  readonly options: LineageOptions;
  readonly #nodes = new Map<string, DagNode>();

  constructor(options: LineageOptions) {
    this.options = validateLineageOptions(options);
  }

  get size(): number {
    return this.#nodes.size;
  }

  has(id: string): boolean {
    return this.#nodes.has(id);
  }

  get(id: string): DagNode | undefined {
    return this.#nodes.get(id);
  }

  /** Add a node; returns its propagated label. Throws `LINEAGE_CYCLE` / `LINEAGE_INVALID`. */
  add(input: DagNodeInput): TrustLabel {
    const { id } = input;
    if (typeof id !== 'string' || id.length === 0) throw new MemwardenError('LINEAGE_INVALID', 'node id required');
    if (!isSourceTier(input.tier)) throw new MemwardenError('LINEAGE_INVALID', 'unknown source tier');
    if (this.#nodes.has(id))
      throw new MemwardenError('LINEAGE_CYCLE', 'node already in the DAG; re-adding could close a cycle', {
        details: { id },
      });
    const parents = input.parents ?? [];
    const weights = input.weights ?? [];
    if (parents.length > LIMITS.parents) throw new MemwardenError('LINEAGE_INVALID', 'too many parents');
    if (weights.length !== parents.length)
      throw new MemwardenError('LINEAGE_INVALID', 'one weight per parent required');
    if (input.explicit !== undefined && input.explicit.length !== parents.length)
      throw new MemwardenError('LINEAGE_INVALID', 'one explicit flag per parent required');
    const seen = new Set<string>();
    const edges: ParentEdge[] = [];
    for (let i = 0; i < parents.length; i++) {
      const pid = parents[i] as string;
      if (pid === id) throw new MemwardenError('LINEAGE_CYCLE', 'an entry cannot be its own parent', { details: { id } });
      if (seen.has(pid)) throw new MemwardenError('LINEAGE_INVALID', 'duplicate parent', { details: { id, parent: pid } });
      seen.add(pid);
      const p = this.#nodes.get(pid);
      if (p === undefined)
        throw new MemwardenError('LINEAGE_INVALID', 'unknown parent (parents must already exist)', {
          details: { id, parent: pid },
        });
      if (input.ts !== undefined && p.ts !== undefined && !(p.ts < input.ts))
        throw new MemwardenError('LINEAGE_INVALID', 'parent is not strictly older than the child', {
          details: { id, parent: pid },
        });
      edges.push({ label: p.label, weight: weights[i] as number, explicit: input.explicit?.[i] === true });
    }
    validateEdges(edges);
    const facts = {
      tier: input.tier,
      ...(input.derived === undefined ? {} : { derived: input.derived }),
      ...(input.multiHop === undefined ? {} : { multiHop: input.multiHop }),
    };
    const label = propagate(facts, edges, this.options);
    const tau = thresholdFor(facts, this.options);
    const node: DagNode = {
      id,
      tier: input.tier,
      parents: Object.freeze([...parents]),
      weights: Object.freeze([...weights]),
      strong: Object.freeze(edges.map((e) => isStrongEdge(e, tau, this.options))),
      label,
      derived: input.derived ?? parents.length > 0,
      ...(input.ts === undefined ? {} : { ts: input.ts }),
    };
    this.#nodes.set(id, Object.freeze(node));
    return label;
  }

  /** The propagated label of `id` (Equation (1) with this DAG's options). `LINEAGE_INVALID` if unknown. */
  effectiveLabel(id: string): TrustLabel {
    return this.#require(id).label;
  }

  /** True when `id` has no parents at all (what the gate's parentless-sensitive-deny checks). */
  isParentless(id: string): boolean {
    return this.#require(id).parents.length === 0;
  }

  /**
   * Every ancestor reachable from `id` through strong edges only, nearest first (BFS), each
   * once, `id` itself excluded. Weak edges (w ≤ τ) do not carry trust (Equation (1)) and so
   * are not walked.
   */
  ancestors(id: string): string[] {
    const out: string[] = [];
    const seen = new Set<string>([id]);
    const queue: DagNode[] = [this.#require(id)];
    for (let q = 0; q < queue.length; q++) {
      const n = queue[q] as DagNode;
      for (let i = 0; i < n.parents.length; i++) {
        const pid = n.parents[i] as string;
        if (n.strong[i] !== true || seen.has(pid)) continue;
        seen.add(pid);
        out.push(pid);
        queue.push(this.#nodes.get(pid) as DagNode);
      }
    }
    return out;
  }

  #require(id: string): DagNode {
    const n = this.#nodes.get(id);
    if (n === undefined) throw new MemwardenError('LINEAGE_INVALID', 'unknown entry', { details: { id } });
    return n;
  }
}
