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
 * and scans the `nprobe` nearest lists — and further lists, nearest first, while fewer than
 * `k` accepted hits were found. An add goes to its nearest list. The lists are retrained when
 * the index has doubled since the last training, and folded back into one exact list when it
 * shrinks below `exactBelow / 2`; both are whole rebuilds, amortised over the adds that
 * caused them (ADR 0017 has the costs).
 */
import { DotArena, strideOf } from './kernel.js';
import { kmeans } from './kmeans.js';

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
  /** Remove `key`; false when absent. */
  remove(key: number): boolean;
  has(key: number): boolean;
  /** Up to `k` keys with the highest cosine similarity to `q`, best first, skipping keys for
   *  which `accept(key)` is false (the filter runs during the scan, so k accepted hits are
   *  returned whenever k exist in the scanned lists). */
  search(q: ArrayLike<number>, k: number, accept?: (key: number) => boolean): VectorHit[];
}

export interface VectorIndexOptions {
  /** false: the JavaScript kernel even where WebAssembly SIMD is available (tests). */
  readonly simd?: boolean;
  /** Exact scan below this many vectors, IVF from it on (default 4,096; Infinity: always exact). */
  readonly exactBelow?: number;
  /** IVF lists scanned per search (default 16; more: better recall, slower search). */
  readonly nprobe?: number;
  /** IVF lists at training: a function of the size (default round(√n)). */
  readonly lists?: (size: number) => number;
  /** k-means: Lloyd iterations (default 6) on a sample of this many rows per list (default 64;
   *  at most 16,384 rows in all). */
  readonly iterations?: number;
  readonly samplePerList?: number;
  /** The k-means PRNG seed (default fixed: the same operations build the same lists). */
  readonly seed?: number;
}

/** Rows per kernel call: the output block stays in L1. */
const CHUNK = 1024;
const MIN_LIST_ROOM = 8;
const DEFAULTS = {
  exactBelow: 4096,
  nprobe: 16,
  iterations: 6,
  samplePerList: 64,
  seed: 0x5eed,
};
const defaultLists = (n: number): number => Math.round(Math.sqrt(n));

/** Create an index of `dimensions`-wide vectors (an integer from 1 to 65,536). */
export function createVectorIndex(dimensions: number, opts: VectorIndexOptions = {}): VectorIndex {
  return new FlatListIndex(dimensions, opts);
}

class FlatListIndex implements VectorIndex {
  readonly dimensions: number;
  readonly #stride: number;
  readonly #simd: boolean;
  readonly #opts: Required<Omit<VectorIndexOptions, 'simd'>>;
  #arena: DotArena;
  /** Float offsets: the query row, the output block, the centroids (IVF), the first row slot. */
  readonly #qAt = 0;
  readonly #outAt: number;
  #centAt: number;
  #rowsAt: number;
  /** Lists (1: exact), and the size at the last training. */
  #nlist = 1;
  #trainedAt = 0;
  #trainings = 0;
  /** Row slots the arena holds, the next never-used slot, and slots lost to moved lists. */
  #slotCap = 0;
  #top = 0;
  #holes = 0;
  #slotKey = new Float64Array(0);
  #slotList = new Int32Array(0);
  /** Per list: first slot, live rows, room. */
  #lStart = new Int32Array(1);
  #lCount = new Int32Array(1);
  #lCap = new Int32Array(1);
  readonly #slots = new Map<number, number>();

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
    const iterations = opts.iterations ?? DEFAULTS.iterations;
    const samplePerList = opts.samplePerList ?? DEFAULTS.samplePerList;
    if (
      !Number.isInteger(iterations) ||
      iterations < 0 ||
      !Number.isInteger(samplePerList) ||
      samplePerList < 1
    )
      throw new RangeError('vector index: bad k-means options');
    this.#opts = {
      exactBelow,
      nprobe,
      lists: opts.lists ?? defaultLists,
      iterations,
      samplePerList,
      seed: opts.seed ?? DEFAULTS.seed,
    };
    this.#outAt = this.#stride;
    this.#centAt = this.#outAt + CHUNK;
    this.#rowsAt = this.#centAt;
    this.#arena = new DotArena(this.#rowsAt, this.#simd ? {} : { simd: false });
  }

  get size(): number {
    return this.#slots.size;
  }

  /** True when the WebAssembly SIMD kernel is in use. */
  get simd(): boolean {
    return this.#arena.simd;
  }

  /** Layout figures (tests, bench): lists, row slots in use or free, slots lost to moves. */
  stats(): { lists: number; slots: number; holes: number; arenaBytes: number; trainings: number } {
    return {
      trainings: this.#trainings,
      lists: this.#nlist,
      slots: this.#slotCap,
      holes: this.#holes,
      arenaBytes: this.#arena.floats * 4,
    };
  }

  has(key: number): boolean {
    return this.#slots.has(key);
  }

  add(key: number, v: ArrayLike<number>): void {
    checkKey(key);
    const inv = this.#inverseNorm(v, 'vector');
    // Validated: from here on nothing throws except an arena that cannot grow.
    const F0 = this.#arena.f32;
    for (let i = 0; i < this.dimensions; i++) F0[this.#qAt + i] = (v[i] as number) * inv;
    const list = this.#nlist === 1 ? 0 : this.#nearestList();
    const old = this.#slots.get(key);
    let slot: number;
    if (old !== undefined && this.#slotList[old] === list) slot = old;
    else {
      if (old !== undefined) this.#removeSlot(old, key);
      slot = this.#reserve(list);
      this.#slotKey[slot] = key;
      this.#slotList[slot] = list;
      this.#slots.set(key, slot);
    }
    const st = this.#stride;
    this.#arena.f32.copyWithin(this.#rowsAt + slot * st, this.#qAt, this.#qAt + st);
    const n = this.#slots.size;
    if (n >= 2 * this.#trainedAt && (this.#nlist > 1 || n >= this.#opts.exactBelow)) this.#train();
    else if (this.#holes > 1024 && this.#holes > n / 4) this.#relayout(this.#nlist, null, null);
  }

  remove(key: number): boolean {
    const slot = this.#slots.get(key);
    if (slot === undefined) return false;
    this.#removeSlot(slot, key);
    if (this.#nlist > 1 && this.#slots.size < this.#opts.exactBelow / 2) {
      this.#relayout(1, null, null);
      this.#trainedAt = 0;
    }
    return true;
  }

  search(q: ArrayLike<number>, k: number, accept?: (key: number) => boolean): VectorHit[] {
    if (!Number.isInteger(k) || k < 0)
      throw new RangeError('vector index: k must be an integer ≥ 0');
    const inv = this.#inverseNorm(q, 'query');
    if (k === 0 || this.#slots.size === 0) return [];
    const F = this.#arena.f32;
    for (let i = 0; i < this.dimensions; i++) F[this.#qAt + i] = (q[i] as number) * inv;
    const top = new TopK(Math.min(k, this.#slots.size));
    const nlist = this.#nlist;
    if (nlist === 1) {
      this.#scanList(0, top, accept);
      return top.sorted();
    }
    // Rank the centroids; keep the `nprobe` best in a small sorted array.
    this.#arena.dots(this.#centAt, this.#qAt, this.#outAt, nlist, this.#stride);
    const cs = F.slice(this.#outAt, this.#outAt + nlist);
    const p = Math.min(this.#opts.nprobe, nlist);
    const best = new Int32Array(p);
    const bestS = new Float64Array(p).fill(-Infinity);
    for (let c = 0; c < nlist; c++) {
      const x = cs[c] as number;
      if (x <= (bestS[p - 1] as number)) continue;
      let i = p - 1;
      while (i > 0 && x > (bestS[i - 1] as number)) {
        bestS[i] = bestS[i - 1] as number;
        best[i] = best[i - 1] as number;
        i--;
      }
      bestS[i] = x;
      best[i] = c;
    }
    for (let i = 0; i < p; i++) this.#scanList(best[i] as number, top, accept);
    if (!top.full && p < nlist) {
      // Too few accepted hits in the probed lists: the others, nearest first, until k.
      const probed = new Set(best);
      const rest = Array.from({ length: nlist }, (_, c) => c).filter((c) => !probed.has(c));
      rest.sort((a, b) => (cs[b] as number) - (cs[a] as number));
      for (const c of rest) {
        if (top.full) break;
        this.#scanList(c, top, accept);
      }
    }
    return top.sorted();
  }

  /** The list of the nearest centroid to the vector in the query row. */
  #nearestList(): number {
    const nlist = this.#nlist;
    this.#arena.dots(this.#centAt, this.#qAt, this.#outAt, nlist, this.#stride);
    const F = this.#arena.f32;
    const o = this.#outAt;
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

  /** Live slots, list by list. */
  #liveSlots(): Int32Array {
    const out = new Int32Array(this.#slots.size);
    let i = 0;
    for (let l = 0; l < this.#nlist; l++) {
      const start = this.#lStart[l] as number;
      const count = this.#lCount[l] as number;
      for (let r = 0; r < count; r++) out[i++] = start + r;
    }
    return out;
  }

  /** (Re)train the IVF lists on the current vectors. */
  #train(): void {
    const n = this.#slots.size;
    const lists = Math.max(1, Math.min(n, Math.floor(this.#opts.lists(n))));
    if (lists < 2) {
      this.#trainedAt = n;
      return;
    }
    const slots = this.#liveSlots();
    const { centroids, assign } = kmeans({
      rows: this.#arena.f32,
      rowsAt: this.#rowsAt,
      slots,
      dimensions: this.dimensions,
      stride: this.#stride,
      lists,
      samplePerList: this.#opts.samplePerList,
      iterations: this.#opts.iterations,
      seed: (this.#opts.seed + this.#trainings * 0x9e3779b1) >>> 0,
      simd: this.#simd,
    });
    this.#trainings++;
    this.#trainedAt = n;
    this.#relayout(lists, centroids, { slots, assign });
  }

  /**
   * Rebuild the arena compactly: `lists` lists (1: exact), `centroids` (null: keep the current
   * ones), each live row in the list `assign` gives it (null: its current list, or 0).
   */
  #relayout(
    lists: number,
    centroids: Float32Array | null,
    assigned: { slots: Int32Array; assign: Int32Array } | null,
  ): void {
    const st = this.#stride;
    const slots = assigned?.slots ?? this.#liveSlots();
    const n = slots.length;
    const listOf = new Int32Array(n);
    if (assigned !== null) listOf.set(assigned.assign);
    else if (lists > 1)
      for (let i = 0; i < n; i++) listOf[i] = this.#slotList[slots[i] as number] as number;
    const count = new Int32Array(lists);
    for (let i = 0; i < n; i++)
      count[listOf[i] as number] = (count[listOf[i] as number] as number) + 1;
    const cap = new Int32Array(lists);
    const start = new Int32Array(lists);
    let total = 0;
    for (let l = 0; l < lists; l++) {
      const c = count[l] as number;
      cap[l] = c + Math.max(MIN_LIST_ROOM, Math.ceil(c / 8));
      start[l] = total;
      total += cap[l] as number;
    }
    const outLen = Math.max(CHUNK, Math.ceil(lists / 8) * 8);
    const centAt = this.#outAt + outLen;
    const rowsAt = lists > 1 ? centAt + lists * st : centAt;
    const arena = new DotArena(rowsAt + total * st, this.#simd ? {} : { simd: false });
    const F = arena.f32;
    const old = this.#arena.f32;
    if (lists > 1) {
      if (centroids !== null) F.set(centroids, centAt);
      else F.set(old.subarray(this.#centAt, this.#centAt + lists * st), centAt);
    }
    const keys = new Float64Array(total);
    const slotList = new Int32Array(total);
    const fill = new Int32Array(lists);
    this.#slots.clear();
    for (let i = 0; i < n; i++) {
      const from = slots[i] as number;
      const l = listOf[i] as number;
      const to = (start[l] as number) + (fill[l] as number);
      fill[l] = (fill[l] as number) + 1;
      const o = this.#rowsAt + from * st;
      F.set(old.subarray(o, o + st), rowsAt + to * st);
      const key = this.#slotKey[from] as number;
      keys[to] = key;
      slotList[to] = l;
      this.#slots.set(key, to);
    }
    this.#arena = arena;
    this.#centAt = centAt;
    this.#rowsAt = rowsAt;
    this.#nlist = lists;
    this.#slotKey = keys;
    this.#slotList = slotList;
    this.#slotCap = total;
    this.#top = total;
    this.#holes = 0;
    this.#lStart = start;
    this.#lCount = count;
    this.#lCap = cap;
  }

  /** Scan every row of `list` into `top`. */
  #scanList(list: number, top: TopK, accept: ((key: number) => boolean) | undefined): void {
    const arena = this.#arena;
    const F = arena.f32;
    const keys = this.#slotKey;
    const stride = this.#stride;
    const outAt = this.#outAt;
    const start = this.#lStart[list] as number;
    const count = this.#lCount[list] as number;
    for (let c = 0; c < count; c += CHUNK) {
      const m = Math.min(CHUNK, count - c);
      arena.dots(this.#rowsAt + (start + c) * stride, this.#qAt, outAt, m, stride);
      for (let r = 0; r < m; r++) {
        const s = F[outAt + r] as number;
        if (top.full && s < top.minScore) continue;
        const key = keys[start + c + r] as number;
        if (top.beats(s, key) && (accept === undefined || accept(key))) top.push(s, key);
      }
    }
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

  /** A free slot at the end of `list` (growing or moving the list when it is full). */
  #reserve(list: number): number {
    const count = this.#lCount[list] as number;
    const cap = this.#lCap[list] as number;
    const start = this.#lStart[list] as number;
    if (count === cap) {
      const room = Math.max(MIN_LIST_ROOM, Math.ceil(cap * 1.5));
      if (start + cap === this.#top) {
        this.#ensureSlots(start + room);
        this.#top = start + room;
      } else {
        const to = this.#top;
        this.#ensureSlots(to + room);
        this.#moveRows(start, to, count);
        this.#holes += cap;
        this.#lStart[list] = to;
        this.#top = to + room;
      }
      this.#lCap[list] = room;
    }
    const slot = (this.#lStart[list] as number) + count;
    this.#lCount[list] = count + 1;
    return slot;
  }

  /** Move `n` rows (vectors and bookkeeping) from slot `from` to slot `to`. */
  #moveRows(from: number, to: number, n: number): void {
    const st = this.#stride;
    const F = this.#arena.f32;
    F.copyWithin(this.#rowsAt + to * st, this.#rowsAt + from * st, this.#rowsAt + (from + n) * st);
    this.#slotKey.copyWithin(to, from, from + n);
    this.#slotList.copyWithin(to, from, from + n);
    for (let i = 0; i < n; i++) this.#slots.set(this.#slotKey[to + i] as number, to + i);
  }

  #ensureSlots(slots: number): void {
    if (slots <= this.#slotCap) return;
    const cap = Math.max(slots, Math.ceil(this.#slotCap * 1.5), 64);
    this.#arena.ensure(this.#rowsAt + cap * this.#stride);
    const keys = new Float64Array(cap);
    keys.set(this.#slotKey);
    this.#slotKey = keys;
    const lists = new Int32Array(cap);
    lists.set(this.#slotList);
    this.#slotList = lists;
    this.#slotCap = cap;
  }

  /** Swap-remove: the list's last row fills the hole. */
  #removeSlot(slot: number, key: number): void {
    const list = this.#slotList[slot] as number;
    const last = (this.#lStart[list] as number) + (this.#lCount[list] as number) - 1;
    if (slot !== last) {
      const st = this.#stride;
      const F = this.#arena.f32;
      F.copyWithin(
        this.#rowsAt + slot * st,
        this.#rowsAt + last * st,
        this.#rowsAt + (last + 1) * st,
      );
      const moved = this.#slotKey[last] as number;
      this.#slotKey[slot] = moved;
      this.#slots.set(moved, slot);
    }
    this.#lCount[list] = (this.#lCount[list] as number) - 1;
    this.#slots.delete(key);
  }
}

function checkKey(key: number): void {
  if (!Number.isSafeInteger(key) || key < 0)
    throw new RangeError('vector index: key must be a non-negative safe integer');
}

/**
 * The best `k` (score, key) pairs seen: a binary min-heap whose root is the worst kept pair
 * (lowest score; on equal scores the larger key), so `beats` is one comparison per row.
 */
class TopK {
  readonly #k: number;
  readonly #s: Float64Array;
  readonly #key: Float64Array;
  #n = 0;

  constructor(k: number) {
    this.#k = k;
    this.#s = new Float64Array(k);
    this.#key = new Float64Array(k);
  }

  get full(): boolean {
    return this.#n === this.#k;
  }

  get count(): number {
    return this.#n;
  }

  /** The worst kept score (−∞ until full). */
  get minScore(): number {
    return this.#n === this.#k ? (this.#s[0] as number) : -Infinity;
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
  }

  /** Best first. */
  sorted(): VectorHit[] {
    const out: VectorHit[] = [];
    for (let i = 0; i < this.#n; i++)
      out.push({ key: this.#key[i] as number, score: this.#s[i] as number });
    out.sort((a, b) => b.score - a.score || a.key - b.key);
    return out;
  }
}

/** Is (s1, k1) ranked below (s2, k2)? */
function worse(s1: number, k1: number, s2: number, k2: number): boolean {
  return s1 < s2 || (s1 === s2 && k1 > k2);
}
