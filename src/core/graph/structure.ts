/**
 * @module core/graph/structure
 * The passage–entity graph the selectors run on, with write provenance on every edge
 * (AuthSelect §4.1, Definition 1: an edge's integrity is the integrity of the channel that wrote
 * it, never a function of its endpoints).
 *
 * `GraphIndex` is the mutable index; `view('full')` and `view('auth')` are immutable compressed
 * (CSR) snapshots over the same node numbering. The authenticated view G_A drops every edge whose
 * write authority is below A. Both views are maintained side by side and rebuilt lazily: a
 * structural write through an unauthenticated channel dirties only the full view, so the
 * authenticated snapshot a replay needs is usually already built (§5.1, "incremental").
 */
import { type Authority, authorityRank } from '../trust.js';

/** What a node stands for. */
export type NodeKind = 'passage' | 'entity';

/** True when a write of this authority belongs to the authenticated subgraph (A or T). */
export function isAuthenticated(a: Authority): boolean {
  return authorityRank(a) >= authorityRank('A');
}

/** An undirected weighted graph in compressed sparse row form (each edge stored both ways). */
export interface Csr {
  readonly n: number;
  /** Arcs of node v are `targets[offsets[v] .. offsets[v+1])`. */
  readonly offsets: Int32Array;
  readonly targets: Int32Array;
  readonly weights: Float64Array;
  /** Sum of incident weights per node (0: dangling). */
  readonly strength: Float64Array;
  /** 1 / strength, or 0 for a dangling node. */
  readonly invStrength: Float64Array;
  /**
   * Column-normalised arc weights for the gather form of M = W·D⁻¹: the arc at row v pointing to
   * u carries w(u,v) / strength(u), so (M·x)[v] = Σ_p nweights[p]·x[targets[p]].
   */
  readonly nweights: Float64Array;
}

/** One structural object as the index holds it. */
export interface EdgeRecord {
  readonly id: string;
  readonly a: number;
  readonly b: number;
  readonly weight: number;
  /** Integrity of the write (Definition 1). */
  readonly authority: Authority;
  /** `mention`, `relation`, `synonym`, `merge`, … (for audit and attacks, not for selection). */
  readonly kind: string;
}

/** Input of {@link GraphIndex.addEdge}: endpoints by node id. */
export interface EdgeInput {
  readonly id: string;
  readonly a: string;
  readonly b: string;
  readonly weight: number;
  readonly authority: Authority;
  readonly kind?: string;
}

/** Build a CSR over `n` nodes from edges (self-loops and non-positive weights are skipped). */
export function buildCsr(n: number, edges: Iterable<EdgeRecord>): Csr {
  const list: EdgeRecord[] = [];
  const deg = new Int32Array(n + 1);
  for (const e of edges) {
    if (e.a === e.b || !(e.weight > 0)) continue;
    list.push(e);
    deg[e.a + 1]! += 1;
    deg[e.b + 1]! += 1;
  }
  const offsets = new Int32Array(n + 1);
  for (let v = 0; v < n; v++) offsets[v + 1] = offsets[v]! + deg[v + 1]!;
  const m = offsets[n]!;
  const targets = new Int32Array(m);
  const weights = new Float64Array(m);
  const fill = offsets.slice(0, n);
  const strength = new Float64Array(n);
  for (const e of list) {
    let p = fill[e.a]!++;
    targets[p] = e.b;
    weights[p] = e.weight;
    p = fill[e.b]!++;
    targets[p] = e.a;
    weights[p] = e.weight;
    strength[e.a]! += e.weight;
    strength[e.b]! += e.weight;
  }
  const invStrength = new Float64Array(n);
  for (let v = 0; v < n; v++) invStrength[v] = strength[v]! > 0 ? 1 / strength[v]! : 0;
  const nweights = new Float64Array(m);
  for (let p = 0; p < m; p++) nweights[p] = weights[p]! * invStrength[targets[p]!]!;
  return { n, offsets, targets, weights, strength, invStrength, nweights };
}

/**
 * The mutable graph index: node ids ↔ dense numbers, edges with write provenance, and the two
 * lazily built views. Removing an edge leaves its slot dead (ids are never reused).
 */
export class GraphIndex {
  private readonly ids = new Map<string, number>();
  private readonly nodeIds: string[] = [];
  private readonly kinds: NodeKind[] = [];
  private readonly nodeAuth: Authority[] = [];
  private readonly edges = new Map<string, EdgeRecord>();
  /** Unauthenticated edges (the set S_U of §4.1), kept so replay and bounds touch only them. */
  private readonly unauth = new Map<string, EdgeRecord>();
  private fullView: Csr | undefined;
  private authView: Csr | undefined;
  /** Bumped on every mutation; the eval and caches key on it. */
  private version = 0;
  private taint: { readonly version: number; readonly nodes: Int32Array } | undefined;

  /** Add (or look up) a node; a node's own authority is that of the write that created it. */
  addNode(id: string, kind: NodeKind, authority: Authority): number {
    const have = this.ids.get(id);
    if (have !== undefined) return have;
    const i = this.nodeIds.length;
    this.ids.set(id, i);
    this.nodeIds.push(id);
    this.kinds.push(kind);
    this.nodeAuth.push(authority);
    // A new node changes n: both views must be rebuilt.
    this.fullView = undefined;
    this.authView = undefined;
    this.version++;
    return i;
  }

  /** Add an edge; both endpoints must exist. Re-adding an id replaces the edge. */
  addEdge(e: EdgeInput): void {
    const a = this.ids.get(e.a);
    const b = this.ids.get(e.b);
    if (a === undefined || b === undefined) throw new RangeError(`edge ${e.id}: unknown endpoint`);
    if (this.edges.has(e.id)) this.removeEdge(e.id);
    const rec: EdgeRecord = {
      id: e.id,
      a,
      b,
      weight: e.weight,
      authority: e.authority,
      kind: e.kind ?? 'relation',
    };
    this.edges.set(e.id, rec);
    this.touch(rec);
  }

  /** Remove an edge by id (no-op when absent). */
  removeEdge(id: string): boolean {
    const rec = this.edges.get(id);
    if (rec === undefined) return false;
    this.edges.delete(id);
    this.touch(rec);
    return true;
  }

  private touch(rec: EdgeRecord): void {
    this.version++;
    this.fullView = undefined;
    if (isAuthenticated(rec.authority)) this.authView = undefined;
    else if (this.unauth.has(rec.id)) this.unauth.delete(rec.id);
    else this.unauth.set(rec.id, rec);
  }

  /** The full graph G or the authenticated subgraph G_A (§4.1), built on first use. */
  view(which: 'full' | 'auth'): Csr {
    if (which === 'full') {
      this.fullView ??= buildCsr(this.nodeIds.length, this.edges.values());
      return this.fullView;
    }
    // Clean index: G_A = G, so the replay view is the full view (zero extra memory or work).
    if (this.unauth.size === 0) return this.view('full');
    this.authView ??= buildCsr(
      this.nodeIds.length,
      [...this.edges.values()].filter((e) => isAuthenticated(e.authority)),
    );
    return this.authView;
  }

  get size(): number {
    return this.nodeIds.length;
  }
  get edgeCount(): number {
    return this.edges.size;
  }
  get revision(): number {
    return this.version;
  }
  /** Number of unauthenticated structural writes present. */
  get unauthenticatedCount(): number {
    return this.unauth.size;
  }
  unauthenticatedEdges(): IterableIterator<EdgeRecord> {
    return this.unauth.values();
  }
  /**
   * Endpoints of the unauthenticated edges (the only nodes whose column of M differs between G
   * and G_A), ascending, computed once per revision.
   */
  taintedNodes(): Int32Array {
    if (this.taint?.version !== this.version) {
      const set = new Set<number>();
      for (const e of this.unauth.values()) {
        set.add(e.a);
        set.add(e.b);
      }
      this.taint = { version: this.version, nodes: Int32Array.from(set).sort() };
    }
    return this.taint.nodes;
  }
  allEdges(): IterableIterator<EdgeRecord> {
    return this.edges.values();
  }
  edge(id: string): EdgeRecord | undefined {
    return this.edges.get(id);
  }
  index(id: string): number | undefined {
    return this.ids.get(id);
  }
  id(i: number): string {
    const s = this.nodeIds[i];
    if (s === undefined) throw new RangeError(`node ${i} out of range`);
    return s;
  }
  kind(i: number): NodeKind {
    return this.kinds[i] ?? 'entity';
  }
  nodeAuthority(i: number): Authority {
    return this.nodeAuth[i] ?? 'BOTTOM';
  }
  /** Dense numbers of every node of a kind, in insertion order. */
  nodesOfKind(kind: NodeKind): Int32Array {
    const out: number[] = [];
    for (let i = 0; i < this.kinds.length; i++) if (this.kinds[i] === kind) out.push(i);
    return Int32Array.from(out);
  }
}
