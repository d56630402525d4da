/**
 * @module core/vector
 * An in-memory cosine-similarity index over unit-normalised float32 vectors, keyed by
 * non-negative integer handles: what the read model serves searches from without a database
 * round trip (ADR 0017).
 *
 * Storage: every vector lives in one private {@link DotArena} (a WebAssembly linear memory,
 * or a plain Float32Array when SIMD is off), `stride` floats per row, rows grouped by list,
 * each list contiguous with room to grow (swap-remove keeps it dense; a full list moves to
 * the end of the arena with 1.5× the room; the arena is compacted when the holes left behind
 * pass a quarter of the live rows). No per-vector objects: a row's key and list sit in typed arrays, and one
 * `Map<key, slot>` finds a row. Memory: 4·stride bytes per vector + ~40 bytes of bookkeeping.
 *
 * Search: `q·row` for a whole block of rows per kernel call (SIMD), into a small output
 * buffer; a bounded heap keeps the best `k` accepted keys (ties broken by the smaller key, so
 * results do not depend on storage order).
 *
 * Modes. Below `exactBelow` vectors there is one list and a search scans it all (exact).
 * Crossing it trains an IVF: ~√n spherical k-means centroids (`kmeans.ts`, seeded), every
 * vector in the list of its nearest centroid; a search ranks the centroids (one kernel call)
 * and scans the nearest lists: at least `nprobe`, more while their centroid scores within
 * `probeGap` of the nearest (up to `maxProbe`), and more while fewer than `k` accepted hits
 * were found (ADR 0020). An add goes to its nearest list.
 *
 * Rebuilds never stop the world (ADR 0020). The lists are retrained when the index has doubled
 * since the last training, folded back into one exact list when it shrinks below
 * `exactBelow / 2`, and compacted when moved lists left too many holes. A rebuild runs in
 * slices of a fixed amount of work (`sliceWork` multiply-adds, ≈ 1 ms), one slice per add,
 * remove and search while it is under way (and more through {@link FlatListIndex.maintain}):
 * sample → k-means on the sample → fill a second layout beside the current one, which keeps
 * serving every search and absorbing every change; changes during the fill go to both
 * layouts; when the fill is done the new layout replaces the old at once. Work is counted in
 * multiply-adds, not time, so the same operations always build the same lists.
 */
import { descending } from '../compare.js';
import { DotArena, simdAvailable, strideOf } from './kernel.js';
import { mulberry32 } from '../prng.js';
import { KMeansTrainer, MAX_SAMPLE } from './kmeans.js';

export interface VectorHit {
  readonly key: number;
  readonly score: number;
}

export interface VectorIndex {
  readonly dimensions: number;
  readonly size: number;
  /** Add or replace `key` (a non-negative integer handle). `v` need not be normalised: the
   *  index stores it unit-normalised; a zero / non-finite vector is refused (RangeError). */
  add(key: number, v: ArrayLike<number>): void;
  /**
   * Add many at once (a bulk load): like `add` for each pair in order, except that a refused
   * vector (zero, non-finite, wrong width) is skipped and its position returned instead of
   * thrown, and the index plans its next rebuild once, after all of them — so loading n vectors
   * trains once for the final size instead of at every doubling on the way. A bad key is a
   * RangeError before anything changes.
   */
  addMany(keys: ArrayLike<number>, vectors: readonly ArrayLike<number>[]): number[];
  /** Remove `key`; false when absent. */
  remove(key: number): boolean;
  has(key: number): boolean;
  /** Up to `k` keys with the highest cosine similarity to `q`, best first, skipping keys for
   *  which `accept(key)` is false (the filter runs during the scan, so k accepted hits are
   *  returned whenever k exist in the scanned lists). With `minScore`: exactly the hits of the
   *  same search without it whose score is ≥ `minScore` (the same lists are scanned; a row the
   *  byte bound puts below `minScore` is never scored in floats). */
  search(
    q: ArrayLike<number>,
    k: number,
    accept?: (key: number) => boolean,
    minScore?: number,
  ): VectorHit[];
  /** Advance a rebuild under way (retraining, compaction) by up to `slices` bounded slices of
   *  work (≈ 1 ms each; Infinity: finish it); true while one remains. Optional for callers:
   *  every add, remove and search already does one slice while a rebuild is under way. */
  maintain(slices?: number): boolean;
}

export interface VectorIndexOptions {
  /** false: the JavaScript kernel even where WebAssembly SIMD is available (tests). */
  readonly simd?: boolean;
  /** Exact scan below this many vectors, IVF from it on (default 4,096; Infinity: always exact). */
  readonly exactBelow?: number;
  /** IVF lists a search scans at least, nearest centroids first (default 6)… */
  readonly nprobe?: number;
  /** …then further lists while their centroid's score is within `probeGap` of the nearest
   *  centroid's (default 0.25; 0: only ties), up to `maxProbe` lists (default 32, at least
   *  `nprobe`). More: better recall, slower search. */
  readonly probeGap?: number;
  readonly maxProbe?: number;
  /** IVF lists at training: a function of the size (default round(√n)). */
  readonly lists?: (size: number) => number;
  /** k-means: Lloyd iterations (default 6) on a sample of this many rows per list (default 64;
   *  at most 16,384 rows in all). */
  readonly iterations?: number;
  readonly samplePerList?: number;
  /** The k-means PRNG seed (default fixed: the same operations build the same lists). */
  readonly seed?: number;
  /** false: score every scanned row in floats (no signed-byte prefilter; tests, A/B). The
   *  prefilter changes no result: it skips only rows whose bound proves they cannot enter. */
  readonly prefilter?: boolean;
  /** Rebuild work per call while a rebuild is under way, in multiply-adds (default 2²²,
   *  ≈ 1 ms of the SIMD kernel): what bounds the pause a rebuild adds to any one call. */
  readonly sliceWork?: number;
}

/** Rows per kernel call: the output block stays in L1. */
const CHUNK = 1024;
const MIN_LIST_ROOM = 8;
const DEFAULTS = {
  exactBelow: 4096,
  nprobe: 6,
  probeGap: 0.25,
  maxProbe: 32,
  iterations: 6,
  samplePerList: 64,
  seed: 0x5eed,
  /** ≈ 1 ms of the SIMD kernel on a 2020s core (≈ 4 multiply-adds per ns). */
  sliceWork: 1 << 22,
};
const defaultLists = (n: number): number => Math.round(Math.sqrt(n));
/**
 * Rebuild work is counted in kernel multiply-adds; a float copied (into fresh memory, page
 * faults and all) costs about this many, and a key looked up about `KEY_WORK` (measured).
 */
const COPY_WORK = 16;
const KEY_WORK = 256;

/** Create an index of `dimensions`-wide vectors (an integer from 1 to 65,536). */
export function createVectorIndex(dimensions: number, opts: VectorIndexOptions = {}): VectorIndex {
  return new FlatListIndex(dimensions, opts);
}

/**
 * One arrangement of the vectors: an arena of rows grouped in `nlist` lists (1: exact), the
 * centroids when there are several, and the row bookkeeping. The index searches one layout
 * and, while it rebuilds, fills a second one beside it.
 */
class Layout {
  readonly arena: DotArena;
  /**
   * The rows again as signed bytes (the int8 prefilter): `stride8` bytes per slot from byte
   * `rows8At`, the query quantised to 16-bit integers at byte 0 (`2·stride8` bytes) and the
   * integer outputs after it. Per slot: the
   * step (1/scale), the norm of the quantisation error and the row's norm, for the bound.
   */
  readonly arena8: DotArena;
  readonly prefilter: boolean;
  /** Slots the byte rows have room for (0 without the prefilter: no byte copy is kept). */
  slots8: number;
  readonly stride8: number;
  /** Largest magnitude of the query's 16-bit lanes (32767 unless the rows are very wide). */
  readonly q16Max: number;
  readonly out8At: number;
  readonly rows8At: number;
  slotInv: Float64Array;
  slotErr: Float64Array;
  slotNorm: Float64Array;
  /** Scratch of a chunk's scan: each row's bound, and the candidates' order keys. */
  #ubs: Float64Array | undefined;
  #order: Float64Array | undefined;
  /** The quantised query of the current search: set on first use after `setQuery`. */
  #q8 = false;
  #qInv = 0;
  #qErr = 0;
  #qNorm = 0;
  readonly nlist: number;
  readonly stride: number;
  /** Float offsets: the query row at 0, the output block, the centroids, the first row slot. */
  readonly outAt: number;
  readonly centAt: number;
  readonly rowsAt: number;
  /** Row slots the arena holds, the next never-used slot, and slots lost to moved lists. */
  slotCap: number;
  top: number;
  holes = 0;
  slotKey: Float64Array;
  slotList: Int32Array;
  /** Per list: first slot, live rows, room. */
  readonly lStart: Int32Array;
  readonly lCount: Int32Array;
  readonly lCap: Int32Array;
  readonly slots = new Map<number, number>();

  /** `caps[l]`: the room list `l` starts with. */
  constructor(
    stride: number,
    simd: boolean,
    centroids: Float32Array | null,
    caps: Int32Array,
    prefilter: boolean,
  ) {
    const nlist = caps.length;
    this.nlist = nlist;
    this.stride = stride;
    this.outAt = stride;
    this.centAt = this.outAt + Math.max(CHUNK, Math.ceil(nlist / 8) * 8);
    this.rowsAt = nlist > 1 ? this.centAt + nlist * stride : this.centAt;
    this.lStart = new Int32Array(nlist);
    this.lCount = new Int32Array(nlist);
    this.lCap = Int32Array.from(caps);
    let total = 0;
    for (let l = 0; l < nlist; l++) {
      this.lStart[l] = total;
      total += caps[l] as number;
    }
    this.slotCap = total;
    this.top = total;
    this.slotKey = new Float64Array(total);
    this.slotList = new Int32Array(total);
    this.arena = new DotArena(this.rowsAt + total * stride, simd ? {} : { simd: false });
    this.stride8 = Math.ceil(stride / 32) * 32;
    // The query as 16-bit integers (2 bytes a lane), then the integer outputs, then the rows.
    this.out8At = (2 * this.stride8) / 4; // in 32-bit words
    this.rows8At = 2 * this.stride8 + CHUNK * 4;
    // The query's integer range: Σ_j |row byte|·|query lane| must stay below 2³¹ in the kernel.
    this.q16Max = Math.min(32767, Math.floor(0x7fffffff / (127 * this.stride8)));
    this.slotInv = new Float64Array(prefilter ? total : 0);
    this.slotErr = new Float64Array(prefilter ? total : 0);
    this.slotNorm = new Float64Array(prefilter ? total : 0);
    // With the SIMD kernel only: the JavaScript byte loop is no faster than the float one.
    this.prefilter = prefilter && simd && simdAvailable();
    this.slots8 = this.prefilter ? total : 0;
    this.arena8 = new DotArena(
      Math.ceil((this.rows8At + this.slots8 * this.stride8) / 4),
      simd ? {} : { simd: false },
    );
    if (nlist > 1 && centroids !== null) this.arena.f32.set(centroids, this.centAt);
  }

  get size(): number {
    return this.slots.size;
  }

  /** Put a unit vector (`stride` floats, zero-padded) in the query row. */
  setQuery(u: Float32Array): void {
    this.arena.f32.set(u, 0);
    this.#q8 = false;
  }

  /** The list of the nearest centroid to the query row. */
  nearest(): number {
    const nlist = this.nlist;
    if (nlist === 1) return 0;
    this.arena.dots(this.centAt, 0, this.outAt, nlist, this.stride);
    const F = this.arena.f32;
    const o = this.outAt;
    let best = 0;
    let bs = F[o] as number;
    for (let c = 1; c < nlist; c++) {
      const x = F[o + c] as number;
      if (x > bs) {
        bs = x;
        best = c;
      }
    }
    return best;
  }

  /** Store the query row as `key` in `list` (replacing `key` if present). */
  put(key: number, list: number): void {
    const old = this.slots.get(key);
    let slot: number;
    if (old !== undefined && this.slotList[old] === list) slot = old;
    else {
      if (old !== undefined) this.#removeSlot(old, key);
      slot = this.#reserve(list);
      this.slotKey[slot] = key;
      this.slotList[slot] = list;
      this.slots.set(key, slot);
    }
    const st = this.stride;
    this.arena.f32.copyWithin(this.rowsAt + slot * st, 0, st);
    if (!this.prefilter) return;
    const q = quantize(
      this.arena.f32,
      0,
      st,
      this.arena8.i8,
      this.rows8At + slot * this.stride8,
      this.stride8,
      127,
    );
    this.slotInv[slot] = q.inv;
    this.slotErr[slot] = q.err;
    this.slotNorm[slot] = q.norm;
  }

  delete(key: number): boolean {
    const slot = this.slots.get(key);
    if (slot === undefined) return false;
    this.#removeSlot(slot, key);
    return true;
  }

  /** Live keys, list by list. */
  liveKeys(): Float64Array {
    const out = new Float64Array(this.slots.size);
    let i = 0;
    for (let l = 0; l < this.nlist; l++) {
      const start = this.lStart[l] as number;
      out.set(this.slotKey.subarray(start, start + (this.lCount[l] as number)), i);
      i += this.lCount[l] as number;
    }
    return out;
  }

  /** Centroid scores of the query row (a fresh array: the output block is reused by scans). */
  rankLists(): Float32Array {
    this.arena.dots(this.centAt, 0, this.outAt, this.nlist, this.stride);
    return this.arena.f32.slice(this.outAt, this.outAt + this.nlist);
  }

  /**
   * Scan every row of `list` against the query row into `top`; how many entered it. With the
   * SIMD kernel the list's rows are first scored in signed bytes (a quarter of the memory traffic — the exact scan is bound by it) and
   * only a row whose score could still reach `top` (every row while `top` is not full) is scored
   * exactly: with a = the byte score,
   * e / f the row's / query's quantisation error vectors, |r·q − a| ≤ ‖e‖‖q‖ + ‖r‖‖f‖ + ‖e‖‖f‖
   * (Cauchy–Schwarz), plus a margin for the float kernel's own rounding. A row is skipped only
   * when that upper bound is below the worst kept score — which the exact scan would also have
   * skipped — so `top` ends exactly as the exact scan leaves it, scores bit for bit (the same
   * kernel scores the same row).
   */
  scanList(list: number, top: TopK, accept: ((key: number) => boolean) | undefined): number {
    if (this.prefilter) return this.#scanList8(list, top, accept);
    const arena = this.arena;
    const F = arena.f32;
    const keys = this.slotKey;
    const stride = this.stride;
    const outAt = this.outAt;
    const start = this.lStart[list] as number;
    const count = this.lCount[list] as number;
    let pushed = 0;
    for (let c = 0; c < count; c += CHUNK) {
      const m = Math.min(CHUNK, count - c);
      arena.dots(this.rowsAt + (start + c) * stride, 0, outAt, m, stride);
      for (let r = 0; r < m; r++) {
        const s = F[outAt + r] as number;
        if (top.full && s < top.minScore) continue;
        if (top.offer(s, keys[start + c + r] as number, accept)) pushed++;
      }
    }
    return pushed;
  }

  #scanList8(list: number, top: TopK, accept: ((key: number) => boolean) | undefined): number {
    const st = this.stride;
    const st8 = this.stride8;
    const arena = this.arena;
    const arena8 = this.arena8;
    if (!this.#q8) {
      const q = quantize(arena.f32, 0, st, arena8.i16, 0, st8, this.q16Max);
      this.#qInv = q.inv;
      this.#qErr = q.err;
      this.#qNorm = q.norm;
      this.#q8 = true;
    }
    const qInv = this.#qInv;
    const qErr = this.#qErr;
    const qNorm = this.#qNorm;
    const F = arena.f32;
    const keys = this.slotKey;
    const inv = this.slotInv;
    const err = this.slotErr;
    const norm = this.slotNorm;
    const outAt = this.outAt;
    const out8 = this.out8At;
    const start = this.lStart[list] as number;
    const count = this.lCount[list] as number;
    const floor = top.floor;
    const ubs = (this.#ubs ??= new Float64Array(CHUNK));
    const order = (this.#order ??= new Float64Array(CHUNK));
    let pushed = 0;
    for (let c = 0; c < count; c += CHUNK) {
      const m = Math.min(CHUNK, count - c);
      arena8.dots8(this.rows8At + (start + c) * st8, 0, out8, m, st8);
      const I = arena8.i32;
      // Pass 1: each row's bound; rows it puts below the worst kept score (once k are kept) or
      // below the floor are not scored in floats — one below the floor still counts as found
      // (`below`) — the others are candidates.
      const cut0 = top.full ? Math.max(top.minScore, floor) : floor;
      let nc = 0;
      for (let r = 0; r < m; r++) {
        const slot = start + c + r;
        const e = err[slot] as number;
        const ub =
          (I[out8 + r] as number) * (inv[slot] as number) * qInv +
          e * qNorm +
          (norm[slot] as number) * qErr +
          e * qErr +
          SCORE_SLACK;
        if (ub < cut0) {
          if (!top.full) top.below(keys[slot] as number, accept);
          continue;
        }
        ubs[r] = ub;
        // Highest bound first (below): the kept scores rise fastest, so more of the remaining
        // candidates fall under the worst kept one by their bound alone. The order only saves
        // work: every candidate is checked against the bound again, and the best k of a set
        // do not depend on the order they are offered in (ties go to the smaller key).
        order[nc++] = ubOrderKey(ub) * CHUNK + r;
      }
      if (nc > SMALL_SORT) order.subarray(0, nc).sort();
      else
        for (let i = 1; i < nc; i++) {
          // A few candidates (the common case): insertion sort, without the engine's sort
          // (which allocates per call) — the same ascending order of distinct keys.
          const x = order[i] as number;
          let j = i - 1;
          for (; j >= 0 && (order[j] as number) > x; j--) order[j + 1] = order[j] as number;
          order[j + 1] = x;
        }
      // Pass 2: the candidates, highest bound first, scored exactly while their bound can
      // still reach the kept scores.
      for (let i = nc - 1; i >= 0; i--) {
        const r = (order[i] as number) % CHUNK;
        const slot = start + c + r;
        const cut = top.full ? Math.max(top.minScore, floor) : floor;
        if ((ubs[r] as number) < cut) {
          if (!top.full) top.below(keys[slot] as number, accept);
          continue;
        }
        arena.dots(this.rowsAt + slot * st, 0, outAt, 1, st);
        const s = F[outAt] as number;
        if (top.full && s < top.minScore) continue;
        if (top.offer(s, keys[slot] as number, accept)) pushed++;
      }
    }
    return pushed;
  }

  /** A free slot at the end of `list` (growing or moving the list when it is full). */
  #reserve(list: number): number {
    const count = this.lCount[list] as number;
    const cap = this.lCap[list] as number;
    const start = this.lStart[list] as number;
    if (count === cap) {
      const room = Math.max(MIN_LIST_ROOM, Math.ceil(cap * 1.5));
      if (start + cap === this.top) {
        this.#ensureSlots(start + room);
        this.top = start + room;
      } else {
        const to = this.top;
        this.#ensureSlots(to + room);
        this.#moveRows(start, to, count);
        this.holes += cap;
        this.lStart[list] = to;
        this.top = to + room;
      }
      this.lCap[list] = room;
    }
    const slot = (this.lStart[list] as number) + count;
    this.lCount[list] = count + 1;
    return slot;
  }

  /** Move `n` rows (vectors and bookkeeping) from slot `from` to slot `to`. */
  #moveRows(from: number, to: number, n: number): void {
    const st = this.stride;
    const F = this.arena.f32;
    F.copyWithin(this.rowsAt + to * st, this.rowsAt + from * st, this.rowsAt + (from + n) * st);
    if (this.prefilter) {
      const st8 = this.stride8;
      this.arena8.i8.copyWithin(
        this.rows8At + to * st8,
        this.rows8At + from * st8,
        this.rows8At + (from + n) * st8,
      );
      this.slotInv.copyWithin(to, from, from + n);
      this.slotErr.copyWithin(to, from, from + n);
      this.slotNorm.copyWithin(to, from, from + n);
    }
    this.slotKey.copyWithin(to, from, from + n);
    this.slotList.copyWithin(to, from, from + n);
    for (let i = 0; i < n; i++) this.slots.set(this.slotKey[to + i] as number, to + i);
  }

  #ensureSlots(slots: number): void {
    if (slots <= this.slotCap) return;
    const cap = Math.max(slots, Math.ceil(this.slotCap * 1.5), 64);
    this.arena.ensure(this.rowsAt + cap * this.stride);
    if (this.prefilter) {
      this.arena8.ensure(Math.ceil((this.rows8At + cap * this.stride8) / 4));
      this.slots8 = cap;
      const grow = (a: Float64Array): Float64Array => {
        const b = new Float64Array(cap);
        b.set(a);
        return b;
      };
      this.slotInv = grow(this.slotInv);
      this.slotErr = grow(this.slotErr);
      this.slotNorm = grow(this.slotNorm);
    }
    const keys = new Float64Array(cap);
    keys.set(this.slotKey);
    this.slotKey = keys;
    const lists = new Int32Array(cap);
    lists.set(this.slotList);
    this.slotList = lists;
    this.slotCap = cap;
  }

  /** Swap-remove: the list's last row fills the hole. */
  #removeSlot(slot: number, key: number): void {
    const list = this.slotList[slot] as number;
    const last = (this.lStart[list] as number) + (this.lCount[list] as number) - 1;
    if (slot !== last) {
      const st = this.stride;
      this.arena.f32.copyWithin(
        this.rowsAt + slot * st,
        this.rowsAt + last * st,
        this.rowsAt + (last + 1) * st,
      );
      if (this.prefilter) {
        const st8 = this.stride8;
        this.arena8.i8.copyWithin(
          this.rows8At + slot * st8,
          this.rows8At + last * st8,
          this.rows8At + (last + 1) * st8,
        );
        this.slotInv[slot] = this.slotInv[last] as number;
        this.slotErr[slot] = this.slotErr[last] as number;
        this.slotNorm[slot] = this.slotNorm[last] as number;
      }
      const moved = this.slotKey[last] as number;
      this.slotKey[slot] = moved;
      this.slots.set(moved, slot);
    }
    this.lCount[list] = (this.lCount[list] as number) - 1;
    this.slots.delete(key);
  }
}

/**
 * A bound as a non-negative integer in the same order (up to 2⁻³² — the order only steers
 * which candidates are scored first): room for {@link CHUNK} row numbers below it in a double.
 * Bounds of unit rows lie in about ±1.01; anything outside ±8 is clamped.
 */
function ubOrderKey(ub: number): number {
  const x = ub > -8 ? (ub < 8 ? ub : 8) : ub === ub ? -8 : 8; // NaN (never): first
  return Math.floor((x + 8) * 2 ** 32);
}

/**
 * Added to the byte-score bound: covers the float kernel's rounding of an exact score (about
 * 50·2⁻²⁴ for unit rows of any width the arena holds, with its per-lane sums) many times over.
 */
const SCORE_SLACK = 1e-4;
/** Candidates of a chunk up to this many are ordered by insertion, more by the native sort. */
const SMALL_SORT = 48;

/**
 * Signed integers of F[off .. off+st) into Q[b .. b+st8) (zero padded): round(x·qMax/max|x|) —
 * bytes (qMax = 127) for a stored row, 16-bit lanes for the query (qMax ≤ 32767; its error is
 * ≈ 1/258 of a byte quantisation's at 32767, so the bound's query terms nearly vanish).
 * Returns the step (max|x|/qMax, the float one unit stands for), ‖x − q·step‖ and ‖x‖, all in
 * float64 from the stored floats.
 */
function quantize(
  F: Float32Array,
  off: number,
  st: number,
  Q: Int8Array | Int16Array,
  b: number,
  st8: number,
  qMax: number,
): { inv: number; err: number; norm: number } {
  let max = 0;
  for (let i = 0; i < st; i++) {
    const a = Math.abs(F[off + i] as number);
    if (a > max) max = a;
  }
  Q.fill(0, b + st, b + st8);
  if (max === 0) {
    Q.fill(0, b, b + st);
    return { inv: 0, err: 0, norm: 0 };
  }
  const scale = qMax / max;
  const inv = max / qMax;
  let e2 = 0;
  let n2 = 0;
  for (let i = 0; i < st; i++) {
    const x = F[off + i] as number;
    const q = Math.round(x * scale); // |x·scale| ≤ qMax (+ rounding): −qMax … qMax
    Q[b + i] = q;
    const e = x - q * inv;
    e2 += e * e;
    n2 += x * x;
  }
  return { inv, err: Math.sqrt(e2), norm: Math.sqrt(n2) };
}

/** Room for `count` rows now and some growth. */
const roomFor = (count: number): number => count + Math.max(MIN_LIST_ROOM, Math.ceil(count / 8));

/**
 * A rebuild in progress. `train`: sample → Lloyd iterations → fill; `compact` (same lists,
 * no holes) and `fold` (back to one exact list): fill only. The fill copies every row of the
 * current layout into `next`, keys taken from a snapshot; mutations meanwhile go to both
 * layouts, so a key already in `next` or gone from the current layout is skipped.
 */
interface Job {
  readonly kind: 'train' | 'compact' | 'fold';
  phase: 'sample' | 'lloyd' | 'fill';
  trainer: KMeansTrainer | null;
  keys: Float64Array;
  at: number;
  next: Layout | null;
}

class FlatListIndex implements VectorIndex {
  readonly dimensions: number;
  readonly #stride: number;
  readonly #simd: boolean;
  readonly #opts: Required<Omit<VectorIndexOptions, 'simd' | 'prefilter'>>;
  readonly #prefilter: boolean;
  /** The layout searches use; it always holds every vector. */
  #cur: Layout;
  #job: Job | null = null;
  /** The normalised input vector, zero-padded to the stride. */
  readonly #unit: Float32Array;
  /** Size at the last training's start, trainings completed, rebuilds started (seeds). */
  #trainedAt = 0;
  #trainings = 0;
  #jobs = 0;

  constructor(dimensions: number, opts: VectorIndexOptions) {
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 65536)
      throw new RangeError('vector index: dimensions must be an integer from 1 to 65536');
    this.dimensions = dimensions;
    this.#stride = strideOf(dimensions);
    this.#simd = opts.simd !== false;
    const exactBelow = opts.exactBelow ?? DEFAULTS.exactBelow;
    if (!(exactBelow >= 2)) throw new RangeError('vector index: exactBelow must be ≥ 2');
    const nprobe = opts.nprobe ?? DEFAULTS.nprobe;
    if (!Number.isInteger(nprobe) || nprobe < 1)
      throw new RangeError('vector index: nprobe must be an integer ≥ 1');
    const probeGap = opts.probeGap ?? DEFAULTS.probeGap;
    const maxProbe = opts.maxProbe ?? Math.max(nprobe, DEFAULTS.maxProbe);
    if (!(probeGap >= 0) || !(maxProbe >= nprobe))
      throw new RangeError('vector index: probeGap must be ≥ 0 and maxProbe ≥ nprobe');
    const iterations = opts.iterations ?? DEFAULTS.iterations;
    const samplePerList = opts.samplePerList ?? DEFAULTS.samplePerList;
    if (
      !Number.isInteger(iterations) ||
      iterations < 0 ||
      !Number.isInteger(samplePerList) ||
      samplePerList < 1
    )
      throw new RangeError('vector index: bad k-means options');
    const sliceWork = opts.sliceWork ?? DEFAULTS.sliceWork;
    if (!(sliceWork >= 1)) throw new RangeError('vector index: sliceWork must be ≥ 1');
    this.#opts = {
      exactBelow,
      nprobe,
      probeGap,
      maxProbe,
      lists: opts.lists ?? defaultLists,
      iterations,
      samplePerList,
      seed: opts.seed ?? DEFAULTS.seed,
      sliceWork,
    };
    this.#unit = new Float32Array(this.#stride);
    this.#prefilter = opts.prefilter !== false;
    this.#cur = this.#layout(null, Int32Array.of(0));
  }

  get size(): number {
    return this.#cur.size;
  }

  #layout(centroids: Float32Array | null, caps: Int32Array): Layout {
    return new Layout(this.#stride, this.#simd, centroids, caps, this.#prefilter);
  }

  /** True when the WebAssembly SIMD kernel is in use. */
  get simd(): boolean {
    return this.#cur.arena.simd;
  }

  /** Layout figures (tests, bench): lists, row slots, slots lost to moves, the rebuild under way. */
  stats(): {
    lists: number;
    slots: number;
    holes: number;
    arenaBytes: number;
    trainings: number;
    rebuilding: Job['kind'] | null;
    phase: Job['phase'] | null;
  } {
    const cur = this.#cur;
    const next = this.#job?.next;
    return {
      trainings: this.#trainings,
      lists: cur.nlist,
      slots: cur.slotCap,
      holes: cur.holes,
      arenaBytes:
        (cur.arena.floats +
          cur.arena8.floats +
          (next == null ? 0 : next.arena.floats + next.arena8.floats)) *
        4,
      rebuilding: this.#job?.kind ?? null,
      phase: this.#job?.phase ?? null,
    };
  }

  has(key: number): boolean {
    return this.#cur.slots.has(key);
  }

  add(key: number, v: ArrayLike<number>): void {
    checkKey(key);
    const inv = this.#inverseNorm(v, 'vector');
    // Validated: from here on nothing throws except an arena that cannot grow.
    this.#place(key, v, inv);
    this.#afterChange();
  }

  /** Store `v·inv` under `key` in its nearest list (and in the layout a rebuild is filling). */
  #place(key: number, v: ArrayLike<number>, inv: number): void {
    const u = this.#unit;
    for (let i = 0; i < this.dimensions; i++) u[i] = (v[i] as number) * inv;
    const cur = this.#cur;
    cur.setQuery(u);
    cur.put(key, cur.nearest());
    const next = this.#job?.next;
    if (next != null) {
      next.setQuery(u);
      next.put(key, next.nearest());
    }
  }

  addMany(keys: ArrayLike<number>, vectors: readonly ArrayLike<number>[]): number[] {
    if (keys.length !== vectors.length)
      throw new RangeError('vector index: addMany needs one vector per key');
    for (let i = 0; i < keys.length; i++) checkKey(keys[i] as number);
    const refused: number[] = [];
    for (let i = 0; i < keys.length; i++) {
      const v = vectors[i] as ArrayLike<number>;
      let inv: number;
      try {
        inv = this.#inverseNorm(v, 'vector');
      } catch {
        refused.push(i);
        continue;
      }
      this.#place(keys[i] as number, v, inv);
    }
    this.#afterChange();
    return refused;
  }

  remove(key: number): boolean {
    if (!this.#cur.delete(key)) return false;
    this.#job?.next?.delete(key);
    this.#afterChange();
    return true;
  }

  /**
   * Advance a rebuild under way by up to `slices` slices of `sliceWork` multiply-adds each
   * (Infinity: finish it, and any rebuild that follows); starts one that is due. Every add,
   * remove and search already does one slice while a rebuild is under way; an owner with idle
   * time can call this to finish sooner. True while a rebuild remains.
   */
  maintain(slices = 1): boolean {
    if (this.#job === null) this.#job = this.#plan();
    for (let i = 0; i < slices && this.#job !== null; i++) {
      this.#work(this.#opts.sliceWork);
      if (this.#job === null) this.#job = this.#plan();
    }
    return this.#job !== null;
  }

  search(
    q: ArrayLike<number>,
    k: number,
    accept?: (key: number) => boolean,
    minScore?: number,
  ): VectorHit[] {
    if (!Number.isInteger(k) || k < 0)
      throw new RangeError('vector index: k must be an integer ≥ 0');
    if (minScore !== undefined && Number.isNaN(minScore))
      throw new RangeError('vector index: minScore must be a number');
    const inv = this.#inverseNorm(q, 'query');
    const cur = this.#cur;
    if (k === 0 || cur.size === 0) return [];
    const u = this.#unit;
    for (let i = 0; i < this.dimensions; i++) u[i] = (q[i] as number) * inv;
    cur.setQuery(u);
    const top = new TopK(Math.min(k, cur.size), minScore ?? Number.NEGATIVE_INFINITY);
    const nlist = cur.nlist;
    if (nlist === 1) cur.scanList(0, top, accept);
    else {
      // Lists nearest first: at least `nprobe`, then on while the next centroid scores within
      // `probeGap` of the nearest (at most `maxProbe`), and on regardless while fewer than k
      // accepted hits were found. Where the query sits clearly in a few lists the gap ends
      // the scan early; where the centroid scores are flat (no structure the lists captured)
      // it scans more, bounded by maxProbe.
      const cs = cur.rankLists();
      const { nprobe, maxProbe, probeGap } = this.#opts;
      // The head of the order a search normally probes (at most maxProbe lists once k were
      // found); the whole order only when it goes on past that.
      let order = listOrder(cs, maxProbe);
      const floor = (cs[order[0] as number] as number) - probeGap;
      let scanned = 0;
      for (let i = 0; i < nlist; i++) {
        if (i === order.length) order = listOrder(cs);
        const c = order[i] as number;
        if (top.found && scanned >= nprobe && (scanned >= maxProbe || (cs[c] as number) < floor))
          break;
        cur.scanList(c, top, accept);
        scanned++;
      }
    }
    const hits = top.sorted();
    if (this.#job !== null) this.#work(this.#opts.sliceWork);
    return hits;
  }

  /** After a mutation: one slice of the rebuild under way, or start one that is due. */
  #afterChange(): void {
    if (this.#job === null) this.#job = this.#plan();
    if (this.#job !== null) this.#work(this.#opts.sliceWork);
  }

  /** The rebuild due now, if any: fold back, retrain after doubling, or compact. */
  #plan(): Job | null {
    const cur = this.#cur;
    const n = cur.size;
    const o = this.#opts;
    const job = (kind: Job['kind'], phase: Job['phase'], keys: Float64Array): Job => {
      this.#jobs++;
      return { kind, phase, trainer: null, keys, at: 0, next: null };
    };
    if (cur.nlist > 1 && n < o.exactBelow / 2) {
      this.#trainedAt = 0;
      return job('fold', 'fill', cur.liveKeys());
    }
    if (n >= 2 * this.#trainedAt && (cur.nlist > 1 || n >= o.exactBelow)) {
      this.#trainedAt = n;
      const lists = Math.max(1, Math.min(n, Math.floor(o.lists(n))));
      if (lists < 2) return null;
      // The sample: the first `s` keys of a partial Fisher–Yates shuffle, seeded per rebuild.
      const rand = mulberry32((o.seed + this.#jobs * 0x9e3779b1) >>> 0);
      const keys = cur.liveKeys();
      const s = Math.min(n, Math.max(lists, Math.min(MAX_SAMPLE, lists * o.samplePerList)));
      for (let i = 0; i < s; i++) {
        const j = i + Math.floor(rand() * (n - i));
        const t = keys[i] as number;
        keys[i] = keys[j] as number;
        keys[j] = t;
      }
      const j = job('train', 'sample', keys.slice(0, s));
      j.trainer = new KMeansTrainer({
        dimensions: this.dimensions,
        stride: this.#stride,
        lists,
        capacity: s,
        iterations: o.iterations,
        rand,
        simd: this.#simd,
      });
      return j;
    }
    if (cur.holes > 1024 && cur.holes > n / 4) return job('compact', 'fill', new Float64Array(0));
    return null;
  }

  /** Do about `budget` multiply-adds of the rebuild; swap layouts when it is done. */
  #work(budget: number): void {
    const job = this.#job;
    if (job === null) return;
    const cur = this.#cur;
    const st = this.#stride;
    let left = budget;
    while (left > 0) {
      if (job.phase === 'sample') {
        const t = job.trainer as KMeansTrainer;
        for (; job.at < job.keys.length && left > 0; job.at++) {
          const slot = cur.slots.get(job.keys[job.at] as number);
          left -= KEY_WORK;
          if (slot === undefined) continue; // removed since the plan
          t.addSample(cur.arena.f32, cur.rowsAt + slot * st);
          left -= COPY_WORK * st;
        }
        if (job.at < job.keys.length) return;
        if (t.sampled < 2) {
          this.#job = null; // (almost) everything removed meanwhile: nothing to train on
          return;
        }
        job.phase = 'lloyd';
      } else if (job.phase === 'lloyd') {
        const t = job.trainer as KMeansTrainer;
        left -= t.step(left);
        if (!t.done) return;
        this.#startFill(job);
      } else {
        if (job.next === null) this.#startFill(job);
        const next = job.next as Layout;
        const keys = job.keys;
        const train = job.kind === 'train';
        // The byte copy's quantisation is not counted: counting it changed which calls a
        // rebuild finishes at, hence the k-means seeds and lists of later rebuilds (the vector
        // bench's MiniLM recall@10 0.994 -> 0.979); uncounted, the lists are exactly the ones
        // before the byte rows existed, and a fill slice is ~0.6 ms instead of ~0.45.
        const cost = train ? (next.nlist + COPY_WORK) * st : COPY_WORK * st;
        for (; job.at < keys.length && left > 0; job.at++) {
          const key = keys[job.at] as number;
          left -= KEY_WORK;
          if (next.slots.has(key)) continue; // added (or replaced) since the snapshot
          const slot = cur.slots.get(key);
          if (slot === undefined) continue; // removed since the snapshot
          const o = cur.rowsAt + slot * st;
          const F = next.arena.f32;
          F.set(cur.arena.f32.subarray(o, o + st), 0);
          next.put(
            key,
            train ? next.nearest() : job.kind === 'fold' ? 0 : (cur.slotList[slot] as number),
          );
          left -= cost;
        }
        if (job.at < keys.length) return;
        // Every row is in `next` (the snapshot's rows, and every change since went to both).
        this.#cur = next;
        this.#job = null;
        if (train) this.#trainings++;
        return;
      }
    }
  }

  /** Create the layout a rebuild fills, sized from the current lists or the k-means sample. */
  #startFill(job: Job): void {
    const cur = this.#cur;
    const n = cur.size;
    let caps: Int32Array;
    let centroids: Float32Array | null = null;
    if (job.kind === 'fold') caps = Int32Array.of(roomFor(n));
    else if (job.kind === 'compact') {
      caps = cur.lCount.map(roomFor);
      centroids = cur.arena.f32.slice(cur.centAt, cur.centAt + cur.nlist * this.#stride);
    } else {
      const t = job.trainer as KMeansTrainer;
      centroids = t.centroids();
      // A list's share of the sample estimates its size: room for two standard deviations more.
      const scale = n / Math.max(1, t.sampled);
      caps = t.counts().map((c) => roomFor(Math.ceil((c + 2 * Math.sqrt(c) + 1) * scale)));
      job.trainer = null;
    }
    job.next = this.#layout(centroids, caps);
    job.keys = cur.liveKeys();
    job.at = 0;
    job.phase = 'fill';
  }

  /** 1/‖v‖ after checking width and values; RangeError (and no change) otherwise. */
  #inverseNorm(v: ArrayLike<number>, what: string): number {
    if (v === null || typeof v !== 'object' || v.length !== this.dimensions)
      throw new RangeError(`vector index: ${what} must have ${this.dimensions} dimensions`);
    let max = 0;
    for (let i = 0; i < this.dimensions; i++) {
      const x = v[i];
      if (typeof x !== 'number' || !Number.isFinite(x))
        throw new RangeError(`vector index: ${what} has a non-finite value`);
      const a = Math.abs(x);
      if (a > max) max = a;
    }
    if (max === 0) throw new RangeError(`vector index: ${what} is zero`);
    // Scale by the largest magnitude first so neither tiny nor huge values under/overflow.
    let ss = 0;
    for (let i = 0; i < this.dimensions; i++) {
      const x = (v[i] as number) / max;
      ss += x * x;
    }
    return 1 / (max * Math.sqrt(ss));
  }
}

/** Lists of up to this many can be ordered by one packed numeric key per list. */
const PACKED_LISTS = 1 << 20;
const packScratch = new Float32Array(1);
const packBits = new Uint32Array(packScratch.buffer);
let packKeys = new Float64Array(0);
let packTop = new Float64Array(0);

/**
 * List numbers by centroid score, highest first, ties by the smaller number: the order of
 * `sort((a, b) => cs[b] - cs[a] || a - b)` (−0 and +0 compare equal there, and here). Each
 * list becomes one float64 key — the score's float32 bits made order-preserving as an
 * unsigned integer, times 2²⁰, plus the inverted list number — and the keys are sorted by the
 * engine's native numeric typed-array sort, without a comparator call per comparison (most of
 * the probe's cost beside the kernel).
 *
 * With `first` (< the number of lists): only the first `first` of that order, the same list
 * numbers — kept by insertion into a sorted run of `first` keys instead of sorting them all. A
 * search probes a few lists of hundreds; the engine's typed-array sort of every key was ≈ 2 % of
 * a 100k search's CPU (issue 21).
 */
export function listOrder(cs: Float32Array, first?: number): Int32Array {
  const n = cs.length;
  // Scratch reused across calls (a search runs this to its end without yielding).
  if (n < PACKED_LISTS && packKeys.length < n) packKeys = new Float64Array(n);
  const keys = n < PACKED_LISTS ? packKeys : undefined;
  for (let c = 0; keys !== undefined && c < n; c++) {
    const x = cs[c] as number;
    if (Number.isNaN(x)) {
      // NaN: the comparator's order (not a total order; kept as the comparator sort gives it).
      return comparatorOrder(cs, first);
    }
    packScratch[0] = x + 0; // −0 → +0
    const u = packBits[0] as number;
    const ord = u >= 0x80000000 ? ~u >>> 0 : u + 0x80000000;
    keys[c] = ord * PACKED_LISTS + (PACKED_LISTS - 1 - c);
  }
  if (keys === undefined) return comparatorOrder(cs, first);
  if (first !== undefined && first < n) {
    // The `first` largest keys, descending: keys are distinct (each carries its list number),
    // so the run is exactly the head of the full descending order.
    const m = Math.max(0, Math.floor(first));
    if (packTop.length < m) packTop = new Float64Array(m);
    const top = packTop;
    let size = 0;
    for (let c = 0; c < n; c++) {
      const k = keys[c] as number;
      if (size === m && !(k > (top[m - 1] as number))) continue;
      let i = size < m ? size++ : m - 1;
      for (; i > 0 && (top[i - 1] as number) < k; i--) top[i] = top[i - 1] as number;
      top[i] = k;
    }
    const out = new Int32Array(size);
    for (let i = 0; i < size; i++) out[i] = PACKED_LISTS - 1 - ((top[i] as number) % PACKED_LISTS);
    return out;
  }
  const all = keys.subarray(0, n);
  all.sort();
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const k = all[n - 1 - i] as number;
    out[i] = PACKED_LISTS - 1 - (k % PACKED_LISTS);
  }
  return out;
}

/** `listOrder` by the comparator itself (NaN scores, or too many lists to pack). */
function comparatorOrder(cs: Float32Array, first: number | undefined): Int32Array {
  const order = Array.from({ length: cs.length }, (_, i) => i);
  order.sort((a, b) => (cs[b] as number) - (cs[a] as number) || a - b);
  return Int32Array.from(first === undefined ? order : order.slice(0, Math.max(0, first)));
}

function checkKey(key: number): void {
  if (!Number.isSafeInteger(key) || key < 0)
    throw new RangeError('vector index: key must be a non-negative safe integer');
}

/**
 * The best `k` (score, key) pairs seen: a binary min-heap whose root is the worst kept pair
 * (lowest score; on equal scores the larger key), so `beats` is one comparison per row.
 *
 * With a `floor`, pairs scoring below it are not kept, but accepted keys below it are counted
 * (`below`) until k were found: `found` is then what `full` is without a floor — k accepted
 * rows scanned — so a search probes exactly the lists it probes without one, and keeps the
 * pairs of that search's top k that reach the floor (the pairs at or above a score are a
 * prefix of the ranking).
 */
class TopK {
  readonly #k: number;
  readonly #s: Float64Array;
  readonly #key: Float64Array;
  #n = 0;
  /** Accepted keys scanned below the floor, counted while fewer than k were found. */
  #under = 0;
  readonly floor: number;

  constructor(k: number, floor = Number.NEGATIVE_INFINITY) {
    this.#k = k;
    this.#s = new Float64Array(k);
    this.#key = new Float64Array(k);
    this.floor = floor;
  }

  get full(): boolean {
    return this.#n === this.#k;
  }

  /** k accepted rows were scanned (kept or below the floor). */
  get found(): boolean {
    return this.#n + this.#under >= this.#k;
  }

  /** An accepted row below the floor: counted toward `found` (accept is asked only until then). */
  below(key: number, accept: ((key: number) => boolean) | undefined): void {
    if (!this.found && (accept === undefined || accept(key))) this.#under++;
  }

  get count(): number {
    return this.#n;
  }

  /**
   * The worst kept score (−∞ until full). A field kept by `push`, not a getter: the scan reads it
   * for every candidate, and a getter that is not inlined returns a boxed double (an allocation
   * per call).
   */
  minScore = Number.NEGATIVE_INFINITY;

  /**
   * A scanned row's score: below the floor it only counts toward `found`; else it is kept if
   * it beats the worst kept pair and `accept` takes it (asked only then). True when kept.
   */
  offer(s: number, key: number, accept: ((key: number) => boolean) | undefined): boolean {
    if (s < this.floor) {
      this.below(key, accept);
      return false;
    }
    if (!this.beats(s, key) || (accept !== undefined && !accept(key))) return false;
    this.push(s, key);
    return true;
  }

  /** Would (s, key) be kept? */
  beats(s: number, key: number): boolean {
    if (this.#n < this.#k) return true;
    const m = this.#s[0] as number;
    return s > m || (s === m && key < (this.#key[0] as number));
  }

  push(s: number, key: number): void {
    const S = this.#s;
    const K = this.#key;
    if (this.#n < this.#k) {
      // sift up
      let i = this.#n++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!worse(s, key, S[p] as number, K[p] as number)) break;
        S[i] = S[p] as number;
        K[i] = K[p] as number;
        i = p;
      }
      S[i] = s;
      K[i] = key;
      if (this.#n === this.#k) this.minScore = S[0] as number;
      return;
    }
    // replace the root and sift down
    const n = this.#n;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && worse(S[r] as number, K[r] as number, S[l] as number, K[l] as number)) c = r;
      if (!worse(S[c] as number, K[c] as number, s, key)) break;
      S[i] = S[c] as number;
      K[i] = K[c] as number;
      i = c;
    }
    S[i] = s;
    K[i] = key;
    this.minScore = S[0] as number;
  }

  /** Best first. */
  sorted(): VectorHit[] {
    const out: VectorHit[] = [];
    for (let i = 0; i < this.#n; i++)
      out.push({ key: this.#key[i] as number, score: this.#s[i] as number });
    out.sort((a, b) => descending(a.score, b.score) || a.key - b.key);
    return out;
  }
}

/** Is (s1, k1) ranked below (s2, k2)? */
function worse(s1: number, k1: number, s2: number, k2: number): boolean {
  return s1 < s2 || (s1 === s2 && k1 > k2);
}
