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

/** Character n-gram counts of lower-cased, whitespace-collapsed text (padded with spaces). */
export function ngramCounts(text: string, n: number): Map<string, number> {
  const t = ` ${text.toLowerCase().replace(/\s+/g, ' ').trim()} `;
  const m = new Map<string, number>();
  for (let i = 0; i + n <= t.length; i++) {
    const g = t.slice(i, i + n);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

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
  /** Gram → id. Only ever appended to: a baseline taken earlier keeps using it. */
  #ids = new Map<string, number>();
  /** Id → gram (for renumbering). */
  #grams: string[] = [];
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

  /** Hold one text's counts (`ngramCounts(text, n)`); returns its indexed form. */
  add(c: ReadonlyMap<string, number>): IndexedText {
    let total = 0;
    for (const k of c.values()) total += k;
    const ids = new Int32Array(c.size);
    const ks = new Int32Array(c.size);
    let j = 0;
    for (const [g, k] of c) {
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
    const ids = new Map<string, number>();
    const grams: string[] = [];
    const counts = new Float64Array(Math.max(256, this.#live * 2));
    for (const t of this.#texts) {
      for (let j = 0; j < t.ids.length; j++) {
        const g = this.#grams[t.ids[j] as number] as string;
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
  readonly ids: ReadonlyMap<string, number>;
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
function jsdBaseline(counts: ReadonlyMap<string, number>, base: NgramBaseline): number {
  let total = 0;
  for (const c of counts.values()) total += c;
  if (total === 0) return 1;
  const bc = base.counts;
  const bt = base.total;
  let acc = 0;
  let qSeen = 0;
  for (const [g, c] of counts) {
    const p = c / total;
    const id = base.ids.get(g);
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

/** The same for a text of the index the baseline was taken from: ids, no string lookups. */
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
    const texts = benign.map((t) => index.add(ngramCounts(t, this.n)));
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
    for (let i = 0; i < texts.length; i++) xs[i] = jsdIndexed(texts[i] as IndexedText, base);
    this.#stats = meanStd(xs);
    this.#threshold = this.#stats.mean + this.kappa * this.#stats.std;
  }

  score(text: string): number {
    return this.scoreCounts(ngramCounts(text, this.n));
  }

  /** `score` of a text from its counts (`ngramCounts(text, this.n)`). */
  scoreCounts(counts: ReadonlyMap<string, number>): number {
    return jsdBaseline(counts, this.#base);
  }

  detect(text: string): Finding {
    return this.detectCounts(ngramCounts(text, this.n));
  }

  /** `detect` of a text from its counts (`ngramCounts(text, this.n)`; the caller may keep them). */
  detectCounts(counts: ReadonlyMap<string, number>): Finding {
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
