/**
 * @module core/graph/rerank
 * The two selectors the criterion places on the immune side (AuthSelect §4.3, Lemma 2, B2):
 *
 * - reciprocal-rank fusion of content rankings (vector and lexical): no structural term at all;
 * - graph-distance rerank from a center node over a content-fixed pool: structure is one capped
 *   signal inside a candidate set whose membership content alone decides, so a structural write
 *   can re-order the pool but never add an out-of-pool item (fails condition (a)).
 */
import type { Csr } from './structure.js';

/** Reciprocal-rank fusion (Cormack et al. 2009): Σ 1/(k + rank), rank from 1. Ties by first appearance. */
export function reciprocalRankFusion<T>(
  rankings: readonly (readonly T[])[],
  k = 60,
): { item: T; score: number }[] {
  const score = new Map<T, number>();
  const first = new Map<T, number>();
  let order = 0;
  for (const r of rankings) {
    r.forEach((item, i) => {
      score.set(item, (score.get(item) ?? 0) + 1 / (k + i + 1));
      if (!first.has(item)) first.set(item, order++);
    });
  }
  return [...score.entries()]
    .map(([item, s]) => ({ item, score: s }))
    .sort((a, b) => b.score - a.score || first.get(a.item)! - first.get(b.item)!);
}

/** Unweighted hop distance from `center` (Infinity when unreachable within `maxDepth`). */
export function hopDistances(g: Csr, center: number, maxDepth = 6): Float64Array {
  const dist = new Float64Array(g.n).fill(Infinity);
  if (center < 0 || center >= g.n) return dist;
  dist[center] = 0;
  let frontier = [center];
  for (let depth = 1; depth <= maxDepth && frontier.length > 0; depth++) {
    const next: number[] = [];
    for (const v of frontier) {
      for (let p = g.offsets[v]!; p < g.offsets[v + 1]!; p++) {
        const t = g.targets[p]!;
        if (dist[t] === Infinity) {
          dist[t] = depth;
          next.push(t);
        }
      }
    }
    frontier = next;
  }
  return dist;
}

export interface PoolItem {
  readonly node: number;
  /** Content score in [0, 1] from the content retriever that fixed the pool. */
  readonly contentScore: number;
}

/**
 * Graph-distance rerank (Graphiti `node_distance_reranker`, capped): score = content + cap/(1+dist)
 * over the given pool only; returns the top `k` nodes of the pool.
 */
export function nodeDistanceRerank(
  g: Csr,
  pool: readonly PoolItem[],
  center: number,
  k: number,
  cap = 0.05,
): { nodes: number[] } {
  const dist = hopDistances(g, center);
  const scored = pool.map((p) => {
    const dd = dist[p.node] ?? Infinity;
    return { node: p.node, s: p.contentScore + (dd === Infinity ? 0 : cap / (1 + dd)) };
  });
  scored.sort((a, b) => b.s - a.s || a.node - b.node);
  return { nodes: scored.slice(0, k).map((x) => x.node) };
}
