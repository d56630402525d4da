/**
 * @module core/detect/embedding-checks
 * Detectors over vectors other than MemSAD:
 * - `Proactive` (MemSAD paper §5, App. C): mean cosine similarity of a candidate to 16
 *   domain probe queries (8 subtopics × 2); an entry built to be retrieved broadly (a
 *   centroid passage, a broad anchor) sits close to all probes at once. τ = mean + κσ over
 *   benign entries, or fixed.
 * - `implausibleSimilarity` (article failure-mode table, "vector index poisoning via
 *   embedding collisions"): a retrieved entry whose similarity to the query is abnormally
 *   high — above the calibrated benign ceiling — while its words barely overlap the query's.
 * - `embeddingMismatch`: the stored vector does not represent the stored content (re-embedded
 *   content vs stored vector) — a forged or collided index entry.
 */
import { dots4 } from '../vector/kernel.js';
import { cosineSim, normalized } from './kernel.js';
import { type Finding, abstain, finding, meanStd } from './types.js';

/**
 * κ when none is configured. 4, not 3: tuned on the eval's tuning split at FPR ≤ 0.3 % it comes
 * out at 3.9 [3.7, 4.1]; at 3 the held-out FPR was 0.7 % and 2.8 % of a warm principal's
 * benign writes through `Memory.add` were held (ADR 0016).
 */
export const DEFAULT_PROACTIVE_KAPPA = 4;

export interface ProactiveOptions {
  readonly kappa?: number;
  readonly threshold?: number;
}

export class Proactive {
  readonly kappa: number;
  readonly #fixed: number | undefined;
  #probes: Float32Array[] = [];
  #threshold: number | undefined;
  /** The benign scores' mean and standard deviation at the last calibration. */
  #stats: { readonly mean: number; readonly std: number } | undefined;
  /** Scratch: the unit-length copy of the vector being scored. */
  #u = new Float32Array(0);

  constructor(o: ProactiveOptions = {}) {
    this.kappa = o.kappa ?? DEFAULT_PROACTIVE_KAPPA;
    this.#fixed = o.threshold;
  }

  get threshold(): number | undefined {
    return this.#fixed ?? this.#threshold;
  }

  setProbes(probes: readonly ArrayLike<number>[]): void {
    this.#probes = probes.map((p) => normalized(p));
  }

  /** τ from benign entry embeddings. */
  calibrate(benign: readonly ArrayLike<number>[]): void {
    this.calibrateScores(benign.map((b) => this.score(b)));
  }

  /**
   * τ from the benign entries' scores (`score(v)` under the current probes, in reference
   * order): a reference vector's score never changes, so a caller whose reference grows keeps
   * them and scores only the new vectors (ADR 0019). Same τ as `calibrate(vectors)`.
   */
  calibrateScores(xs: ArrayLike<number>): void {
    const { mean, std } = meanStd(xs);
    this.#stats = { mean, std };
    this.#threshold = mean + this.kappa * std;
  }

  /**
   * τ at another κ over the same calibration (`mean + κσ`; a fixed threshold stays fixed):
   * the write path holds each tier at its own κ (ADR 0052). `Infinity`: never flags.
   */
  thresholdAt(kappa: number): number | undefined {
    if (this.#fixed !== undefined) return this.#fixed;
    const st = this.#stats;
    if (st === undefined) return undefined;
    return kappa === Number.POSITIVE_INFINITY ? kappa : st.mean + kappa * st.std;
  }

  score(v: ArrayLike<number>): number {
    const probes = this.#probes;
    if (probes.length === 0) return 0;
    // `normalized(v)` into a scratch buffer and `dotProduct` inlined over float32 rows: the
    // same float32 vector, the same products summed in the same order — the same score,
    // without an allocation and a generic call per probe (every write is scored).
    const n = v.length;
    if (this.#u.length !== n) this.#u = new Float32Array(n);
    const u = this.#u;
    u.set(v);
    let nn = 0;
    for (let i = 0; i < n; i++) nn += (u[i] as number) ** 2;
    if (nn > 0) {
      const k = 1 / Math.sqrt(nn);
      for (let i = 0; i < n; i++) u[i] = (u[i] as number) * k;
    }
    // Four probes per pass (`dots4`): four independent sums, each in its own order as
    // `dotProduct` adds it, so the loop is not bound by the latency of one chain of additions.
    let s = 0;
    let j = 0;
    for (; j + 4 <= probes.length; j += 4) {
      const p0 = probes[j] as Float32Array;
      const p1 = probes[j + 1] as Float32Array;
      const p2 = probes[j + 2] as Float32Array;
      const p3 = probes[j + 3] as Float32Array;
      if (p0.length !== n || p1.length !== n || p2.length !== n || p3.length !== n) break;
      dots4(u, p0, p1, p2, p3, n, DOTS, 0);
      s += DOTS[0] as number;
      s += DOTS[1] as number;
      s += DOTS[2] as number;
      s += DOTS[3] as number;
    }
    for (; j < probes.length; j++) {
      const p = probes[j] as Float32Array;
      const m = Math.min(p.length, n);
      let d = 0;
      for (let i = 0; i < m; i++) d += (p[i] as number) * (u[i] as number);
      s += d;
    }
    return s / probes.length;
  }

  /** Probes set (none: `score` is 0 and `detect` abstains). */
  get probeCount(): number {
    return this.#probes.length;
  }

  detect(v: ArrayLike<number>): Finding {
    if (this.#probes.length === 0 || this.threshold === undefined)
      return abstain('proactive', 'no probes or threshold');
    return this.detectScore(this.score(v));
  }

  /**
   * `detect` of a vector from its score (`score(v)` under the current probes); with `kappa`,
   * at that κ instead of the configured one (see {@link thresholdAt}).
   */
  detectScore(s: number, kappa?: number): Finding {
    const th = kappa === undefined ? this.threshold : this.thresholdAt(kappa);
    if (this.#probes.length === 0 || th === undefined)
      return abstain('proactive', 'no probes or threshold');
    return finding(
      'proactive',
      s,
      th,
      `mean probe similarity ${s.toFixed(3)} ${s > th ? '>' : '≤'} τ ${th.toFixed(3)}`,
    );
  }
}

/** `score`'s four dot products per pass (synchronous: one scratch for every instance). */
const DOTS = new Float64Array(4);

const WORD_RE = /[\p{L}\p{N}]{3,}/gu;

/** Share of the query's content words (≥ 3 letters) present in the text. */
export function lexicalOverlap(query: string, text: string): number {
  const q = new Set(query.toLowerCase().match(WORD_RE) ?? []);
  if (q.size === 0) return 1;
  const t = new Set(text.toLowerCase().match(WORD_RE) ?? []);
  let k = 0;
  for (const w of q) if (t.has(w)) k++;
  return k / q.size;
}

export interface ImplausibleOptions {
  /** Similarity above which a hit is implausible if lexically unrelated (default 0.85). */
  readonly maxPlausible?: number;
  /** Lexical overlap below which the content counts as unrelated (default 0.2). */
  readonly minOverlap?: number;
}

/**
 * Score = cosine(query, entry). Flag when it exceeds `maxPlausible` and (when the query text
 * is known) the entry shares under `minOverlap` of the query's words.
 */
export function implausibleSimilarity(
  queryEmbedding: ArrayLike<number>,
  entryEmbedding: ArrayLike<number>,
  o: ImplausibleOptions & { query?: string; content?: string } = {},
): Finding {
  if (queryEmbedding.length !== entryEmbedding.length || queryEmbedding.length === 0)
    return abstain('implausible_similarity', 'vector widths differ');
  const th = o.maxPlausible ?? 0.85;
  const cos = cosineSim(queryEmbedding, entryEmbedding);
  let lexicallyUnrelated = true;
  let lex = Number.NaN;
  // The word overlap matters only above the ceiling (the finding is the same either way), so
  // a plausible hit — nearly every hit — costs one cosine.
  if (cos > th && o.query !== undefined && o.content !== undefined) {
    lex = lexicalOverlap(o.query, o.content);
    lexicallyUnrelated = lex < (o.minOverlap ?? 0.2);
  }
  const flagged = cos > th && lexicallyUnrelated;
  return finding(
    'implausible_similarity',
    cos,
    th,
    flagged
      ? `similarity ${cos.toFixed(3)} > ${th}${Number.isNaN(lex) ? '' : ` with word overlap ${lex.toFixed(2)}`}`
      : `similarity ${cos.toFixed(3)} plausible`,
    { flagged },
  );
}

/** Flag a stored vector that no longer matches its content's embedding (default < 0.98). */
export function embeddingMismatch(
  contentEmbedding: ArrayLike<number>,
  storedEmbedding: ArrayLike<number>,
  minAgreement = 0.98,
): Finding {
  if (contentEmbedding.length !== storedEmbedding.length)
    return finding('embedding_mismatch', 1, 0.5, 'stored vector has a different width', {
      flagged: true,
    });
  const c = cosineSim(contentEmbedding, storedEmbedding);
  return finding(
    'embedding_mismatch',
    1 - c,
    1 - minAgreement,
    c < minAgreement
      ? `stored vector agrees ${c.toFixed(3)} with its content`
      : 'stored vector matches content',
  );
}
