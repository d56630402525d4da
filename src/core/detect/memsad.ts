/**
 * @module core/detect/memsad
 * MemSAD (MemSAD paper §4, Definition 6, Eq. 7): a write is anomalous when it is too close to
 * the queries the agent is being asked. Poisoning works because an adversarial entry sits
 * near its victim queries; that closeness is the signal.
 *
 * - Query history: FIFO ring of the last `capacity` query embeddings (unit vectors).
 * - Scores of a candidate p against the history Q: s_max = max_q cos(p, q),
 *   s_mean = mean_q cos(p, q), s_comb = α·s_max + (1 − α)·s_mean (Eq. 7, α = ½ by default).
 * - Calibration: the same score over a benign reference set R; τ = mean + κ·σ.
 * - Triggered calibration (§6.3, App. C "Evaluation correction"): calibrate against a query
 *   set that contains the triggered / domain-matched victim queries, so the threshold is set
 *   where the attack lives (`calibrate({ queries })`).
 * - Rolling recalibration (Theorem 12): recompute τ on the current window every
 *   `recalibrateEvery` observed queries (here, synchronously), or when a scheduler calls
 *   `recalibrate()` (the per-principal default bounds it by time as well, ADR 0019). A
 *   rolling recalibration is incremental: the mean part is linear (r · Σq / n, with the
 *   history sum kept as queries arrive), the max part keeps each reference's running max and
 *   its slot, adds the new queries' similarities (one kernel pass over the reference per new
 *   distinct query) and rescans the history only for references whose max-attaining query
 *   left it. It equals a full recomputation (the max of the same products); the full one
 *   runs when most of the history changed or the reference was replaced.
 * - Repeated queries (ADR 0091): the held rows are kept as a multiset by content (bit-identical
 *   normalised rows form one group). A new query whose vector was held at the last
 *   recalibration cannot raise any max and is not scored; a reference whose max-attaining slot
 *   was overwritten keeps its max when the same vector is still held, and only references
 *   whose max-attaining vector left the history are rescanned — the same maxima, bit for bit.
 * - Certified radius (Lemma 8): with calibration tolerance ε = σ·√(2x/n) + κ·σ·(2√(x/n) + 2x/n),
 *   x = ln(4/δ) (Theorem 11: the mean's and the σ estimate's tolerance), a flagged entry whose margin s − τ exceeds ε is
 *   detected for every threshold within tolerance; the finding carries r = s − τ − ε > 0.
 *   The certificate is exact for the max mode and holds for the combined mode under the
 *   typical-query condition (Assumption 9), which this class checks for the query that
 *   attains the max.
 *
 * Pure: vectors in, findings out; no clock, no randomness.
 */
import { DotMatrix, dotProduct, normalizeInto, normalized } from './kernel.js';
import { type Finding, abstain, finding, meanStd } from './types.js';

/** `#wasGroup` of a slot not overwritten since the last recalibration. */
const NOT_WRITTEN = -2;

export type MemsadMode = 'max' | 'mean' | 'combined';

/** κ when none is configured (ADR 0016: held-out FPR 0.000 in both history regimes). */
export const DEFAULT_MEMSAD_KAPPA = 4;

export interface MemsadOptions {
  readonly dimensions: number;
  /** History capacity N (default 1,000). */
  readonly capacity?: number;
  /**
   * κ in τ = mean + κσ. Default 4 (`DEFAULT_MEMSAD_KAPPA`): the paper's κ = 2 (App. D) gives
   * several % FPR with MiniLM on our benign corpus (heavy upper tail). `memwarden eval detect`
   * tunes κ on a tuning split only (κ ≈ 3.1 in the paper's history regime, ≈ 1.7 with a mixed
   * history, at FPR ≤ 0.3 %) and reports the held-out FPR of the shipped 4: 0.000 in both.
   * Configure per deployment.
   */
  readonly kappa?: number;
  readonly mode?: MemsadMode;
  /** α of Eq. 7 (weight of s_max in the combined score; default 0.5). */
  readonly alpha?: number;
  /** Recalibrate after this many new queries (0 = never; default 0). */
  readonly recalibrateEvery?: number;
  /** δ of the calibration tolerance (default 0.05). */
  readonly delta?: number;
  /** Fixed threshold: overrides calibration (per-deployment configuration). */
  readonly threshold?: number;
  /** Disable the WebAssembly SIMD kernel (tests of the fallback). */
  readonly simd?: boolean;
}

export interface MemsadScores {
  readonly max: number;
  readonly mean: number;
  readonly combined: number;
  /** Storage slot of the max-attaining query. */
  readonly argmax: number;
}

export interface MemsadCalibration {
  readonly mean: number;
  readonly std: number;
  readonly threshold: number;
  /** ε of Lemma 8 / Theorem 11. */
  readonly epsilon: number;
  readonly n: number;
}

export class Memsad {
  readonly dimensions: number;
  readonly capacity: number;
  readonly kappa: number;
  readonly mode: MemsadMode;
  readonly alpha: number;
  readonly #recalEvery: number;
  readonly #delta: number;
  readonly #fixed: number | undefined;
  readonly #m: DotMatrix;
  #count = 0; // queries held
  #next = 0; // ring write slot
  #sinceCal = 0;
  #reference: Float32Array[] = [];
  /**
   * Reference vectors given but not yet normalised into `#reference` and the kernel matrix:
   * nothing reads them while there is no history to score them against (a principal that
   * only writes), so they are made ready when a recalibration with a history, or a flagged
   * entry's certificate, first needs them — the same rows, the same values. Non-empty only
   * while the incremental state is invalid (the next scoring recomputes every maximum).
   */
  #pending: ArrayLike<number>[] = [];
  #cal: MemsadCalibration | undefined;
  #lastScores: Float64Array = new Float64Array(0);
  /** The reference as rows of a kernel matrix (new queries scored against it in one pass). */
  #refM: DotMatrix | undefined;
  /** Σ of the held queries (float64), for the mean part: mean_q cos(r, q) = r · Σq / n. */
  readonly #sum: Float64Array;
  /** Per reference: running max similarity over the history and the slot attaining it. */
  #refMax = new Float32Array(0);
  #refArg = new Int32Array(0);
  /** The incremental state matches the history as of the last recalibration. */
  #incValid = false;
  /** Slots written since the last recalibration, in order (a slot may repeat). */
  #dirty: number[] = [];
  /** Σ of the sampled reference rows (≤ 64) for the typical-query statistic. */
  #refSample: Float32Array | undefined;
  #refSampleK = 0;
  /** The sample is made when a flagged entry first needs it after the reference changed. */
  #refSampleStale = false;
  /** JS copies of the held queries (for Assumption 9 statistics); `#words` their bits. */
  readonly #rows: Float32Array[] = [];
  readonly #words: Int32Array[] = [];
  /** A row no slot holds any more (both views), reused by the next query: no allocation. */
  #spare: Float32Array | undefined;
  #spareWords: Int32Array | undefined;
  /**
   * The held rows as a multiset by content: slots holding bit-identical rows form a group.
   * Per slot: its group (−1 when not held) and its neighbours in the group's slot list; per
   * group: how many slots hold it, its first slot (−1 when none), its hash, the recalibration epoch it
   * was formed in. `#byHash` finds a held group by the hash of a row's 32-bit words (`rowHash`)
   * (full comparison on a hash match). A group whose last slot is overwritten leaves
   * `#byHash`; its id is not reused before the next recalibration (`#wasGroup` may name it).
   */
  readonly #groupOf: Int32Array;
  readonly #slotNext: Int32Array;
  readonly #slotPrev: Int32Array;
  readonly #gCount: number[] = [];
  readonly #gHead: number[] = [];
  readonly #gBorn: number[] = [];
  readonly #gSeen: number[] = [];
  readonly #gHash: number[] = [];
  readonly #byHash = new Map<number, number[]>();
  /** Row `g`: the content of group `g` (written when the group forms; read while it is held). */
  #gM: DotMatrix | undefined;
  #gFree: number[] = [];
  #gReserved: number[] = [];
  /** Groups live (held by a slot). */
  #groups = 0;
  /** Recalibrations completed with a history: a group formed before the current one was held then. */
  #epoch = 0;
  #seenStamp = 0;
  /**
   * Per slot overwritten since the last recalibration (incremental state valid): the group it
   * held at that recalibration (`NOT_WRITTEN` for the others).
   */
  readonly #wasGroup: Int32Array;
  /** References from this index on were added since the last recalibration: scanned whole. */
  #scanFrom = 0;
  /** Kernel passes made for the maxima and shortcuts taken (tests and diagnostics). */
  readonly #work = { referencePasses: 0, historyPasses: 0, skippedQueries: 0, movedMaxima: 0 };
  /** Scratch: per held query, mean cos(q, R), for the typical-query check of Assumption 9. */
  readonly #qMean: Float32Array;

  constructor(o: MemsadOptions) {
    this.dimensions = o.dimensions;
    this.capacity = o.capacity ?? 1000;
    this.kappa = o.kappa ?? DEFAULT_MEMSAD_KAPPA;
    this.mode = o.mode ?? 'combined';
    this.alpha = o.alpha ?? 0.5;
    this.#recalEvery = o.recalibrateEvery ?? 0;
    this.#delta = o.delta ?? 0.05;
    this.#fixed = o.threshold;
    this.#m = new DotMatrix(
      this.dimensions,
      this.capacity,
      o.simd === false ? { simd: false } : {},
    );
    this.#qMean = new Float32Array(this.capacity);
    this.#sum = new Float64Array(this.dimensions);
    this.#groupOf = new Int32Array(this.capacity).fill(-1);
    this.#slotNext = new Int32Array(this.capacity);
    this.#slotPrev = new Int32Array(this.capacity);
    this.#wasGroup = new Int32Array(this.capacity).fill(NOT_WRITTEN);
  }

  /**
   * Kernel passes the maxima took so far — over the reference (one per new query scored) and
   * over the history (one per reference rescanned) — and the shortcuts taken: new queries not
   * scored because held at the last recalibration, maxima kept by moving their slot.
   */
  get work(): {
    readonly referencePasses: number;
    readonly historyPasses: number;
    readonly skippedQueries: number;
    readonly movedMaxima: number;
  } {
    return { ...this.#work };
  }

  /** Queries observed since τ was last computed (what a rolling scheduler looks at). */
  get queriesSinceCalibration(): number {
    return this.#sinceCal;
  }

  get historySize(): number {
    return this.#count;
  }

  get calibration(): MemsadCalibration | undefined {
    return this.#cal;
  }

  /** Every reference's score at the last recalibration (a copy; empty without a history). */
  get lastReferenceScores(): Float64Array {
    return this.#lastScores.slice();
  }

  get simd(): boolean {
    return this.#m.simd;
  }

  /** Add a query embedding to the FIFO history (oldest evicted at capacity). */
  observeQuery(q: ArrayLike<number>): void {
    if (q.length !== this.dimensions) return;
    let u = this.#spare;
    let w = this.#spareWords;
    if (u === undefined || w === undefined) {
      u = new Float32Array(this.dimensions);
      w = new Int32Array(u.buffer);
    }
    normalizeInto(u, q);
    // Bounded bookkeeping: past half the history, the next recalibration is a full one.
    if (this.#incValid && this.#dirty.length >= this.capacity / 2) this.#invalidate();
    const slot = this.#next;
    const sum = this.#sum;
    const held = this.#count === this.capacity;
    const old = held ? this.#rows[slot] : undefined;
    for (let i = 0; i < u.length; i++)
      sum[i] = (sum[i] as number) + (u[i] as number) - (old === undefined ? 0 : (old[i] as number));
    if (held) {
      if (this.#incValid && this.#wasGroup[slot] === NOT_WRITTEN)
        this.#wasGroup[slot] = this.#groupOf[slot] as number;
      this.#leave(slot);
    }
    this.#m.setRow(slot, u);
    // The row this slot held (or held before a `clearHistory`) is no one's now.
    this.#spare = this.#rows[slot];
    this.#spareWords = this.#words[slot];
    this.#rows[slot] = u;
    this.#words[slot] = w;
    this.#join(slot);
    if (this.#incValid) this.#dirty.push(slot);
    this.#next = (slot + 1) % this.capacity;
    if (this.#count < this.capacity) this.#count++;
    this.#sinceCal++;
    if (this.#recalEvery > 0 && this.#sinceCal >= this.#recalEvery && this.#referenceSize > 0)
      this.recalibrate();
  }

  /** Forget every held query (e.g. before a triggered calibration). */
  clearHistory(): void {
    this.#invalidate();
    this.#count = 0;
    this.#next = 0;
    this.#sum.fill(0);
    this.#groupOf.fill(-1);
    this.#gCount.length = 0;
    this.#gHead.length = 0;
    this.#gBorn.length = 0;
    this.#gSeen.length = 0;
    this.#gHash.length = 0;
    this.#byHash.clear();
    this.#gFree = [];
    this.#gReserved = [];
    this.#groups = 0;
  }

  /**
   * The incremental state no longer describes the history (the next scoring recomputes every
   * maximum): what was kept for rolling it forward is dropped.
   */
  #invalidate(): void {
    this.#incValid = false;
    this.#endInterval();
  }

  /** The slots written since the last recalibration are forgotten (valid or not). */
  #endInterval(): void {
    for (const slot of this.#dirty) this.#wasGroup[slot] = NOT_WRITTEN;
    this.#dirty = [];
    for (const g of this.#gReserved) this.#gFree.push(g);
    this.#gReserved = [];
  }

  /** Slot `slot` (its row just written) joins the group of its content, or a new one. */
  #join(slot: number): void {
    const w = this.#words[slot] as Int32Array;
    const h = rowHash(w);
    let ids = this.#byHash.get(h);
    let g = -1;
    if (ids !== undefined)
      for (const id of ids)
        if (sameWords(this.#words[this.#gHead[id] as number] as Int32Array, w)) {
          g = id;
          break;
        }
    if (g < 0) {
      g = this.#gFree.pop() ?? this.#gCount.length;
      this.#gCount[g] = 0;
      this.#gHead[g] = -1;
      this.#gBorn[g] = this.#epoch;
      this.#gSeen[g] = 0;
      this.#gHash[g] = h;
      this.#groupRow(g, slot);
      if (ids === undefined) this.#byHash.set(h, (ids = []));
      ids.push(g);
      this.#groups++;
    }
    const head = this.#gHead[g] as number;
    this.#slotPrev[slot] = -1;
    this.#slotNext[slot] = head;
    if (head >= 0) this.#slotPrev[head] = slot;
    this.#gHead[g] = slot;
    this.#gCount[g] = (this.#gCount[g] as number) + 1;
    this.#groupOf[slot] = g;
  }

  /** Row `g` of the distinct-rows matrix holds the row of `slot` (grown as ids are added). */
  #groupRow(g: number, slot: number): void {
    let gm = this.#gM;
    if (gm === undefined || gm.capacity <= g) {
      gm = new DotMatrix(
        this.dimensions,
        Math.max(8, 2 * (g + 1)),
        this.#m.simd ? {} : { simd: false },
      );
      for (let id = 0; id < this.#gCount.length; id++) {
        const head = this.#gHead[id] as number;
        if (id !== g && (this.#gCount[id] as number) > 0)
          gm.setRow(id, this.#rows[head] as Float32Array);
      }
      this.#gM = gm;
    }
    gm.setRow(g, this.#rows[slot] as Float32Array);
  }

  /** Held slot `slot` is about to be overwritten: it leaves its group. */
  #leave(slot: number): void {
    const g = this.#groupOf[slot] as number;
    if (g < 0) return;
    this.#groupOf[slot] = -1;
    const prev = this.#slotPrev[slot] as number;
    const next = this.#slotNext[slot] as number;
    if (prev >= 0) this.#slotNext[prev] = next;
    else this.#gHead[g] = next;
    if (next >= 0) this.#slotPrev[next] = prev;
    const n = (this.#gCount[g] as number) - 1;
    this.#gCount[g] = n;
    if (n > 0) return;
    // No slot holds this content any more: unreachable by hash; the id is kept until the
    // next recalibration while the incremental state may name it (`#wasGroup`).
    const h = this.#gHash[g] as number;
    const ids = this.#byHash.get(h) as number[];
    if (ids.length === 1) this.#byHash.delete(h);
    else ids.splice(ids.indexOf(g), 1);
    this.#groups--;
    (this.#incValid ? this.#gReserved : this.#gFree).push(g);
  }

  /**
   * Calibrate on a benign reference set. With `queries`, the history is first replaced by
   * them (triggered calibration: domain-matched / triggered victim queries).
   */
  calibrate(
    reference: readonly ArrayLike<number>[],
    queries?: readonly ArrayLike<number>[],
  ): MemsadCalibration {
    // Made ready (normalised, in the kernel matrix) when first scored against a history.
    this.#reference = [];
    this.#pending = reference.filter((r) => r.length === this.dimensions);
    this.#refMax = new Float32Array(0);
    this.#refArg = new Int32Array(0);
    this.#invalidate();
    this.#sampleReference();
    if (queries !== undefined) {
      this.clearHistory();
      for (const q of queries) this.observeQuery(q);
    }
    return this.recalibrate();
  }

  /**
   * Calibrate on the current reference with `added` appended (a growing reference): the same
   * calibration as `calibrate([...reference, ...added])` with the history kept — exactly: the
   * references already held keep their maxima (rolled forward over the new queries as in a
   * rolling recalibration), only the new ones are scanned against the history, and the
   * history sum is refreshed exactly as a full calibration does.
   */
  extendReference(added: readonly ArrayLike<number>[]): MemsadCalibration {
    if (!(this.#incValid && this.#count > 0)) {
      // No maxima to roll forward: the next scoring against a history recomputes them all,
      // so the new memories wait with the others until then (`#ready`).
      for (const r of added) if (r.length === this.dimensions) this.#pending.push(r);
      this.#sampleReference();
      return this.recalibrate();
    }
    this.#ready();
    const old = this.#reference.length;
    this.#append(added.filter((r) => r.length === this.dimensions));
    this.#sampleReference();
    if (this.#incValid && this.#count > 0) {
      // The held references' maxima roll forward in `recalibrate`; the new ones are scanned
      // there against the whole history (the same history: `recalibrate` follows at once).
      this.#scanFrom = Math.min(this.#scanFrom, old);
      this.#refreshSum();
    }
    return this.recalibrate();
  }

  /** Reference memories held, made ready or not. */
  get #referenceSize(): number {
    return this.#reference.length + this.#pending.length;
  }

  /**
   * Normalise the pending reference vectors into `#reference` and the kernel matrix: what
   * `calibrate` / `extendReference` did at once before (the same rows; the maxima of the new
   * ones are set by the full recomputation that follows, the incremental state being invalid).
   */
  #ready(): void {
    const pending = this.#pending;
    if (pending.length === 0) return;
    this.#pending = [];
    this.#append(pending);
  }

  /**
   * `rows` (of the model's dimensions) normalised onto the end of the reference, its kernel
   * matrix and its maxima arrays (the new maxima are set by whoever appended: a rescan, or the
   * full recomputation an invalid incremental state forces).
   */
  #append(rows: readonly ArrayLike<number>[]): void {
    if (rows.length === 0) return;
    const old = this.#reference.length;
    for (const r of rows) this.#reference.push(normalized(r));
    const n = this.#reference.length;
    // The matrix is kept across calibrations while it is large enough (a growing reference
    // recalibrates often: a new kernel instance and its memory each time cost more than the
    // rest of a calibration); rows past n are never read.
    if (this.#refM === undefined || this.#refM.capacity < n) {
      this.#refM = new DotMatrix(
        this.dimensions,
        Math.ceil(n * 1.25),
        this.#m.simd ? {} : { simd: false },
      );
      this.#reference.forEach((r, i) => this.#refM?.setRow(i, r));
    } else for (let i = old; i < n; i++) this.#refM.setRow(i, this.#reference[i] as Float32Array);
    const max = new Float32Array(n);
    max.set(this.#refMax.subarray(0, old));
    const arg = new Int32Array(n);
    arg.set(this.#refArg.subarray(0, old));
    this.#refMax = max;
    this.#refArg = arg;
  }

  /**
   * The reference changed: its sample is made again when a flagged entry needs it (only a
   * flagged entry's certificate reads it; a growing reference is calibrated far more often).
   */
  #sampleReference(): void {
    this.#refSample = undefined;
    this.#refSampleK = 0;
    this.#refSampleStale = true;
  }

  /** The typical-query statistic samples ≤ 64 references; their sum makes it one dot product. */
  #makeSample(): void {
    this.#ready();
    this.#refSampleStale = false;
    const n = this.#reference.length;
    this.#refSample = undefined;
    this.#refSampleK = 0;
    if (n === 0) return;
    const step = Math.max(1, Math.floor(n / 64));
    const acc = new Float64Array(this.dimensions);
    let k = 0;
    for (let i = 0; i < n; i += step, k++) {
      const r = this.#reference[i] as Float32Array;
      for (let j = 0; j < acc.length; j++) acc[j] = (acc[j] as number) + (r[j] as number);
    }
    this.#refSample = Float32Array.from(acc);
    this.#refSampleK = k;
  }

  /** Recompute τ from the reference set against the current history (rolling recalibration). */
  recalibrate(): MemsadCalibration {
    this.#sinceCal = 0;
    const xs = this.#referenceScores();
    this.#lastScores = xs;
    const { mean, std } = meanStd(xs);
    const n = xs.length;
    if (n === 0 && this.#fixed === undefined) {
      // No reference (or no history to score it against): nothing to set τ from — abstain.
      this.#cal = undefined;
      return {
        mean,
        std,
        threshold: Number.POSITIVE_INFINITY,
        epsilon: Number.POSITIVE_INFINITY,
        n,
      };
    }
    // Theorem 11: τ̂ − τ = (μ̂ − μ) + κ(σ̂ − σ). Gaussian tail for the mean, σ·√(2x/n); Laurent–
    // Massart for the variance, |σ̂ − σ| ≤ σ·|σ̂²/σ² − 1| ≤ σ·(2√(x/n) + 2x/n); a union bound
    // over the four one-sided events at δ/4 each, x = ln(4/δ). A fixed τ is not estimated: no
    // κ·σ term. (Issue 19: the κ·σ term was missing, so the radius was optimistic.)
    const x = Math.log(4 / this.#delta);
    const epsilon =
      n > 0
        ? std * Math.sqrt((2 * x) / n) +
          (this.#fixed === undefined ? this.kappa * std * (2 * Math.sqrt(x / n) + (2 * x) / n) : 0)
        : Number.POSITIVE_INFINITY;
    this.#cal = { mean, std, threshold: this.#fixed ?? mean + this.kappa * std, epsilon, n };
    return this.#cal;
  }

  /**
   * The deployed score of every reference against the current history (empty when there is
   * no history): incrementally from the last recalibration when that is valid, else in full.
   */
  #referenceScores(): Float64Array {
    const n = this.#count;
    if (n === 0 || this.#referenceSize === 0) {
      this.#invalidate();
      return new Float64Array(0);
    }
    this.#ready();
    const R = this.#reference.length;
    if (this.#incValid) this.#updateMaxima();
    else this.#recomputeMaxima();
    this.#incValid = true;
    this.#endInterval();
    this.#scanFrom = R;
    // Every group held now was held at this recalibration.
    this.#epoch++;
    // Mean part: r · Σq / n for every reference in one kernel pass.
    const means = (this.#refM as DotMatrix).dots(this.#sum, R, 1 / n);
    const out = new Float64Array(R);
    const a = this.alpha;
    for (let i = 0; i < R; i++) {
      const max = this.#refMax[i] as number;
      const mean = means[i] as number;
      out[i] = this.mode === 'max' ? max : this.mode === 'mean' ? mean : a * max + (1 - a) * mean;
    }
    return out;
  }

  /** Every reference's max over the whole history. */
  #recomputeMaxima(): void {
    this.#refreshSum();
    const R = this.#reference.length;
    this.#rescanMany(new Uint8Array(R).fill(1), R);
  }

  /**
   * Rescan the references marked in `stale` (`n` of them) against the whole history, by the
   * cheaper of two equal computations: one kernel pass over the history per stale reference,
   * or one pass over the reference per DISTINCT held row (a repeated query — a cached query
   * asked again — held in many slots is scored once: its group's first slot). Either way each
   * max is the max of the same products: the kernel's dot product is symmetric in its two
   * operands at scale 1 (each lane multiplies the two floats, a commutative IEEE operation,
   * and the sums run in index order whichever operand is the query row; tested in
   * test/core/detect/incremental-calibration.test.ts), so the maxima are identical; only the
   * attaining slot may differ among equal values.
   */
  #rescanMany(stale: Uint8Array, n: number): void {
    if (n === 0) return;
    const R = this.#reference.length;
    if (this.#groups * R >= n * this.#gCount.length) {
      for (let i = 0; i < R; i++) if (stale[i] === 1) this.#rescan(i);
      return;
    }
    const refM = this.#refM as DotMatrix;
    for (let i = 0; i < R; i++) {
      if (stale[i] !== 1) continue;
      this.#refMax[i] = Number.NEGATIVE_INFINITY;
      this.#refArg[i] = 0;
    }
    for (let g = 0; g < this.#gCount.length; g++) {
      if ((this.#gCount[g] as number) === 0) continue;
      const slot = this.#gHead[g] as number;
      const sims = refM.dots(this.#rows[slot] as Float32Array, R);
      this.#work.referencePasses++;
      for (let i = 0; i < R; i++) {
        if (stale[i] !== 1) continue;
        const s = sims[i] as number;
        if (s > (this.#refMax[i] as number)) {
          this.#refMax[i] = s;
          this.#refArg[i] = slot;
        }
      }
    }
  }

  /** Refresh the history sum exactly (no drift from many add/subtract steps). */
  #refreshSum(): void {
    const sum = this.#sum;
    sum.fill(0);
    for (let slot = 0; slot < this.#count; slot++) {
      const q = this.#rows[slot] as Float32Array;
      for (let i = 0; i < q.length; i++) sum[i] = (sum[i] as number) + (q[i] as number);
    }
  }

  /**
   * Max and its slot for reference `i` against the whole history: one kernel pass over the
   * distinct held rows (`#gM`, the same operands as a pass over the history's slots, each
   * distinct row once; a group no slot holds is skipped).
   */
  #rescan(i: number): void {
    const ids = this.#gCount.length;
    const sims = (this.#gM as DotMatrix).dots(this.#reference[i] as Float32Array, ids);
    this.#work.historyPasses++;
    let max = Number.NEGATIVE_INFINITY;
    let arg = 0;
    for (let g = 0; g < ids; g++) {
      if ((this.#gCount[g] as number) === 0) continue;
      const s = sims[g] as number;
      if (s > max) {
        max = s;
        arg = this.#gHead[g] as number;
      }
    }
    this.#refMax[i] = max;
    this.#refArg[i] = arg;
  }

  /**
   * Roll the maxima forward over the slots written since the last recalibration. Each
   * reference's max is, by induction, the max over the rows held at that recalibration, and
   * its slot held the attaining row then. So:
   * - a reference whose slot was not overwritten keeps its max, and takes the max with the new
   *   rows' similarities;
   * - one whose slot was overwritten, but whose attaining row is still held (bit-identical, in
   *   a surviving or a newly written slot), keeps its max too — it is still attained — and its
   *   slot moves there; it takes the new rows' similarities like the others;
   * - one whose attaining row left the history (or added since: `#scanFrom`) is rescanned;
   * - a new row held at the last recalibration too (its group formed before it and held ever
   *   since) adds nothing to any max that includes its products: it is not scored. A new row
   *   held in several new slots is scored once.
   * On ties any attaining slot will do: the max value is what counts.
   */
  #updateMaxima(): void {
    const R = this.#reference.length;
    const from = Math.min(this.#scanFrom, R);
    const stale = new Uint8Array(R);
    let nStale = R - from;
    stale.fill(1, from);
    const dirty = this.#dirty;
    if (dirty.length > 0) {
      const refM = this.#refM as DotMatrix;
      const was = this.#wasGroup;
      const arg = this.#refArg;
      for (let i = 0; i < from; i++) {
        const g = was[arg[i] as number] as number;
        if (g === NOT_WRITTEN) continue;
        if (g >= 0 && (this.#gCount[g] as number) > 0) {
          arg[i] = this.#gHead[g] as number;
          this.#work.movedMaxima++;
        } else {
          stale[i] = 1;
          nStale++;
        }
      }
      const stamp = ++this.#seenStamp;
      for (const slot of dirty) {
        const g = this.#groupOf[slot] as number;
        if (g < 0 || this.#gSeen[g] === stamp) continue;
        this.#gSeen[g] = stamp;
        if ((this.#gBorn[g] as number) < this.#epoch) {
          this.#work.skippedQueries++;
          continue;
        }
        const sims = refM.dots(this.#rows[slot] as Float32Array, R);
        this.#work.referencePasses++;
        for (let i = 0; i < R; i++) {
          if (stale[i] === 1) continue;
          const s = sims[i] as number;
          if (s > (this.#refMax[i] as number)) {
            this.#refMax[i] = s;
            arg[i] = slot;
          }
        }
      }
    }
    this.#rescanMany(stale, nStale);
  }

  /** max / mean / combined similarity of `p` against the history; undefined when empty. */
  scores(p: ArrayLike<number>): MemsadScores | undefined {
    if (this.#count === 0 || p.length !== this.dimensions) return undefined;
    let nn = 0;
    for (let i = 0; i < p.length; i++) nn += (p[i] as number) ** 2;
    if (nn === 0) return { max: 0, mean: 0, combined: 0, argmax: 0 };
    // Normalise on the copy into the kernel's buffer: no allocation per write.
    const sims = this.#m.dots(p, this.#count, 1 / Math.sqrt(nn));
    let max = Number.NEGATIVE_INFINITY;
    let arg = 0;
    let sum = 0;
    for (let i = 0; i < sims.length; i++) {
      const s = sims[i] as number;
      sum += s;
      if (s > max) {
        max = s;
        arg = i;
      }
    }
    const mean = sum / sims.length;
    const combined = this.alpha * max + (1 - this.alpha) * mean;
    return { max, mean, combined, argmax: arg };
  }

  /** The deployed score of `p` (by `mode`), or undefined when the history is empty. */
  score(p: ArrayLike<number>): number | undefined {
    const s = this.scores(p);
    return s === undefined ? undefined : this.#pick(s);
  }

  /** Judge one candidate write. Never throws. */
  detect(p: ArrayLike<number>): Finding {
    if (p.length !== this.dimensions)
      return abstain('memsad', `vector width ${p.length} ≠ ${this.dimensions}`);
    const s = this.scores(p);
    if (s === undefined) return abstain('memsad', 'empty query history');
    const cal = this.#cal;
    const threshold = this.#fixed ?? cal?.threshold;
    if (threshold === undefined) return abstain('memsad', 'not calibrated');
    const score = this.#pick(s);
    const flagged = score > threshold;
    let radius: number | undefined;
    if (flagged && cal !== undefined) {
      const r = score - threshold - cal.epsilon;
      if (r > 0 && (this.mode === 'max' || this.#typical(s.argmax))) radius = r;
    }
    return finding(
      'memsad',
      score,
      threshold,
      flagged
        ? `${this.mode} similarity to recent queries ${score.toFixed(3)} > τ ${threshold.toFixed(3)}`
        : `${this.mode} similarity ${score.toFixed(3)} ≤ τ ${threshold.toFixed(3)}`,
      radius === undefined ? { flagged } : { flagged, certifiedRadius: radius },
    );
  }

  #pick(s: MemsadScores): number {
    return this.mode === 'max' ? s.max : this.mode === 'mean' ? s.mean : s.combined;
  }

  /**
   * Assumption 9 (typical victim query): the query attaining the max is not an outlier of
   * the history, judged by its mean similarity to the reference set (within 3σ of the
   * history's mean of that statistic). A colluding user's crafted queries fail it.
   */
  #typical(argmax: number): boolean {
    const n = this.#count;
    if (n < 2 || this.#referenceSize === 0) return true;
    const stats = this.#qMean;
    for (let slot = 0; slot < n; slot++) stats[slot] = this.#queryStat(slot);
    const { mean, std } = meanStd(stats.subarray(0, n));
    const q = stats[argmax] as number;
    return Math.abs(q - mean) <= 3 * Math.max(std, 1e-6);
  }

  /**
   * Mean cos(q, r) over a bounded sample of the reference set (≤ 64), as q · Σr / k: O(d) per
   * query. Computed lazily, for the history as it is, when a flagged entry needs it.
   */
  #queryStat(slot: number): number {
    if (this.#refSampleStale) this.#makeSample();
    const sample = this.#refSample;
    if (sample === undefined || this.#refSampleK === 0) return 0;
    return dotProduct(sample, this.#rows[slot] as Float32Array) / this.#refSampleK;
  }
}

/**
 * A 30-bit hash of a row's 32-bit words: FNV-1a in four interleaved lanes (words i, i+1, i+2,
 * i+3 mod 4; four independent multiply chains instead of one), folded. 30 bits keep it a small
 * integer, which a map stores unboxed (a wider key costs an allocation per lookup).
 */
export function rowHash(w: Int32Array): number {
  const P = 0x01000193;
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  let c = 0x2b1f3c4d;
  let d = 0x1e3779b9;
  const n = w.length;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    a = Math.imul(a ^ (w[i] as number), P);
    b = Math.imul(b ^ (w[i + 1] as number), P);
    c = Math.imul(c ^ (w[i + 2] as number), P);
    d = Math.imul(d ^ (w[i + 3] as number), P);
  }
  for (; i < n; i++) a = Math.imul(a ^ (w[i] as number), P);
  const h = Math.imul(Math.imul(Math.imul(a ^ b, P) ^ c, P) ^ d, P);
  return (h ^ (h >>> 15)) & 0x3fffffff;
}

/** Bit-identical rows (equal length), compared 8 words per test. */
function sameWords(a: Int32Array, b: Int32Array): boolean {
  const n = a.length;
  if (b.length !== n) return false;
  let i = 0;
  for (; i + 7 < n; i += 8) {
    const x =
      ((a[i] as number) ^ (b[i] as number)) |
      ((a[i + 1] as number) ^ (b[i + 1] as number)) |
      ((a[i + 2] as number) ^ (b[i + 2] as number)) |
      ((a[i + 3] as number) ^ (b[i + 3] as number)) |
      ((a[i + 4] as number) ^ (b[i + 4] as number)) |
      ((a[i + 5] as number) ^ (b[i + 5] as number)) |
      ((a[i + 6] as number) ^ (b[i + 6] as number)) |
      ((a[i + 7] as number) ^ (b[i + 7] as number));
    if (x !== 0) return false;
  }
  for (; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}
