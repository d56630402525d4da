/**
 * @module core/text/bm25
 * Lexical ranking: Okapi BM25 (Robertson & Zaragoza 2009; k1 = 1.2, b = 0.75, the
 * non-negative idf log(1 + (N − n + 0.5)/(n + 0.5)) Lucene uses) over a plain tokenizer —
 * lower-cased runs of letters and digits, English stop words removed, no stemming. One
 * definition for every place memwarden ranks lexically: the read model's in-process index
 * (`LexicalIndex`), the in-memory backend and the SQL backends' rescoring of full-text
 * candidates, and the LoCoMo evaluation's BM25 baseline.
 */

import { idf, lengthNorm, termScore } from './formula.js';
import {
  LEN_TABLE,
  MAX_PRUNED_TERMS,
  type Postings,
  type SearchWork,
  maxScoreSearch,
} from './maxscore.js';
import { TopK } from './top-k.js';

export { BM25_B, BM25_K1, idf, lengthNorm, termScore } from './formula.js';

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
  // `match` (the matched strings), not `matchAll` (a match object per word): the same words.
  const all = text.toLowerCase().match(WORD);
  const out: string[] = [];
  if (all === null) return out;
  for (const w of all) if (w.length <= MAX_TOKEN && !STOP_WORDS.has(w)) out.push(w);
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

/** A held document: its distinct terms and their frequencies (for exact scores and removal). */
interface Doc {
  readonly slot: number;
  readonly terms: string[];
  readonly tfs: number[];
  readonly len: number;
}

const MIN_SLOTS = 64;
/**
 * Search scratch shared by every index (a search runs to its end without yielding): length
 * norms by document length for the mean length `normsFor` — a norm depends on nothing else —
 * and one term's contribution of a single occurrence by document length.
 */
const NORMS = new Float64Array(LEN_TABLE).fill(NaN);
let normsFor = NaN;
const ONES = new Float64Array(LEN_TABLE);
/** Search scratch (reused): idf by query position; the positions with postings and their idfs. */
const QUERY_IDF: number[] = [];
const LISTS: Postings[] = [];
const LIST_IDF: number[] = [];
/** Documents of up to this many tokens count their terms by a scan instead of a Map. */
const SHORT_DOC = 32;

/**
 * An incremental inverted index for BM25 over integer document keys: postings per term,
 * removal by key (postings are compacted lazily), exact scores for any held document.
 *
 * Layout (ADR 0074): each document gets a dense internal slot; postings are typed arrays of
 * slots and term frequencies, a document's length and its key sit in typed arrays by slot. A
 * search accumulates scores in a reused `Float64Array` by slot — no per-posting `Map` lookups —
 * then keeps the best `k` in a bounded heap, asking `accept` only about a document that would
 * enter it. The scores are the same floating-point sums, term by term in query order, as the
 * one-`Map` version this replaced (100,000 documents: ≈ 30 ms → well under 1 ms a query).
 * Removed slots are reused only by a full re-slotting, once they outnumber the live ones.
 * A query of several terms is searched by MaxScore instead (`maxscore.ts`, ADR 0090): the same
 * answer, bit for bit, from the postings that can still change it; each term's postings keep
 * the bounds it needs (the largest frequency, the shortest document).
 */
export class LexicalIndex implements Bm25Stats {
  private readonly postings = new Map<string, Postings>();
  private readonly docs = new Map<number, Doc>();
  private totalLen = 0;
  /** Slots handed out (live and removed). */
  private slots = 0;
  /** Whether keys ascend with slots (documents added in key order, the read model's log order). */
  private keysAscend = true;
  /** Length in tokens by slot; −1 for a removed document. */
  private docLen = new Int32Array(MIN_SLOTS);
  /** The key by slot. */
  private slotKey = new Float64Array(MIN_SLOTS);
  /** Search scratch: scores by slot, and the search that last touched each slot. */
  private acc = new Float64Array(0);
  private touched = new Int32Array(0);

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
    return p === undefined ? 0 : p.len - p.dead;
  }

  has(key: number): boolean {
    return this.docs.has(key);
  }

  add(key: number, text: string): void {
    if (this.docs.has(key)) return;
    const tokens = tokenize(text);
    // Distinct terms in first-seen order with their counts (what `termFrequencies` gives), by
    // a scan of the few terms of a memory — no Map per insert (ADR 0088); long texts use it.
    let terms: string[];
    let tfs: number[];
    if (tokens.length > SHORT_DOC) {
      const tf = termFrequencies(tokens);
      terms = [...tf.keys()];
      tfs = terms.map((t) => tf.get(t) as number);
    } else {
      terms = [];
      tfs = [];
      for (const t of tokens) {
        const at = terms.indexOf(t);
        if (at < 0) {
          terms.push(t);
          tfs.push(1);
        } else tfs[at] = (tfs[at] as number) + 1;
      }
    }
    const slot = this.slotFor(key, tokens.length);
    this.docs.set(key, { slot, terms, tfs, len: tokens.length });
    this.totalLen += tokens.length;
    for (let i = 0; i < terms.length; i++) this.post(terms[i] as string, slot, tfs[i] as number);
  }

  remove(key: number): void {
    const d = this.docs.get(key);
    if (d === undefined) return;
    this.docs.delete(key);
    this.totalLen -= d.len;
    this.docLen[d.slot] = -1;
    for (const t of d.terms) {
      const p = this.postings.get(t);
      if (p === undefined) continue;
      p.dead++;
      if (p.dead === p.len) this.postings.delete(t);
      else if (p.dead * 2 > p.len && p.len > 16) this.compact(p);
    }
    // Removed slots outnumber the live ones: hand out slots afresh (postings rebuilt).
    if (this.slots > MIN_SLOTS && this.slots > 2 * this.docs.size) this.reslot();
  }

  private slotFor(key: number, len: number): number {
    if (this.slots === this.docLen.length) {
      const cap = this.docLen.length * 2;
      const l = new Int32Array(cap);
      l.set(this.docLen);
      this.docLen = l;
      const k = new Float64Array(cap);
      k.set(this.slotKey);
      this.slotKey = k;
    }
    const slot = this.slots++;
    this.docLen[slot] = len;
    if (slot > 0 && !(key > (this.slotKey[slot - 1] as number))) this.keysAscend = false;
    this.slotKey[slot] = key;
    return slot;
  }

  private post(term: string, slot: number, f: number): void {
    let p = this.postings.get(term);
    if (p === undefined) {
      p = {
        slots: new Int32Array(4),
        tfs: new Int32Array(4),
        len: 0,
        dead: 0,
        maxTf: 0,
        minLen: 0x7fffffff,
      };
      this.postings.set(term, p);
    }
    if (p.len === p.slots.length) {
      const s = new Int32Array(p.len * 2);
      s.set(p.slots);
      p.slots = s;
      const f2 = new Int32Array(p.len * 2);
      f2.set(p.tfs);
      p.tfs = f2;
    }
    p.slots[p.len] = slot;
    p.tfs[p.len] = f;
    p.len++;
    // The bounds MaxScore prunes by (ADR 0090): kept through removals until a compaction.
    if (f > p.maxTf) p.maxTf = f;
    const len = this.docLen[slot] as number;
    if (len < p.minLen) p.minLen = len;
  }

  /** Drop the removed documents' postings (slot order kept) and tighten the bounds to the live ones. */
  private compact(p: Postings): void {
    let w = 0;
    let maxTf = 0;
    let minLen = 0x7fffffff;
    for (let i = 0; i < p.len; i++) {
      const s = p.slots[i] as number;
      const len = this.docLen[s] as number;
      if (len < 0) continue;
      const f = p.tfs[i] as number;
      p.slots[w] = s;
      p.tfs[w] = f;
      w++;
      if (f > maxTf) maxTf = f;
      if (len < minLen) minLen = len;
    }
    p.len = w;
    p.dead = 0;
    p.maxTf = maxTf;
    p.minLen = minLen;
  }

  /** Give every held document a fresh dense slot (in slot order) and rebuild the postings. */
  private reslot(): void {
    const held = [...this.docs.entries()].sort((a, b) => a[1].slot - b[1].slot);
    this.postings.clear();
    this.slots = 0;
    this.keysAscend = true;
    const cap = Math.max(MIN_SLOTS, 2 ** Math.ceil(Math.log2(held.length + 1)));
    this.docLen = new Int32Array(cap);
    this.slotKey = new Float64Array(cap);
    this.acc = new Float64Array(0);
    this.touched = new Int32Array(0);
    for (const [key, d] of held) {
      const slot = this.slotFor(key, d.len);
      this.docs.set(key, { ...d, slot });
      for (let i = 0; i < d.terms.length; i++)
        this.post(d.terms[i] as string, slot, d.tfs[i] as number);
    }
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
   * What the last {@link search} did: postings scored, and whether it pruned. For tests and
   * benchmarks — a pruning that silently fell back to the exhaustive walk shows here.
   */
  readonly lastSearch: SearchWork = { scored: 0, pruned: false };

  /**
   * The `k` best documents for `terms` that `accept` admits (score > 0), best first, ties by
   * the smaller key. `accept` is asked only about a document that would enter the best `k`
   * as they stand when it is reached; it is a pure filter and must not search.
   *
   * Two terms or more here, and more postings than `k`: MaxScore (`maxscore.ts`, ADR 0090)
   * walks only the postings that can still change the answer. Otherwise, or when a bound is
   * not a positive finite number, every posting is accumulated term by term (ADR 0074). Both
   * give the same documents, scores and order, bit for bit.
   */
  search(
    terms: readonly string[],
    k: number,
    accept: (key: number) => boolean,
    stats: Bm25Stats = this,
    also?: { readonly keys: readonly number[]; readonly scores: number[] },
  ): { key: number; score: number }[] {
    this.lastSearch.scored = 0;
    this.lastSearch.pruned = false;
    if (k <= 0 || this.docs.size === 0) {
      if (also !== undefined)
        also.keys.forEach((key, i) => (also.scores[i] = this.score(key, terms, stats)));
      return [];
    }
    const avgLen = stats.avgLen;
    if (normsFor !== avgLen) {
      NORMS.fill(NaN);
      normsFor = avgLen;
    }
    // By query position, the idf (NaN: no postings here, so no document of this index holds
    // the term); the positions with postings, in query order, and their idfs.
    const idfs = QUERY_IDF;
    const lists = LISTS;
    const listIdf = LIST_IDF;
    idfs.length = 0;
    let m = 0;
    let live = 0;
    for (let q = 0; q < terms.length; q++) {
      const t = terms[q] as string;
      const p = this.postings.get(t);
      if (p === undefined) {
        idfs.push(NaN);
        continue;
      }
      const termIdf = idf(stats.n, stats.df(t));
      idfs.push(termIdf);
      lists[m] = p;
      listIdf[m++] = termIdf;
      live += p.len - p.dead;
    }
    if (m >= 2 && m <= MAX_PRUNED_TERMS && live > k) {
      const top = new TopK(k);
      const scored = maxScoreSearch(
        m,
        lists,
        listIdf,
        this.docLen,
        this.slotKey,
        this.keysAscend,
        avgLen,
        NORMS,
        top,
        accept,
      );
      if (scored >= 0) {
        this.lastSearch.scored = scored;
        this.lastSearch.pruned = true;
        if (also !== undefined)
          also.keys.forEach(
            (key, i) => (also.scores[i] = this.scoreBySlot(key, m, lists, listIdf, avgLen)),
          );
        return top.results();
      }
    }
    return this.exhaustive(terms, idfs, k, accept, avgLen, also);
  }

  /**
   * {@link score} of a held document from the searched postings: its slot looked up in each
   * query position's list (sorted by slot, just walked, so in cache) instead of its term
   * strings compared — each a separate heap object, most of the cost for a cold document.
   * The same contributions (the posting's frequency is the document's), summed in query order,
   * skipping one that is not > 0 as the searches do (never: idf > 0, f ≥ 1).
   */
  private scoreBySlot(
    key: number,
    m: number,
    lists: readonly Postings[],
    listIdf: readonly number[],
    avgLen: number,
  ): number {
    const d = this.docs.get(key);
    if (d === undefined) return 0;
    const slot = d.slot;
    const norm = lengthNorm(d.len, avgLen);
    let s = 0;
    for (let i = 0; i < m; i++) {
      const p = lists[i] as Postings;
      const sl = p.slots;
      let lo = 0;
      let hi = p.len;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((sl[mid] as number) < slot) lo = mid + 1;
        else hi = mid;
      }
      if (lo === p.len || sl[lo] !== slot) continue;
      const add = termScore(listIdf[i] as number, p.tfs[lo] as number, norm);
      if (add > 0) s += add;
    }
    return s;
  }

  /** Every posting of every term accumulated by slot, then the best `k` (ADR 0074). */
  private exhaustive(
    terms: readonly string[],
    idfs: readonly number[],
    k: number,
    accept: (key: number) => boolean,
    avgLen: number,
    also: { readonly keys: readonly number[]; readonly scores: number[] } | undefined,
  ): { key: number; score: number }[] {
    if (this.acc.length < this.slots) {
      const cap = this.docLen.length;
      this.acc = new Float64Array(cap);
      this.touched = new Int32Array(cap);
    }
    // Every slot's score is 0 between searches (each search zeroes the slots it touched), so a
    // slot is new to this search while its score is 0: every contribution is > 0.
    const acc = this.acc;
    const touched = this.touched;
    const docLen = this.docLen;
    // Per document length (below LEN_TABLE): its length norm, and per term the contribution of
    // one occurrence — the same calls on the same arguments as below, so the same floats, made
    // once per length instead of twice per posting (two divisions each: most of a long
    // posting list's cost). NaN: not computed yet.
    const norms = NORMS;
    const ones = ONES;
    let nt = 0;
    let scored = 0;
    for (let q = 0; q < terms.length; q++) {
      const termIdf = idfs[q] as number;
      if (termIdf !== termIdf) continue;
      const p = this.postings.get(terms[q] as string) as Postings;
      const slots = p.slots;
      const tfs = p.tfs;
      ones.fill(NaN);
      for (let i = 0; i < p.len; i++) {
        const s = slots[i] as number;
        const len = docLen[s] as number;
        if (len < 0) continue; // removed, not compacted yet
        scored++;
        const f = tfs[i] as number;
        let add: number;
        if (f === 1 && len < LEN_TABLE) {
          add = ones[len] as number;
          if (add !== add) {
            let norm = norms[len] as number;
            if (norm !== norm) norm = norms[len] = lengthNorm(len, avgLen);
            add = ones[len] = termScore(termIdf, 1, norm);
          }
        } else add = termScore(termIdf, f, lengthNorm(len, avgLen));
        if (!(add > 0)) continue; // never (idf > 0, f ≥ 1); a 0 would change no sum
        const was = acc[s] as number;
        if (was === 0) {
          acc[s] = add;
          touched[nt++] = s;
        } else acc[s] = was + add;
      }
    }
    this.lastSearch.scored = scored;
    // `also`: {@link score} of these keys, read off the accumulators — the same terms in the same
    // order, each contribution the same call on the same arguments, so the same sums (0 for a
    // key no term reached or not held).
    if (also !== undefined)
      also.keys.forEach((key, i) => {
        const d = this.docs.get(key);
        also.scores[i] = d === undefined ? 0 : (acc[d.slot] as number);
      });
    // The best k accepted; `accept` is asked only about a document that would enter them.
    const top = new TopK(k);
    const slotKey = this.slotKey;
    let j = 0;
    try {
      for (; j < nt; j++) {
        const s = touched[j] as number;
        const score = acc[s] as number;
        acc[s] = 0;
        if (!(score > 0)) continue;
        const key = slotKey[s] as number;
        if (top.wouldEnter(score, key) && accept(key)) top.push(score, key);
      }
    } finally {
      // `accept` threw: the slots not reached yet are zeroed all the same.
      for (; j < nt; j++) acc[touched[j] as number] = 0;
    }
    return top.results();
  }
}
