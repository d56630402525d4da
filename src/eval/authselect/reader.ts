/**
 * @module eval/authselect/reader
 * The deterministic reader and the content retrievers of the AuthSelect evaluation.
 *
 * Reader (AuthSelect §4.2 assumes a deterministic reader for a fixed selected context): read the
 * selected passages best first and answer with the first candidate of the question's answer type
 * that a passage mentions (as an extracted entity, so "Redmere Herons" does not read as
 * "Redmere"), ignoring the query's own seeds; the justification is that one cited passage.
 * No candidate anywhere: abstain (never harmful).
 *
 * Content rankings for RRF / node-distance: BM25 over passage tokens (lexical) and cosine over
 * hashed bags of words (a deterministic vector stand-in; no model in the loop).
 */
export interface ReaderPassage {
  readonly node: number;
  readonly entities: readonly string[];
}

export interface ReadResult {
  readonly answer: string | undefined;
  readonly cited: number | undefined;
}

export function read(
  selected: readonly number[],
  entitiesOf: (node: number) => readonly string[],
  candidates: ReadonlySet<string>,
  seeds: readonly string[],
): ReadResult {
  for (const node of selected) {
    for (const e of entitiesOf(node))
      if (candidates.has(e) && !seeds.includes(e)) return { answer: e, cited: node };
  }
  return { answer: undefined, cited: undefined };
}

const tokens = (s: string): string[] => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** BM25 (k1 = 1.2, b = 0.75) over a fixed document set. */
export class Bm25 {
  private readonly docs: Map<string, number>[];
  private readonly lens: number[];
  private readonly df = new Map<string, number>();
  private readonly avg: number;
  constructor(texts: readonly string[]) {
    this.docs = texts.map((t) => {
      const m = new Map<string, number>();
      for (const w of tokens(t)) m.set(w, (m.get(w) ?? 0) + 1);
      for (const w of m.keys()) this.df.set(w, (this.df.get(w) ?? 0) + 1);
      return m;
    });
    this.lens = texts.map((t) => tokens(t).length);
    this.avg = this.lens.reduce((a, b) => a + b, 0) / Math.max(1, texts.length);
  }
  scores(query: string): number[] {
    const n = this.docs.length;
    const q = [...new Set(tokens(query))];
    return this.docs.map((d, i) => {
      let s = 0;
      for (const w of q) {
        const tf = d.get(w) ?? 0;
        if (tf === 0) continue;
        const df = this.df.get(w) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        s += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * this.lens[i]!) / this.avg));
      }
      return s;
    });
  }
}

function hashVec(text: string, dim = 256): Float64Array {
  const v = new Float64Array(dim);
  for (const w of tokens(text)) {
    let h = 0x811c9dc5;
    for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 0x01000193);
    v[(h >>> 0) % dim]! += 1;
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dim; i++) v[i]! /= norm;
  return v;
}

/** Cosine over hashed bags of words. */
export class HashedVectors {
  private readonly vecs: Float64Array[];
  constructor(texts: readonly string[]) {
    this.vecs = texts.map((t) => hashVec(t));
  }
  scores(query: string): number[] {
    const q = hashVec(query);
    return this.vecs.map((v) => {
      let s = 0;
      for (let i = 0; i < v.length; i++) s += v[i]! * q[i]!;
      return s;
    });
  }
}

/** Indices sorted by score descending (ties by index). */
export function rankBy(scores: readonly number[]): number[] {
  return scores
    .map((s, i) => ({ s, i }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.i);
}
