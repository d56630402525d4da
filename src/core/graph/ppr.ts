/**
 * @module core/graph/ppr
 * Personalized PageRank as HippoRAG2 runs it, pinned as AuthSelect Appendix C pins it:
 * igraph `personalized_pagerank` with damping d = 0.5 on the undirected weighted passage–entity
 * graph, resetting to the query-entity seed distribution s. igraph resets with probability
 * 1 − d, so
 *
 *     π = (1 − d)·s + d·M·π,   M = W·D⁻¹ (column-stochastic; a dangling column resets to s),
 *
 * and passages are ranked by their own PPR mass. Power iteration; M is applied as a gather over
 * the CSR (`core/graph/structure`). Since ‖d·M‖₁ ≤ d, the error after a step whose change is δ
 * is at most δ·d/(1 − d) — the bound every certificate in `authselect.ts` builds on.
 */
import type { PushTuning } from './push.js';
import type { Csr } from './structure.js';

/** Damping as the paper pins it (Appendix C, Table VIII: "PPR damping 0.5"). */
export const PPR_DAMPING = 0.5;

/** A seed: a node number and a non-negative weight (normalised over all seeds). */
export interface Seed {
  readonly node: number;
  readonly weight: number;
}

export interface PprOptions {
  /** Probability of following an edge (igraph's `damping`). Default {@link PPR_DAMPING}. */
  readonly damping?: number;
  /** Stop when the L1 change of one step is below this. Default 1e-8. */
  readonly tol?: number;
  readonly maxIter?: number;
  /**
   * Selections (`pprSelect`, `authSelectPpr`) run the certified push of `core/graph/push` and
   * fall back to this power iteration only for near-ties; `false` forces the power iteration
   * (the reference). Either way the selection is the one the power iteration at `tol` gives.
   */
  readonly push?: PushTuning | false;
}

export interface PprResult {
  readonly scores: Float64Array;
  readonly iterations: number;
  /** Upper bound on ‖π̂ − π‖₁ (geometric tail of the last step). */
  readonly errorBound: number;
}

/** The reset vector s from seeds (uniform over seeds when every weight is equal). */
export function resetVector(n: number, seeds: readonly Seed[]): Float64Array {
  const s = new Float64Array(n);
  let total = 0;
  for (const x of seeds) {
    if (x.node < 0 || x.node >= n || !(x.weight > 0)) continue;
    s[x.node]! += x.weight;
    total += x.weight;
  }
  if (total === 0)
    throw new RangeError('PPR needs at least one in-range seed with positive weight');
  for (let i = 0; i < n; i++) s[i]! /= total;
  return s;
}

/** Σ of `x` over dangling nodes (strength 0): the mass M routes back to the reset vector. */
export function danglingMass(g: Csr, x: Float64Array): number {
  let m = 0;
  const inv = g.invStrength;
  for (let u = 0; u < g.n; u++) if (inv[u] === 0) m += x[u]!;
  return m;
}

/**
 * One fused step y ← d·M·x + c·s, where M includes the dangling columns (they reset to s) and
 * `dangX` is x's dangling mass. Returns ‖y − x‖₁ and y's own dangling mass, so a power iteration
 * touches every arc once per step and no vector twice.
 */
export function transitionStep(
  g: Csr,
  x: Float64Array,
  y: Float64Array,
  s: Float64Array,
  d: number,
  dangX: number,
  c: number,
): { change: number; dangling: number } {
  const { n, offsets, targets, nweights, invStrength } = g;
  const base = d * dangX + c;
  let change = 0;
  let dangling = 0;
  let p = offsets[0]!;
  for (let v = 0; v < n; v++) {
    let acc = 0;
    const end = offsets[v + 1]!;
    for (; p < end; p++) acc += nweights[p]! * x[targets[p]!]!;
    const nv = d * acc + base * s[v]!;
    change += Math.abs(nv - x[v]!);
    if (invStrength[v] === 0) dangling += nv;
    y[v] = nv;
  }
  return { change, dangling };
}

/** Personalized PageRank on `g` with reset `s` (see the module comment for the convention). */
export function personalizedPageRank(g: Csr, s: Float64Array, opts: PprOptions = {}): PprResult {
  const d = opts.damping ?? PPR_DAMPING;
  const tol = opts.tol ?? 1e-8;
  const maxIter = opts.maxIter ?? 200;
  if (!(d >= 0 && d < 1)) throw new RangeError('damping must be in [0, 1)');
  let x = Float64Array.from(s);
  let y = new Float64Array(g.n);
  let dang = danglingMass(g, x);
  let it = 0;
  let change = Infinity;
  while (it < maxIter && change >= tol) {
    const r = transitionStep(g, x, y, s, d, dang, 1 - d);
    change = r.change;
    dang = r.dangling;
    [x, y] = [y, x];
    it++;
  }
  return { scores: x, iterations: it, errorBound: (change * d) / (1 - d) };
}

/**
 * The top `k` of `candidates` by score (descending; ties by node number), the gap between the
 * k-th and (k+1)-th score (`gap`, Infinity when there is no (k+1)-th) and the smallest gap
 * between neighbours in the first k+1 (`minGap`) — the margins a certificate compares against
 * for a set-valued or an order-sensitive selection. O(|candidates|·k): k is small.
 */
export function topK(
  scores: Float64Array,
  candidates: ArrayLike<number>,
  k: number,
): { nodes: number[]; gap: number; minGap: number } {
  const want = Math.min(k + 1, candidates.length);
  const best: number[] = [];
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i]!;
    const sc = scores[c]!;
    if (best.length === want) {
      const last = best[want - 1]!;
      const ls = scores[last]!;
      if (sc < ls || (sc === ls && c > last)) continue;
      best.pop();
    }
    let j = best.length;
    while (j > 0) {
      const o = best[j - 1]!;
      const os = scores[o]!;
      if (os > sc || (os === sc && o < c)) break;
      j--;
    }
    best.splice(j, 0, c);
  }
  const nodes = best.slice(0, k);
  const gap = best.length > k ? scores[best[k - 1]!]! - scores[best[k]!]! : Infinity;
  let minGap = gap;
  for (let i = 0; i + 1 < nodes.length; i++)
    minGap = Math.min(minGap, scores[nodes[i]!]! - scores[nodes[i + 1]!]!);
  return { nodes, gap, minGap };
}
