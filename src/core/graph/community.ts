/**
 * @module core/graph/community
 * Community-summary selection (Graphiti's Leiden/Louvain communities, AuthSelect §6.6, A6):
 * partition the graph with Louvain (graphology-communities-louvain — the one graph library,
 * confined to this folder by dependency-cruiser), pick the community of the query's primary
 * seed, and select that community's passages ranked by their weighted degree inside it.
 *
 * Determinism: Louvain visits nodes in a random order; the caller injects the seed of a small
 * PRNG (core has no randomness of its own), and AuthSelect replays with the same seed so only the
 * removed structure can differ. This selector is accumulable (§4.3): a dense unauthenticated
 * write can move the seed into another community and reallocate the whole selected set.
 */
import { UndirectedGraph } from 'graphology';
import louvainModule from 'graphology-communities-louvain';
import type { Csr } from './structure.js';
import { mulberry32 } from '../prng.js';

export interface CommunityOptions {
  /** PRNG seed for Louvain's node order. Default 1. */
  readonly seed?: number;
  /** Louvain resolution (modularity γ). Default 1. */
  readonly resolution?: number;
}

export interface CommunitySelection {
  /** Selected passages, best first. */
  readonly nodes: readonly number[];
  /** The community id of the primary seed (ids are per-run labels; compare sets, not ids). */
  readonly community: number;
  /** Members of that community (all kinds). */
  readonly members: readonly number[];
}

/**
 * The package is CommonJS (`module.exports = fn`) but its typings declare `export default`, which
 * NodeNext reads as `exports.default`. At runtime the default import *is* the function.
 */
type LouvainFn = (typeof louvainModule)['default'];
const louvain = louvainModule as unknown as LouvainFn;

export { mulberry32 };

/** Louvain partition of a view: community label per node (isolated nodes get their own). */
export function louvainPartition(g: Csr, opts: CommunityOptions = {}): Int32Array {
  const graph = new UndirectedGraph();
  for (let v = 0; v < g.n; v++) graph.addNode(String(v));
  for (let v = 0; v < g.n; v++) {
    for (let p = g.offsets[v]!; p < g.offsets[v + 1]!; p++) {
      const t = g.targets[p]!;
      if (t <= v) continue; // each undirected edge once
      const key = `${v}-${t}`;
      const w = g.weights[p]!;
      if (graph.hasEdge(key)) graph.updateEdgeAttribute(key, 'weight', (x) => (x as number) + w);
      else graph.addEdgeWithKey(key, String(v), String(t), { weight: w });
    }
  }
  const mapping = louvain(graph, {
    getEdgeWeight: 'weight',
    rng: mulberry32(opts.seed ?? 1),
    resolution: opts.resolution ?? 1,
  });
  const out = new Int32Array(g.n);
  for (let v = 0; v < g.n; v++) out[v] = mapping[String(v)] ?? -1 - v;
  return out;
}

/**
 * Select the passages of the primary seed's community, ranked by weighted degree into the
 * community (ties by node number), top `k`.
 */
export function communitySelect(
  g: Csr,
  primarySeed: number,
  candidates: ArrayLike<number>,
  k: number,
  opts: CommunityOptions = {},
): CommunitySelection {
  const part = louvainPartition(g, opts);
  const c = part[primarySeed]!;
  const members: number[] = [];
  for (let v = 0; v < g.n; v++) if (part[v] === c) members.push(v);
  const isCand = new Set<number>();
  for (let i = 0; i < candidates.length; i++) isCand.add(candidates[i]!);
  const scored: { v: number; s: number }[] = [];
  for (const v of members) {
    if (!isCand.has(v)) continue;
    let s = 0;
    for (let p = g.offsets[v]!; p < g.offsets[v + 1]!; p++)
      if (part[g.targets[p]!] === c) s += g.weights[p]!;
    scored.push({ v, s });
  }
  scored.sort((a, b) => b.s - a.s || a.v - b.v);
  return { nodes: scored.slice(0, k).map((x) => x.v), community: c, members };
}
