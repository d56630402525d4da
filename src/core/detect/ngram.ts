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
 * Aggregate n-gram counts of a reference that changes by adding and removing texts' counts
 * (integers, so the sum is exact in any order; grams that drop to zero are removed).
 */
export class NgramTally {
  readonly counts = new Map<string, number>();
  total = 0;

  add(c: ReadonlyMap<string, number>): void {
    for (const [g, k] of c) {
      this.counts.set(g, (this.counts.get(g) ?? 0) + k);
      this.total += k;
    }
  }

  remove(c: ReadonlyMap<string, number>): void {
    for (const [g, k] of c) {
      const left = (this.counts.get(g) ?? 0) - k;
      if (left > 0) this.counts.set(g, left);
      else this.counts.delete(g);
      this.total -= k;
    }
  }
}

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

export class NgramJsd {
  readonly n: number;
  readonly kappa: number;
  readonly #fixed: number | undefined;
  #base = new Map<string, number>();
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
    const per = benign.map((t) => ngramCounts(t, this.n));
    const tally = new NgramTally();
    for (const c of per) tally.add(c);
    this.calibrateCounts(per, tally);
  }

  /**
   * The same calibration from the texts' n-gram counts (`ngramCounts(text, this.n)`, in
   * reference order) and their tally: a caller whose reference changes by a few texts keeps
   * both and recounts nothing (ADR 0019). The baseline and τ equal `calibrate(texts)`'s
   * exactly — integer counts, the same per-text divergences in the same order.
   */
  calibrateCounts(per: readonly ReadonlyMap<string, number>[], tally: NgramTally): void {
    if (per.length === 0) {
      // No baseline: the detector abstains until it is given one.
      this.#base = new Map();
      this.#threshold = undefined;
      this.#stats = undefined;
      return;
    }
    const total = tally.total;
    const base = new Map<string, number>();
    if (total > 0) for (const [g, k] of tally.counts) base.set(g, k / total);
    this.#base = base;
    const xs = per.map((c) => jsdAgainst(c, base));
    this.#stats = meanStd(xs);
    this.#threshold = this.#stats.mean + this.kappa * this.#stats.std;
  }

  score(text: string): number {
    return jsdAgainst(ngramCounts(text, this.n), this.#base);
  }

  detect(text: string): Finding {
    const th = this.threshold;
    if (th === undefined || this.#base.size === 0)
      return abstain('memsad_plus', 'no benign baseline');
    const s = this.score(text);
    return finding(
      'memsad_plus',
      s,
      th,
      `char ${this.n}-gram JSD ${s.toFixed(3)} ${s > th ? '>' : '≤'} τ ${th.toFixed(3)}`,
    );
  }
}
