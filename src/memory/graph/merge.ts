/**
 * @module memory/graph/merge
 * Entity merge by embedding similarity (HippoRAG2's synonymy edges, threshold 0.8 in AuthSelect
 * Table VIII): embed entity names through the Embedder port, propose a synonym link for every
 * pair at or above the threshold. Proposals are written by `GraphMemory.mergeSynonyms` as signed
 * `synonym` entries whose parents are the entities' own writes, so a merged link takes the
 * minimum integrity over its merge evidence and constituents (§4.1, min-inheritance).
 */
import type { Embedder } from '../../ports/embedder.js';

export interface MergeProposal {
  readonly a: string;
  readonly b: string;
  readonly score: number;
}

function cosine(x: Float32Array, y: Float32Array): number {
  let dot = 0;
  let nx = 0;
  let ny = 0;
  for (let i = 0; i < x.length; i++) {
    dot += x[i]! * y[i]!;
    nx += x[i]! * x[i]!;
    ny += y[i]! * y[i]!;
  }
  return nx === 0 || ny === 0 ? 0 : dot / Math.sqrt(nx * ny);
}

/** Pairs of distinct names with cosine similarity ≥ threshold, best first (O(n²); batch per call). */
export async function proposeMerges(
  names: readonly string[],
  embedder: Embedder,
  threshold = 0.8,
): Promise<MergeProposal[]> {
  const uniq = [...new Set(names)];
  if (uniq.length < 2) return [];
  const vecs = await embedder.embed(uniq);
  const out: MergeProposal[] = [];
  for (let i = 0; i < uniq.length; i++)
    for (let j = i + 1; j < uniq.length; j++) {
      const s = cosine(vecs[i]!, vecs[j]!);
      if (s >= threshold) {
        const [a, b] = uniq[i]! < uniq[j]! ? [uniq[i]!, uniq[j]!] : [uniq[j]!, uniq[i]!];
        out.push({ a, b, score: Math.min(1, Math.round(s * 1e6) / 1e6) });
      }
    }
  return out.sort(
    (p, q) => q.score - p.score || (p.a < q.a ? -1 : p.a > q.a ? 1 : p.b < q.b ? -1 : 1),
  );
}
