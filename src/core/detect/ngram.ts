/**
 * @module core/detect/ngram
 * MemSAD+ (MemSAD paper §4.5, Appendix R, Proposition 27): the lexical half. Synonym
 * substitution keeps an entry near its victim queries in embedding space (Proposition 13)
 * but moves its character n-gram distribution; the Jensen–Shannon divergence between an
 * entry's n-gram distribution and the benign corpus baseline catches part of that shift.
 * MemSAD+ flags when MemSAD or this detector flags (the OR is done by the composite).
 *
 * JSD in bits (∈ [0, 1]); computed in O(|entry n-grams|) because for a gram absent from the
 * entry the baseline's term is ½·q·log₂(q/(q/2)) = ½·q.
 */
import { type Finding, abstain, finding, meanStd } from './types.js';

/** κ when none is configured (tuned κ ≈ 2.3 on the eval's tuning split; held-out FPR 0.4 %). */
export const DEFAULT_NGRAM_KAPPA = 2.5;

export interface NgramOptions {
  /** n (default 3). */
  readonly n?: number;
  /** κ in τ = mean + κσ over benign entries (default 2.5). */
  readonly kappa?: number;
  /** Fixed threshold (overrides calibration). */
  readonly threshold?: number;
}

/** The text n-grams are counted in: lower-cased, whitespace collapsed, padded with spaces. */
const normalise = (text: string): string => ` ${text.toLowerCase().replace(/\s+/g, ' ').trim()} `;

/** Character n-gram counts of lower-cased, whitespace-collapsed text (padded with spaces). */
export function ngramCounts(text: string, n: number): Map<string, number> {
  const t = normalise(text);
  const m = new Map<string, number>();
  for (let i = 0; i + n <= t.length; i++) {
    const g = t.slice(i, i + n);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/**
 * A gram as a map key: a gram of at most 3 UTF-16 code units, each below 512, as the small
 * integer `length·2²⁷ + u₀·2¹⁸ + u₁·2⁹ + u₂` (no string to build or hash); any other gram as
 * itself. One-to-one (a number never equals a string), so counting by keys counts the same
 * grams (ADR 0026 addendum).
 */
export type GramKey = number | string;

export function gramKey(g: string): GramKey {
  const len = g.length;
  if (len > 3) return g;
  let k = len;
  for (let i = 0; i < 3; i++) {
    const u = i < len ? g.charCodeAt(i) : 0;
    if (u >= 512) return g;
    k = k * 512 + u;
  }
  return k;
}

/**
 * `ngramCounts(text, n)` keyed by {@link gramKey}: the same counts in the same (first
 * occurrence) order — what detection counts with, without a string per gram.
 */
export function ngramKeys(text: string, n: number): Map<GramKey, number> {
  if (!(n >= 1 && n <= 3)) return new Map(ngramCounts(text, n));
  const t = normalise(text);
  const m = new Map<GramKey, number>();
  const len = t.length;
  for (let i = 0; i + n <= len; i++) {
    let k = n;
    let small = true;
    for (let j = 0; j < 3; j++) {
      const u = j < n ? t.charCodeAt(i + j) : 0;
      if (u >= 512) small = false;
      k = k * 512 + u;
    }
    const g = small ? k : t.slice(i, i + n);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/** A counts map's key as the index keys it (string keys from `ngramCounts` are converted). */
const keyOf = (g: GramKey): GramKey => (typeof g === 'number' ? g : gramKey(g));

/**
 * A reference's n-gram counts, indexed (ADR 0026): every gram gets an integer id, the aggregate
 * counts live in a typed array indexed by it, and each text keeps its counts as (id, count)
 * pairs in first-occurrence order. A calibration then scores every text of the reference by
 * array index instead of by string hash — the same divergences, computed from the same integer
 * counts in the same order, so bit for bit what a string-keyed baseline gives (tested).
 * Texts are added and removed as the reference rolls (integer counts: exact in any order); ids
 * are renumbered when most of them belong to grams no text holds any more.
 */
export class NgramIndex {
  /** Gram key → id. Only ever appended to: a baseline taken earlier keeps using it. */
  #ids = new Map<GramKey, number>();
  /** Id → gram key (for renumbering). */
  #grams: GramKey[] = [];
  /** Id → count over the texts held (0 for a gram no text holds). */
  #counts = new Float64Array(256);
  /** Grams with a count above zero. */
  #live = 0;
  /** The texts held, in the order they were added. */
  readonly #texts = new Set<IndexedText>();
  /** Σ of every count (the baseline's denominator). */
  total = 0;

  /** Grams with a count above zero. */
  get size(): number {
    return this.#live;
  }

  /** Grams with an id (held or not; bounded by renumbering). */
  get ids(): number {
    return this.#grams.length;
  }

  /** Hold one text's counts (`ngramKeys(text, n)` or `ngramCounts(text, n)`); returns its indexed form. */
  add(c: ReadonlyMap<GramKey, number>): IndexedText {
    let total = 0;
    for (const k of c.values()) total += k;
    const ids = new Int32Array(c.size);
    const ks = new Int32Array(c.size);
    let j = 0;
    for (const [gram, k] of c) {
      const g = keyOf(gram);
      let id = this.#ids.get(g);
      if (id === undefined) {
        id = this.#grams.length;
        this.#ids.set(g, id);
        this.#grams.push(g);
        if (id >= this.#counts.length) {
          const grown = new Float64Array(this.#counts.length * 2);
          grown.set(this.#counts);
          this.#counts = grown;
        }
      }
      if (this.#counts[id] === 0) this.#live++;
      this.#counts[id] = (this.#counts[id] as number) + k;
      this.total += k;
      ids[j] = id;
      ks[j] = k;
      j++;
    }
    const t: IndexedText = { ids, counts: ks, total };
    this.#texts.add(t);
    return t;
  }

  /** Drop a text added to this index (its counts leave the aggregate). */
  remove(t: IndexedText): void {
    if (!this.#texts.delete(t)) return;
    for (let j = 0; j < t.ids.length; j++) {
      const id = t.ids[j] as number;
      const k = t.counts[j] as number;
      const left = (this.#counts[id] as number) - k;
      this.#counts[id] = left;
      if (left === 0) this.#live--;
      this.total -= k;
    }
  }

  /**
   * The aggregate as it is now, frozen: what a detector compares entries with. Renumbers the
   * ids first when most belong to grams no text holds any more (the gram table stays bounded
   * by the reference, not by every text it ever held).
   */
  baseline(): NgramBaseline {
    if (this.#grams.length > 1024 && this.#grams.length > 4 * this.#live) this.#compact();
    return { ids: this.#ids, counts: this.#counts.slice(0, this.#grams.length), total: this.total };
  }

  /** New ids for the grams the texts hold, in a new table (earlier baselines keep theirs). */
  #compact(): void {
    const ids = new Map<GramKey, number>();
    const grams: GramKey[] = [];
    const counts = new Float64Array(Math.max(256, this.#live * 2));
    for (const t of this.#texts) {
      for (let j = 0; j < t.ids.length; j++) {
        const g = this.#grams[t.ids[j] as number] as GramKey;
        let id = ids.get(g);
        if (id === undefined) {
          id = grams.length;
          ids.set(g, id);
          grams.push(g);
        }
        t.ids[j] = id;
        counts[id] = (counts[id] as number) + (t.counts[j] as number);
      }
    }
    this.#ids = ids;
    this.#grams = grams;
    this.#counts = counts;
  }
}

/** One text's n-gram counts as ids of an {@link NgramIndex} (first-occurrence order). */
export interface IndexedText {
  readonly ids: Int32Array;
  readonly counts: Int32Array;
  /** Σ counts. */
  readonly total: number;
}

/** A frozen aggregate: gram ids (an id past `counts` is a gram added later: count 0) and counts. */
export interface NgramBaseline {
  readonly ids: ReadonlyMap<GramKey, number>;
  readonly counts: Float64Array;
  readonly total: number;
}

const EMPTY_BASELINE: NgramBaseline = { ids: new Map(), counts: new Float64Array(0), total: 0 };

/** Jensen–Shannon divergence (bits) of an entry's counts against a baseline distribution. */
export function jsdAgainst(counts: ReadonlyMap<string, number>, base: ReadonlyMap<string, number>): number {
  let total = 0;
  for (const c of counts.values()) total += c;
  if (total === 0) return 1;
  let acc = 0;
  let qSeen = 0;
  for (const [g, c] of counts) {
    const p = c / total;
    const q = base.get(g) ?? 0;
    qSeen += q;
    const m = (p + q) / 2;
    acc += 0.5 * p * Math.log2(p / m);
    if (q > 0) acc += 0.5 * q * Math.log2(q / m);
  }
  acc += 0.5 * Math.max(0, 1 - qSeen);
  return Math.min(1, Math.max(0, acc));
}

/**
 * `jsdAgainst` with the baseline's `q(g) = count(g) / total` read from a frozen index: the same
 * terms in the same order (q is the same quotient of the same integers), so the same value.
 */
function jsdBaseline(counts: ReadonlyMap<GramKey, number>, base: NgramBaseline): number {
  let total = 0;
  for (const c of counts.values()) total += c;
  if (total === 0) return 1;
  const bc = base.counts;
  const bt = base.total;
  let acc = 0;
  let qSeen = 0;
  for (const [g, c] of counts) {
    const p = c / total;
    const id = base.ids.get(keyOf(g));
    const k = id === undefined || id >= bc.length ? 0 : (bc[id] as number);
    const q = k > 0 ? k / bt : 0;
    qSeen += q;
    const m = (p + q) / 2;
    acc += 0.5 * p * Math.log2(p / m);
    if (q > 0) acc += 0.5 * q * Math.log2(q / m);
  }
  acc += 0.5 * Math.max(0, 1 - qSeen);
  return Math.min(1, Math.max(0, acc));
}

/** `jsdBaseline` for a text of the index the baseline was taken from: ids, no string lookups. */
function jsdIndexed(t: IndexedText, base: NgramBaseline): number {
  const total = t.total;
  if (total === 0) return 1;
  const bc = base.counts;
  const bt = base.total;
  const ids = t.ids;
  const ks = t.counts;
  let acc = 0;
  let qSeen = 0;
  for (let j = 0; j < ids.length; j++) {
    const p = (ks[j] as number) / total;
    const id = ids[j] as number;
    const k = id < bc.length ? (bc[id] as number) : 0;
    const q = k > 0 ? k / bt : 0;
    qSeen += q;
    const m = (p + q) / 2;
    acc += 0.5 * p * Math.log2(p / m);
    if (q > 0) acc += 0.5 * q * Math.log2(q / m);
  }
  acc += 0.5 * Math.max(0, 1 - qSeen);
  return Math.min(1, Math.max(0, acc));
}

/**
 * `jsdIndexed` for every text of the index the baseline was taken from, by gram id (no string
 * lookups) — the same terms in the same order, so the same values. A term depends only on the
 * gram's baseline count, the text's count of it and the text's total, so the two terms of a
 * gram counted once (most grams) are computed once per (gram, total) and reused by every text
 * of that total — the very doubles, added in each text's own order. Texts are visited by total
 * (each keeps its slot in `out`) so texts of one total reuse one another's terms.
 */
function jsdAll(texts: readonly IndexedText[], base: NgramBaseline, out: Float64Array): void {
  const n = texts.length;
  const bc = base.counts;
  const bt = base.total;
  const ids = bc.length;
  // Per gram id: the total its cached terms are for (0: none), and the two terms.
  const tag = new Float64Array(ids);
  const t1s = new Float64Array(ids);
  const t2s = new Float64Array(ids);
  // Visit order: by total, then position (one packed key each; a native numeric sort).
  const sorted = n < 2 ** 21;
  const order = new Float64Array(n);
  for (let i = 0; i < n; i++) order[i] = (texts[i] as IndexedText).total * 2 ** 21 + i;
  if (sorted) order.sort();
  const at = (o: number): number => (sorted ? (order[o] as number) % 2 ** 21 : o);
  for (let o = 0; o < n; o++) {
    const i = at(o);
    const t = texts[i] as IndexedText;
    const total = t.total;
    if (total === 0) {
      out[i] = 1;
      continue;
    }
    // A text alone with its total has nothing to share: the plain computation.
    const next = o + 1 < n && (texts[at(o + 1)] as IndexedText).total === total;
    if (!next && !(o > 0 && (texts[at(o - 1)] as IndexedText).total === total)) {
      out[i] = jsdIndexed(t, base);
      continue;
    }
    const tids = t.ids;
    const ks = t.counts;
    let acc = 0;
    let qSeen = 0;
    for (let j = 0; j < tids.length; j++) {
      const c = ks[j] as number;
      const id = tids[j] as number;
      const k = id < ids ? (bc[id] as number) : 0;
      const q = k > 0 ? k / bt : 0;
      qSeen += q;
      if (c === 1 && id < ids && tag[id] === total) {
        acc += t1s[id] as number;
        if (q > 0) acc += t2s[id] as number;
        continue;
      }
      const p = c / total;
      const m = (p + q) / 2;
      const t1 = 0.5 * p * Math.log2(p / m);
      acc += t1;
      const t2 = q > 0 ? 0.5 * q * Math.log2(q / m) : 0;
      if (q > 0) acc += t2;
      if (next && c === 1 && id < ids) {
        tag[id] = total;
        t1s[id] = t1;
        t2s[id] = t2;
      }
    }
    acc += 0.5 * Math.max(0, 1 - qSeen);
    out[i] = Math.min(1, Math.max(0, acc));
  }
}

export class NgramJsd {
  readonly n: number;
  readonly kappa: number;
  readonly #fixed: number | undefined;
  #base: NgramBaseline = EMPTY_BASELINE;
  #threshold: number | undefined;
  #stats: { mean: number; std: number } | undefined;

  constructor(o: NgramOptions = {}) {
    this.n = o.n ?? 3;
    this.kappa = o.kappa ?? DEFAULT_NGRAM_KAPPA;
    this.#fixed = o.threshold;
  }

  get threshold(): number | undefined {
    return this.#fixed ?? this.#threshold;
  }

  get stats(): { mean: number; std: number } | undefined {
    return this.#stats;
  }

  /** Build the benign baseline and the threshold from benign texts (none: abstain). */
  calibrate(benign: readonly string[]): void {
    const index = new NgramIndex();
    const texts = benign.map((t) => index.add(ngramKeys(t, this.n)));
    this.calibrateIndexed(texts, index);
  }

  /**
   * The same calibration from the texts already held by an index (`index.add(ngramCounts(text,
   * this.n))`, passed in reference order): a caller whose reference changes by a few texts keeps
   * the index and recounts nothing (ADR 0019). The baseline and τ equal `calibrate(texts)`'s
   * exactly — integer counts, the same per-text divergences in the same order. `texts` must be
   * exactly the texts the index holds.
   */
  calibrateIndexed(texts: readonly IndexedText[], index: NgramIndex): void {
    if (texts.length === 0) {
      // No baseline: the detector abstains until it is given one.
      this.#base = EMPTY_BASELINE;
      this.#threshold = undefined;
      this.#stats = undefined;
      return;
    }
    const base = index.baseline();
    this.#base = base;
    const xs = new Float64Array(texts.length);
    jsdAll(texts, base, xs);
    this.#stats = meanStd(xs);
    this.#threshold = this.#stats.mean + this.kappa * this.#stats.std;
  }

  score(text: string): number {
    return this.scoreCounts(ngramKeys(text, this.n));
  }

  /** `score` of a text from its counts (`ngramKeys(text, this.n)` or `ngramCounts(text, this.n)`). */
  scoreCounts(counts: ReadonlyMap<GramKey, number>): number {
    return jsdBaseline(counts, this.#base);
  }

  detect(text: string): Finding {
    return this.detectCounts(ngramKeys(text, this.n));
  }

  /** `detect` of a text from its counts (`ngramKeys(text, this.n)`; the caller may keep them). */
  detectCounts(counts: ReadonlyMap<GramKey, number>): Finding {
    const th = this.threshold;
    if (th === undefined || this.#base.total === 0)
      return abstain('memsad_plus', 'no benign baseline');
    const s = this.scoreCounts(counts);
    return finding(
      'memsad_plus',
      s,
      th,
      `char ${this.n}-gram JSD ${s.toFixed(3)} ${s > th ? '>' : '≤'} τ ${th.toFixed(3)}`,
    );
  }
}
