/**
 * @module core/text/bm25
 * Lexical ranking: Okapi BM25 (Robertson & Zaragoza 2009; k1 = 1.2, b = 0.75, the
 * non-negative idf log(1 + (N − n + 0.5)/(n + 0.5)) Lucene uses) over a plain tokenizer —
 * lower-cased runs of letters and digits, English stop words removed, no stemming. One
 * definition for every place memwarden ranks lexically: the read model's in-process index
 * (`LexicalIndex`), the in-memory backend and the SQL backends' rescoring of full-text
 * candidates, and the LoCoMo evaluation's BM25 baseline.
 */

/** Lucene's English stop set plus the common contractions' halves, pronouns and auxiliaries. */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an the and or but if of to in on at by for with from as is are was were be been being am ' +
    'i you he she it we they me him her us them my your his its our their this that these those ' +
    'do does did have has had not no so too very can will just than then there here what when ' +
    'where who whom which why how all any both each few more most other some such only own same ' +
    's t don should now about above after again against below between into through during ' +
    'before under over out up down off once further while because until nor d ll m o re ve y ' +
    'ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn ' +
    'weren won wouldn would could also'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}]+/gu;
/** Longer runs are not words (hashes, base64): left out of the index. */
const MAX_TOKEN = 64;

/** The terms of a text, in order (repeats kept). */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(WORD)) {
    const w = m[0];
    if (w.length <= MAX_TOKEN && !STOP_WORDS.has(w)) out.push(w);
  }
  return out;
}

/** The distinct terms of a query, in first-seen order. */
export function queryTerms(text: string): string[] {
  return [...new Set(tokenize(text))];
}

/** Term frequencies of a document's tokens. */
export function termFrequencies(tokens: readonly string[]): Map<string, number> {
  const tf = new Map<string, number>();
  for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
  return tf;
}

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** Collection statistics BM25 needs. */
export interface Bm25Stats {
  /** Documents. */
  readonly n: number;
  /** Mean document length in tokens. */
  readonly avgLen: number;
  /** Documents containing a term. */
  df(term: string): number;
}

/** Statistics of a set of tokenised documents. */
export function bm25Stats(docs: readonly (readonly string[])[]): Bm25Stats {
  const df = new Map<string, number>();
  let total = 0;
  for (const d of docs) {
    total += d.length;
    for (const t of new Set(d)) df.set(t, (df.get(t) ?? 0) + 1);
  }
  return {
    n: docs.length,
    avgLen: docs.length === 0 ? 0 : total / docs.length,
    df: (t) => df.get(t) ?? 0,
  };
}

/** Inverse document frequency (never negative). */
export function idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** The length normalisation of a document of `docLen` tokens. */
export function lengthNorm(docLen: number, avgLen: number): number {
  return BM25_K1 * (1 - BM25_B + (BM25_B * docLen) / (avgLen > 0 ? avgLen : 1));
}

/** One term's contribution: idf · f·(k1 + 1) / (f + norm). The one formula every path uses. */
export function termScore(termIdf: number, f: number, norm: number): number {
  return (termIdf * f * (BM25_K1 + 1)) / (f + norm);
}

/** BM25 of one document for `terms` (distinct query terms). 0 when no term occurs. */
export function bm25(
  terms: readonly string[],
  tf: ReadonlyMap<string, number>,
  docLen: number,
  stats: Bm25Stats,
): number {
  let s = 0;
  const norm = lengthNorm(docLen, stats.avgLen);
  for (const t of terms) {
    const f = tf.get(t);
    if (f === undefined) continue;
    s += termScore(idf(stats.n, stats.df(t)), f, norm);
  }
  return s;
}

/** The statistics of several collections searched as one (the read model's partitions). */
export function combinedStats(parts: readonly LexicalIndex[]): Bm25Stats {
  let n = 0;
  let total = 0;
  for (const p of parts) {
    n += p.n;
    total += p.totalTokens;
  }
  return {
    n,
    avgLen: n === 0 ? 0 : total / n,
    df: (t) => parts.reduce((x, p) => x + p.df(t), 0),
  };
}

/**
 * An incremental inverted index for BM25 over integer document keys: postings per term,
 * removal by key (postings are compacted lazily), exact scores for any held document.
 */
export class LexicalIndex implements Bm25Stats {
  private readonly postings = new Map<string, { keys: number[]; tfs: number[]; dead: number }>();
  private readonly docs = new Map<number, { terms: string[]; tfs: number[]; len: number }>();
  private totalLen = 0;

  get n(): number {
    return this.docs.size;
  }

  get avgLen(): number {
    return this.docs.size === 0 ? 0 : this.totalLen / this.docs.size;
  }

  /** Tokens in all held documents. */
  get totalTokens(): number {
    return this.totalLen;
  }

  df(term: string): number {
    const p = this.postings.get(term);
    return p === undefined ? 0 : p.keys.length - p.dead;
  }

  has(key: number): boolean {
    return this.docs.has(key);
  }

  add(key: number, text: string): void {
    if (this.docs.has(key)) return;
    const tokens = tokenize(text);
    const tf = termFrequencies(tokens);
    const terms = [...tf.keys()];
    const tfs = terms.map((t) => tf.get(t) as number);
    this.docs.set(key, { terms, tfs, len: tokens.length });
    this.totalLen += tokens.length;
    for (let i = 0; i < terms.length; i++) {
      const t = terms[i] as string;
      let p = this.postings.get(t);
      if (p === undefined) this.postings.set(t, (p = { keys: [], tfs: [], dead: 0 }));
      p.keys.push(key);
      p.tfs.push(tfs[i] as number);
    }
  }

  remove(key: number): void {
    const d = this.docs.get(key);
    if (d === undefined) return;
    this.docs.delete(key);
    this.totalLen -= d.len;
    for (const t of d.terms) {
      const p = this.postings.get(t);
      if (p === undefined) continue;
      p.dead++;
      if (p.dead === p.keys.length) this.postings.delete(t);
      else if (p.dead * 2 > p.keys.length && p.keys.length > 16) this.compact(p);
    }
  }

  private compact(p: { keys: number[]; tfs: number[]; dead: number }): void {
    const keys: number[] = [];
    const tfs: number[] = [];
    for (let i = 0; i < p.keys.length; i++) {
      if (this.docs.has(p.keys[i] as number)) {
        keys.push(p.keys[i] as number);
        tfs.push(p.tfs[i] as number);
      }
    }
    p.keys = keys;
    p.tfs = tfs;
    p.dead = 0;
  }

  /** BM25 of a held document (0 when it matches no term or is not held); `stats` default: this index's. */
  score(key: number, terms: readonly string[], stats: Bm25Stats = this): number {
    const d = this.docs.get(key);
    if (d === undefined) return 0;
    const norm = lengthNorm(d.len, stats.avgLen);
    let s = 0;
    for (const t of terms) {
      const i = d.terms.indexOf(t);
      if (i < 0) continue;
      s += termScore(idf(stats.n, stats.df(t)), d.tfs[i] as number, norm);
    }
    return s;
  }

  /**
   * The `k` best documents for `terms` that `accept` admits (score > 0), best first, ties by
   * the smaller key.
   */
  search(
    terms: readonly string[],
    k: number,
    accept: (key: number) => boolean,
    stats: Bm25Stats = this,
  ): { key: number; score: number }[] {
    const acc = new Map<number, number>();
    for (const t of terms) {
      const p = this.postings.get(t);
      if (p === undefined) continue;
      const termIdf = idf(stats.n, stats.df(t));
      for (let i = 0; i < p.keys.length; i++) {
        const key = p.keys[i] as number;
        const d = this.docs.get(key);
        if (d === undefined) continue; // removed, not compacted yet
        const f = p.tfs[i] as number;
        acc.set(key, (acc.get(key) ?? 0) + termScore(termIdf, f, lengthNorm(d.len, stats.avgLen)));
      }
    }
    const out: { key: number; score: number }[] = [];
    for (const [key, score] of acc) if (score > 0 && accept(key)) out.push({ key, score });
    out.sort((a, b) => b.score - a.score || a.key - b.key);
    return out.length > k ? out.slice(0, k) : out;
  }
}
