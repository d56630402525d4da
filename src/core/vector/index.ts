/**
 * @module core/vector
 * An in-memory cosine-similarity index over unit-normalised float32 vectors, keyed by
 * non-negative integer handles: what the read model serves searches from without a database
 * round trip (ADR 0017).
 *
 * Storage: every vector lives in one private {@link DotArena} (a WebAssembly linear memory,
 * or a plain Float32Array when SIMD is off), `stride` floats per row, rows grouped by list,
 * each list contiguous with room to grow (swap-remove keeps it dense; a full list moves to
 * the end of the arena with twice the room; holes are compacted away when they outnumber the
 * live rows). No per-vector objects: a row's key and list sit in typed arrays, and one
 * `Map<key, slot>` finds a row. Memory: 4·stride bytes per vector + ~40 bytes of bookkeeping.
 *
 * Search: `q·row` for a whole block of rows per kernel call (SIMD), into a small output
 * buffer; a bounded heap keeps the best `k` accepted keys (ties broken by the smaller key, so
 * results do not depend on storage order). Exact mode has one list and scans it all.
 */
import { DotArena, strideOf } from './kernel.js';

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
}

/** Rows per kernel call: the output block stays in L1. */
const CHUNK = 1024;
const MIN_LIST_ROOM = 8;

/** Create an index of `dimensions`-wide vectors (an integer from 1 to 65,536). */
export function createVectorIndex(dimensions: number, opts: VectorIndexOptions = {}): VectorIndex {
  return new FlatListIndex(dimensions, opts);
}

class FlatListIndex implements VectorIndex {
  readonly dimensions: number;
  readonly #stride: number;
  readonly #simd: boolean;
  #arena: DotArena;
  /** Float offsets: the query row, the output block, the first row slot. */
  readonly #qAt = 0;
  readonly #outAt: number;
  #rowsAt: number;
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
    this.#outAt = this.#stride;
    this.#rowsAt = this.#outAt + CHUNK;
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
  stats(): { lists: number; slots: number; holes: number; arenaBytes: number } {
    return {
      lists: this.#lCount.length,
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
    const list = 0;
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
    const F = this.#arena.f32;
    const o = this.#rowsAt + slot * this.#stride;
    for (let i = 0; i < this.dimensions; i++) F[o + i] = (v[i] as number) * inv;
  }

  remove(key: number): boolean {
    const slot = this.#slots.get(key);
    if (slot === undefined) return false;
    this.#removeSlot(slot, key);
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
    this.#scanList(0, top, accept);
    return top.sorted();
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
      const room = Math.max(MIN_LIST_ROOM, cap * 2);
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
