/**
 * @module core/text/maxscore
 * Exact dynamic pruning for the lexical index's top-k search: MaxScore (Turtle & Flood 1995),
 * document at a time over posting lists sorted by slot (ADR 0090).
 *
 * Bounds. Each query term gets an upper bound on its contribution to any document of this
 * index, UB = termScore(idf, maxTf, lengthNorm(minLen, avgLen)), from the largest frequency
 * and the shortest document its postings have held: idf·f·(k1+1)/(f + norm) grows with f and
 * shrinks with norm (partial derivatives idf·(k1+1)·norm/(f+norm)² > 0 and
 * −idf·(k1+1)·f/(f+norm)² < 0 for idf, f, norm > 0; it tends to idf·(k1+1) as f grows, no
 * overflow for 32-bit frequencies), and the norm grows with the length (b > 0; a mean length of
 * 0 counts as 1, as `lengthNorm` does). A bound that is not a positive finite number sends the
 * search down the exhaustive path. Per document length (below the table cutoff) the sum of
 * every term at its largest frequency bounds any document of that length.
 *
 * Walk. With the terms in ascending order of their bound, the longest prefix whose bounds sum
 * below the cut is non-essential: a document holding none of the other terms cannot enter, so
 * only the essential terms' postings are walked (in slot order; posting lists are appended in
 * slot order, and compaction and re-slotting keep it). A candidate too long to reach the cut
 * is passed over before any contribution is computed; the others get their essential
 * contributions, then the non-essential terms are sought (galloping forward; each cursor only
 * moves on) while what the candidate could still reach is at least the cut.
 *
 * Exactness. A kept score is the sum of the candidate's contributions in QUERY order (one slot
 * per query position), each the same call on the same arguments as the exhaustive search, so
 * the same float64. Bounds are other sums, so the cut is the worst kept score less a relative
 * margin ({@link SLACK}) far wider than their rounding: a document that belongs in the answer
 * (score ≥ the final worst kept one, which only grows) is never passed over, and one scoring
 * exactly the worst kept score still reaches the heap, where the smaller key wins the tie.
 */
import { lengthNorm, termScore } from './formula.js';
import type { TopK } from './top-k.js';

/** A term's postings: document slots (ascending) and their term frequencies, in typed arrays. */
export interface Postings {
  slots: Int32Array;
  tfs: Int32Array;
  len: number;
  /** Postings whose document was removed (compacted lazily). */
  dead: number;
  /** The largest term frequency among the postings held since the last compaction (≥ every live one). */
  maxTf: number;
  /** The shortest document length among them (≤ every live one). */
  minLen: number;
}

/** Document lengths (tokens) below this get their per-search norm and term contribution tabled. */
export const LEN_TABLE = 256;
/**
 * Relative margin of a pruning comparison: a bound prunes only below the worst kept score
 * times (1 − SLACK). Every bound is a float sum of positive terms, each at least the value it
 * bounds, so it is off by well under 1e-14 relatively for any query of fewer than 10⁶ terms.
 */
const SLACK = 1e-9;
/** Queries with more terms than this holding postings here take the exhaustive path (scratch size). */
export const MAX_PRUNED_TERMS = 64;

/** What a search did (for tests and benchmarks). */
export interface SearchWork {
  /** Postings whose contribution was computed. */
  scored: number;
  /** Whether the search pruned (false: the exhaustive path ran). */
  pruned: boolean;
}

/** A term's cursor in a search (a pool reused by every search). */
interface Cursor {
  slots: Int32Array;
  tfs: Int32Array;
  len: number;
  /** The next posting. */
  pos: number;
  /** The query position (where its contribution goes in the sum). */
  q: number;
  idf: number;
  maxTf: number;
  /** Its row of single-occurrence contributions in `ones`. */
  one: number;
}

/*
 * Search scratch shared by every index (a search runs to its end; `accept` must not search):
 * per term, the contribution of a single occurrence by document length; by document length, a
 * bound on the score of any document of that length (every term at its largest frequency);
 * the cursors by rank, their bounds, the bounds of ranks 0..r summed, the bounds of the
 * non-essential ranks j..first−1 summed, and the candidate's contributions by query position.
 */
const ones = new Float64Array(MAX_PRUNED_TERMS * LEN_TABLE);
const lenBounds = new Float64Array(LEN_TABLE);
const pool: Cursor[] = [];
const cur: Cursor[] = [];
const ub = new Float64Array(MAX_PRUNED_TERMS);
const cum = new Float64Array(MAX_PRUNED_TERMS);
const rest = new Float64Array(MAX_PRUNED_TERMS);
const contrib = new Float64Array(MAX_PRUNED_TERMS);

/**
 * The exhaustive search's contribution of `f` occurrences in a document of `len` tokens: the
 * same calls on the same arguments, tabled by length for a single occurrence.
 */
function contribution(
  c: Cursor,
  f: number,
  len: number,
  norms: Float64Array,
  avgLen: number,
): number {
  if (f === 1 && len < LEN_TABLE) {
    const at = c.one + len;
    let add = ones[at] as number;
    if (add !== add) {
      let norm = norms[len] as number;
      if (norm !== norm) norm = norms[len] = lengthNorm(len, avgLen);
      add = ones[at] = termScore(c.idf, 1, norm);
    }
    return add;
  }
  return termScore(c.idf, f, lengthNorm(len, avgLen));
}

/** The bound of a document of `len` (< LEN_TABLE) tokens over the `m` ranked terms, tabled. */
function boundAt(len: number, m: number, norms: Float64Array, avgLen: number): number {
  let norm = norms[len] as number;
  if (norm !== norm) norm = norms[len] = lengthNorm(len, avgLen);
  let b = 0;
  for (let r = 0; r < m; r++) {
    const c = cur[r] as Cursor;
    b += termScore(c.idf, c.maxTf, norm);
  }
  return (lenBounds[len] = b);
}

/** The first posting at or after `from` whose slot is ≥ d (galloping, then halving). */
function seek(sl: Int32Array, n: number, from: number, d: number): number {
  let lo = from;
  if (lo >= n || (sl[lo] as number) >= d) return lo;
  // sl[lo] < d, and hi = n or sl[hi] ≥ d.
  let step = 1;
  let hi = lo + 1;
  while (hi < n && (sl[hi] as number) < d) {
    lo = hi;
    step <<= 1;
    hi = lo + step;
  }
  if (hi > n) hi = n;
  while (lo + 1 < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sl[mid] as number) < d) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * The best documents of `lists[0..m)` (one per query position holding postings here, in query
 * order, with their idfs) into `top`, pruning by MaxScore. `keysAscend`: keys ascend with slots,
 * so a later document loses every tie with a kept one — or −1, having done nothing, when a
 * bound is not a positive finite number (the caller then searches exhaustively). `norms`
 * holds `lengthNorm(len, avgLen)` by length (NaN: not yet). `accept` is asked only about a
 * fully scored document that would enter `top`. Returns the postings scored.
 */
export function maxScoreSearch(
  m: number,
  lists: readonly Postings[],
  idfs: readonly number[],
  docLen: Int32Array,
  slotKey: Float64Array,
  keysAscend: boolean,
  avgLen: number,
  norms: Float64Array,
  top: TopK,
  accept: (key: number) => boolean,
): number {
  // Cursors by ascending bound (rank).
  cur.length = 0;
  for (let i = 0; i < m; i++) {
    const p = lists[i] as Postings;
    const termIdf = idfs[i] as number;
    const b = termScore(termIdf, p.maxTf, lengthNorm(p.minLen, avgLen));
    if (!(b > 0 && b < Infinity)) return -1;
    let c = pool[i];
    if (c === undefined) {
      c = { slots: p.slots, tfs: p.tfs, len: 0, pos: 0, q: 0, idf: 0, maxTf: 0, one: 0 };
      pool.push(c);
    }
    c.slots = p.slots;
    c.tfs = p.tfs;
    c.len = p.len;
    c.pos = 0;
    c.q = i;
    c.idf = termIdf;
    c.maxTf = p.maxTf;
    c.one = i * LEN_TABLE;
    let r = i;
    for (; r > 0 && (ub[r - 1] as number) > b; r--) {
      cur[r] = cur[r - 1] as Cursor;
      ub[r] = ub[r - 1] as number;
    }
    cur[r] = c;
    ub[r] = b;
  }
  let sum = 0;
  for (let r = 0; r < m; r++) {
    cum[r] = sum += ub[r] as number;
    contrib[r] = 0;
    rest[r] = 0;
  }
  ones.fill(NaN, 0, m * LEN_TABLE);
  lenBounds.fill(NaN);
  const bounds = lenBounds;
  // Ranks below `first` are non-essential; a bound below `cut` prunes (0 until k are kept).
  let first = 0;
  let cut = 0;
  let scored = 0;

  for (;;) {
    // The next candidate: the smallest slot under an essential term's cursor that is live and
    // not too long to reach the cut with every term at its largest frequency (most of a long
    // list's postings end here, before any contribution is computed).
    let d = 0x7fffffff;
    let len = 0;
    if (first === m - 1) {
      // One essential term (the usual case once the kept scores have risen): a tight walk.
      const c = cur[first] as Cursor;
      const sl = c.slots;
      const n = c.len;
      let at = c.pos;
      for (; at < n; at++) {
        len = docLen[sl[at] as number] as number;
        if (len < 0) continue; // removed, not compacted yet
        if (len < LEN_TABLE) {
          let b = bounds[len] as number;
          if (b !== b) b = boundAt(len, m, norms, avgLen);
          if (b < cut) continue;
        }
        break;
      }
      c.pos = at;
      if (at === n) break;
      d = sl[at] as number;
    } else {
      for (let r = first; r < m; r++) {
        const c = cur[r] as Cursor;
        if (c.pos < c.len) {
          const s = c.slots[c.pos] as number;
          if (s < d) d = s;
        }
      }
      if (d === 0x7fffffff) break;
      len = docLen[d] as number;
      let skip = len < 0;
      if (!skip && len < LEN_TABLE) {
        let b = bounds[len] as number;
        if (b !== b) b = boundAt(len, m, norms, avgLen);
        skip = b < cut;
      }
      if (skip) {
        for (let r = first; r < m; r++) {
          const c = cur[r] as Cursor;
          if (c.pos < c.len && c.slots[c.pos] === d) c.pos++;
        }
        continue;
      }
    }
    // The essential terms' contributions (their cursors move past d).
    let partial = 0;
    for (let r = first; r < m; r++) {
      const c = cur[r] as Cursor;
      const at = c.pos;
      if (at < c.len && c.slots[at] === d) {
        c.pos = at + 1;
        const add = contribution(c, c.tfs[at] as number, len, norms, avgLen);
        scored++;
        contrib[c.q] = add;
        partial += add;
      }
    }
    // The non-essential ones, lowest bound first, while the candidate can still reach the cut
    // (`rest[j]`: what ranks j..first−1 could add). Lowest first: on names-and-topics text the
    // lowest-bound term (a name, frequent) is the one a candidate most often lacks — a topic's
    // words come together — and its absence ends the candidate before the others are sought.
    let open = true;
    for (let j = 0; j < first; j++) {
      if (partial + (rest[j] as number) < cut) {
        open = false;
        break;
      }
      const c = cur[j] as Cursor;
      const at = seek(c.slots, c.len, c.pos, d);
      c.pos = at;
      if (at < c.len && c.slots[at] === d) {
        const add = contribution(c, c.tfs[at] as number, len, norms, avgLen);
        scored++;
        contrib[c.q] = add;
        partial += add;
      }
    }
    if (open && partial >= cut) {
      // The score: contributions in query order (the exhaustive search's sum, bit for bit).
      let score = 0;
      for (let q = 0; q < m; q++) {
        const add = contrib[q] as number;
        if (add > 0) score += add;
      }
      // A tie with the worst kept score enters only with a smaller key: never, when keys
      // ascend with slots (every kept document came earlier) — no key read for it.
      const full = top.size === top.k;
      const ws = top.threshold;
      if (!(score > 0) || (full && (score < ws || (score === ws && keysAscend)))) {
        for (let q = 0; q < m; q++) contrib[q] = 0;
        continue;
      }
      const key = slotKey[d] as number;
      if (top.wouldEnter(score, key) && accept(key)) {
        top.push(score, key);
        if (top.size === top.k) {
          cut = top.threshold * (1 - SLACK);
          if ((cum[first] as number) < cut) {
            while (first < m && (cum[first] as number) < cut) first++;
            if (first === m) break;
            // A non-essential prefix grew: what each suffix of it could add.
            let r = 0;
            for (let j = first - 1; j >= 0; j--) rest[j] = r += ub[j] as number;
          }
        }
      }
    }
    for (let q = 0; q < m; q++) contrib[q] = 0;
  }
  return scored;
}
