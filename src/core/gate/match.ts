/**
 * @module core/gate/match
 * Which rendered segments a tool call "mentions" (MemLineage §3.7 Layer 1), and the memoised
 * parse of a sealed context.
 *
 * ## Matching rule
 * Text is brought to canonical forms first (`canon.ts`: NFKC, invisibles removed, lower case,
 * whitespace collapsed; spelled-out, defanged, internationalised and reformatted values
 * appended in their canonical form). The call's *needles* are taken from its argument values
 * (object keys are structure, not content; walked to depth {@link MAX_DEPTH}, at most
 * {@link MAX_LEAVES} leaves — beyond that the call is malformed and the gate fails closed):
 * - a string leaf contributes its clean value and its canonical form (an e-mail, URL, domain or
 *   date in the exact view; an IBAN / account / phone number in the compact view; an amount in
 *   the numeric view); a long free-text leaf (more than {@link FREE_TEXT_CHARS} chars with a
 *   space — an e-mail body, a memo) also contributes each identifier-like token (≥ 4 chars
 *   containing a digit, `@`, `/` or `.` followed by a letter) and the values spelled in it;
 * - a finite number contributes its JS decimal form (`100`, `99.5`); booleans and null none.
 * A segment is mentioned when a needle occurs in its view *at token boundaries*: the
 * characters just outside the occurrence are not letters or digits (where the needle's own
 * edge is a letter or digit). So `5` matches "pay 5 EUR" but not "15" or "500"; `100` matches
 * "100.00"; the compact view only checks digit edges (`DE89…` inside "IBAN DE89 3704 …").
 *
 * Over-matching only makes Layer 1 stricter (more segments considered). A value the gate still
 * cannot trace is no longer treated as harmless: the gate fails closed on it (ADR 0043).
 */
import { type ParsedSegment, parseSegments } from '../render/sentinel.js';
import {
  type CanonValue,
  type ValueKind,
  canonString,
  cleanText,
  compactMentions,
  compactText,
  decodedText,
  extras,
  needsCollapse,
  numText,
  pieces,
  skeleton,
} from './canon.js';

export const MAX_DEPTH = 8;
export const MAX_LEAVES = 256;
export const FREE_TEXT_CHARS = 32;
const MAX_TOKENS_PER_LEAF = 64;

/** Lower-case and collapse whitespace. */
export function normText(s: string): string {
  const t = s.toLowerCase().trim();
  // Fast path: most values have no whitespace to collapse; the scan allocates nothing.
  return needsCollapse(t) ? t.replace(/\s+/g, ' ') : t;
}

const ALNUM = /[\p{L}\p{N}]/u;
function isWordChar(code: number): boolean {
  if (code < 128)
    return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
  return ALNUM.test(String.fromCharCode(code));
}

/** True when `needle` occurs in `hay` at token boundaries (see module doc). Both normalised. */
export function mentions(hay: string, needle: string): boolean {
  const n = needle.length;
  if (n === 0) return false;
  const checkLeft = isWordChar(needle.charCodeAt(0));
  const checkRight = isWordChar(needle.charCodeAt(n - 1));
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + 1)) {
    if (checkLeft && i > 0 && isWordChar(hay.charCodeAt(i - 1))) continue;
    const j = i + n;
    if (checkRight && j < hay.length && isWordChar(hay.charCodeAt(j))) continue;
    return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Exact-value index (issue 18 speed, ADR 0066)
// ---------------------------------------------------------------------------------------------
//
// An occurrence of a needle at token boundaries ({@link mentions}) makes every maximal run of
// word characters in the needle a maximal run of the hay too: a run starting at the needle's
// first character is guarded by the left-boundary check, one ending at its last by the right
// check, and the others are bounded by the needle's own non-word characters. So a hay whose
// set of runs lacks any one of the needle's runs cannot mention it, and a needle that *is*
// one run is mentioned exactly when the set has it. The same holds for digit runs under
// {@link compactMentions}' digit-edge rule. Each view's run set is built once per segment
// (segments are immutable; the views are kept with the memoised context) and a decision
// looks a needle's longest run up instead of scanning every segment's text.

/**
 * `s` as a string of its own, not a view into a larger one. V8 keeps a substring of 13 or more
 * characters as a slice of its parent, and a Map or Set lookup that must compare a sliced key
 * with another string is several times slower than one between flat strings (a 36-character
 * entry id: ~130 ns against ~20 ns — a tenth of a plain decision, ADR 0077). Keys the gate
 * looks up on every decision (entry ids, probes) are made flat once, when built. (It
 * also stops a kept key from holding its whole rendered context alive.) Same characters: only
 * the representation changes.
 */
export function flat(s: string): string {
  // A concatenation is new storage (flattened into a string of its own on first hashing);
  // a slice would stay a view. Measured at ~0.1 µs per key, against ~0.4 µs for a JSON copy.
  return s.length < 13 ? s : s.charAt(0) + s.slice(1);
}

/** Adds the maximal runs of word characters ({@link isWordChar}) of `s` to `out`. */
function addWordRuns(s: string, out: Set<string>): void {
  let start = -1;
  for (let i = 0; i <= s.length; i++) {
    const w = i < s.length && isWordChar(s.charCodeAt(i));
    if (w) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      out.add(s.slice(start, i));
      start = -1;
    }
  }
}

/** Adds the maximal runs of ASCII digits of `s` to `out`. */
function addDigitRuns(s: string, out: Set<string>): void {
  let start = -1;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 0;
    if (c >= 48 && c <= 57) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      out.add(s.slice(start, i));
      start = -1;
    }
  }
}

/**
 * The longest maximal run of `needle` (word characters, or digits with `digits`): present in
 * every hay that mentions the needle. `undefined` when the needle has no such run (then only a
 * scan decides). Returns the needle itself when it is one run.
 */
export function probeOf(needle: string, digits = false): string | undefined {
  let best = -1;
  let bestLen = 0;
  let start = -1;
  for (let i = 0; i <= needle.length; i++) {
    let w = false;
    if (i < needle.length) {
      const c = needle.charCodeAt(i);
      w = digits ? c >= 48 && c <= 57 : isWordChar(c);
    }
    if (w) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      if (i - start > bestLen) {
        best = start;
        bestLen = i - start;
      }
      start = -1;
    }
  }
  if (best < 0) return undefined;
  return bestLen === needle.length ? needle : flat(needle.slice(best, best + bestLen));
}

/** What {@link Hay.near_} searches for a value: its skeleton and its pieces' (skeletons for text). */
interface NearNeedles {
  readonly skeleton: string;
  readonly text: readonly string[];
  readonly compact: readonly string[];
}
/** Once per (memoised) value, not once per segment. */
const nearMemo = new WeakMap<CanonValue, NearNeedles>();
function nearNeedles(v: CanonValue): NearNeedles {
  let nn = nearMemo.get(v);
  if (nn === undefined) {
    const p = pieces(v);
    nn = {
      skeleton: v.view === 'text' ? skeleton(v.unicode ?? v.form) : v.form,
      text: p.text.map(skeleton),
      compact: p.compact,
    };
    nearMemo.set(v, nn);
  }
  return nn;
}

/** A canonical value's probe, once per (memoised) value. */
const probes = new WeakMap<CanonValue, string | null>();
function valueProbe(v: CanonValue): string | undefined {
  let p = probes.get(v);
  if (p === undefined) {
    p = probeOf(v.form, v.view === 'compact') ?? null;
    probes.set(v, p);
  }
  return p ?? undefined;
}

/** Needles of a call, per view of a segment they are searched in (see `canon.ts`). */
export interface Needles {
  /** Searched in the exact view (`Hay.norm`). */
  readonly text: string[];
  /** Searched in the numeric view (`Hay.num`). */
  readonly numbers: string[];
  /** Searched in the compact view (`Hay.compact`): IBAN, account and phone numbers. */
  readonly compact: string[];
  /** Whole argument values of a governed kind (fail-closed tracing, ADR 0043). */
  readonly governed: GovernedValue[];
  /**
   * When present, the {@link Leaf} of every string and number leaf collected, in place of its
   * needles in `text` / `numbers` / `compact` (ADR 0077: `mentionedByLeaves`).
   */
  readonly leaves?: Leaf[];
}

/** One argument value of a governed kind. */
export interface GovernedValue {
  /** Top-level parameter the value sits under. */
  readonly param: string;
  readonly value: CanonValue;
}

/** Fresh, empty needles. */
export const needles = (): Needles => ({ text: [], numbers: [], compact: [], governed: [] });

/**
 * `t` without leading `("'<[{\`` and trailing `)"'>]}\`,;:!?.` runs — exactly
 * `t.replace(/^[("'<[{\`]+|[)"'>\]}\`,;:!?.]+$/g, '')`, as a loop (hot path: one per token).
 */
export function trimEdgePunct(t: string): string {
  let i = 0;
  let j = t.length;
  while (i < j && isLeadPunct(t.charCodeAt(i))) i++;
  while (j > i && isTrailPunct(t.charCodeAt(j - 1))) j--;
  return i === 0 && j === t.length ? t : t.slice(i, j);
}
const isLeadPunct = (c: number): boolean =>
  c === 40 || c === 34 || c === 39 || c === 60 || c === 91 || c === 123 || c === 96;
const isTrailPunct = (c: number): boolean =>
  c === 41 ||
  c === 34 ||
  c === 39 ||
  c === 62 ||
  c === 93 ||
  c === 125 ||
  c === 96 ||
  c === 44 ||
  c === 59 ||
  c === 58 ||
  c === 33 ||
  c === 63 ||
  c === 46;
const IDENTLIKE = /[0-9@/]|\.[a-z]/;

/** What {@link collectNeedles} governs: kinds, and the parameter a leaf belongs to. */
export interface Governing {
  readonly kinds: ReadonlySet<ValueKind>;
  readonly param: string;
  /** Also govern the identifier-like tokens of free text (unnamed tools: any channel counts). */
  readonly tokens?: boolean;
}

/**
 * What one string or number leaf of a call contributes: its needles per view, the canonical
 * form of the whole value (short strings and numbers: governed when its kind is) and of the
 * identifier-like tokens of free text (governed only under {@link Governing.tokens}). A pure
 * function of the leaf, memoised ({@link leafOf}; ADR 0077): an agent turn asks about the same
 * values again and again, and a value's needles never change.
 */
export interface Leaf {
  readonly text: readonly string[];
  readonly numbers: readonly string[];
  readonly compact: readonly string[];
  /** The whole value's canonical form (a string of at most {@link FREE_TEXT_CHARS} chars or without a space, or a finite number). */
  readonly whole: CanonValue | undefined;
  /** Identifier-like tokens of free text, in order. */
  readonly tokens: readonly CanonValue[];
  /** Held by the memo (one object per value): its mentions may be kept per context too. */
  readonly kept: boolean;
}

const EMPTY_LEAF: Leaf = Object.freeze({
  text: Object.freeze([]),
  numbers: Object.freeze([]),
  compact: Object.freeze([]),
  whole: undefined,
  tokens: Object.freeze([]),
  kept: true,
});

function addNeedle(
  clean: string,
  text: string[],
  numbers: string[],
  compact: string[],
  memo: boolean,
): CanonValue {
  text.push(clean);
  const cv = canonEntry(clean, memo).cv ?? {
    kind: 'text' as const,
    form: clean,
    view: 'text' as const,
  };
  if (cv.view === 'text') {
    if (cv.form !== clean) text.push(cv.form);
  } else if (cv.view === 'compact') compact.push(cv.form);
  else numbers.push(cv.form);
  return cv;
}

/**
 * {@link Leaf} of a string, computed (the full path: every canonicaliser that applies runs;
 * with `memo` false, the values' canonical forms too are computed afresh).
 */
export function computeLeaf(value: string, memo = true, kept = false): Leaf {
  const n = cleanText(value);
  if (n.length === 0) return EMPTY_LEAF;
  const text: string[] = [];
  const numbers: string[] = [];
  const compact: string[] = [];
  if (n.length <= FREE_TEXT_CHARS || !n.includes(' ')) {
    const whole = addNeedle(n, text, numbers, compact, memo);
    return { text, numbers, compact, whole, tokens: EMPTY_LEAF.tokens, kept };
  }
  text.push(n);
  for (const e of extras(n)) text.push(e);
  const tokens: CanonValue[] = [];
  for (const raw of n.split(' ')) {
    const t = trimEdgePunct(raw);
    if (t.length >= 4 && t !== n && IDENTLIKE.test(t)) {
      tokens.push(addNeedle(t, text, numbers, compact, memo));
      if (tokens.length >= MAX_TOKENS_PER_LEAF) break;
    }
  }
  return { text, numbers, compact, whole: undefined, tokens, kept };
}

/** {@link Leaf} of a finite number. */
function numberLeaf(value: number, memo = true, kept = false): Leaf {
  const cv = canonEntry(value, memo).cv as CanonValue;
  return {
    text: EMPTY_LEAF.text,
    numbers: [cv.form],
    compact: EMPTY_LEAF.compact,
    whole: cv,
    tokens: EMPTY_LEAF.tokens,
    kept,
  };
}

const leafMemo = new Map<string, Leaf>();
const numberLeafMemo = new Map<number, Leaf>();

/** Longest string whose leaf is memoised: a long body is rarely asked about twice, and a memo of them would hold megabytes. */
const LEAF_MEMO_CHARS = 1024;

/** {@link computeLeaf}, memoised for values up to {@link LEAF_MEMO_CHARS} (bounded; cleared when full). */
export function leafOf(value: string): Leaf {
  if (value.length > LEAF_MEMO_CHARS) return computeLeaf(value);
  return memoised(leafMemo, value, () => computeLeaf(value, true, true));
}
function numberLeafOf(value: number): Leaf {
  return memoised(numberLeafMemo, value, () => numberLeaf(value, true, true));
}

function addLeaf(leaf: Leaf, out: Needles, gov: Governing | undefined): void {
  // Collecting leaves: the needles are the leaves' (searched per leaf, `mentionedByLeaves`).
  if (out.leaves !== undefined) out.leaves.push(leaf);
  else {
    for (const t of leaf.text) out.text.push(t);
    for (const t of leaf.numbers) out.numbers.push(t);
    for (const t of leaf.compact) out.compact.push(t);
  }
  if (gov === undefined) return;
  const w = leaf.whole;
  if (w !== undefined) {
    if (gov.kinds.has(w.kind)) out.governed.push({ param: gov.param, value: w });
  } else if (gov.tokens === true)
    for (const t of leaf.tokens)
      if (gov.kinds.has(t.kind)) out.governed.push({ param: gov.param, value: t });
}

/**
 * Add the needles of one value to `out`; false when the value exceeds the walk bounds. With
 * `gov`, whole string and number values of a governed kind are also listed in `out.governed`.
 * With `memo` false every leaf is computed afresh (the full path the memoised one is tested
 * against).
 */
export function collectNeedles(
  value: unknown,
  out: Needles,
  depth = 0,
  budget = { leaves: MAX_LEAVES },
  gov?: Governing,
  memo = true,
): boolean {
  if (depth > MAX_DEPTH) return false;
  if (typeof value === 'string') {
    if (--budget.leaves < 0) return false;
    addLeaf(memo ? leafOf(value) : computeLeaf(value, false), out, gov);
    return true;
  }
  if (typeof value === 'number') {
    if (--budget.leaves < 0) return false;
    if (Number.isFinite(value))
      addLeaf(memo ? numberLeafOf(value) : numberLeaf(value, false), out, gov);
    return true;
  }
  if (value === null || typeof value !== 'object')
    return typeof value !== 'function' && typeof value !== 'symbol';
  if (Array.isArray(value)) {
    for (const v of value) if (!collectNeedles(v, out, depth + 1, budget, gov, memo)) return false;
    return true;
  }
  for (const k in value) {
    if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
    if (!collectNeedles((value as Record<string, unknown>)[k], out, depth + 1, budget, gov, memo))
      return false;
  }
  return true;
}

/** Values whose exact answer a {@link Hay} keeps. */
const EXACT_MAX = 256;

/**
 * The views of one text the gate searches (see `canon.ts`): exact (`norm`: clean text plus the
 * canonical forms of the values spelled in it), numeric, compact, and — only ever to taint —
 * near (confusables skeleton, decoded base64 / hex / rot13). The costly views are built on
 * first use and kept with the memoised context.
 */
export class Hay {
  readonly norm: string;
  readonly num: string;
  readonly #raw: string;
  #compact: string | undefined;
  #words: Set<string> | undefined;
  #numWords: Set<string> | undefined;
  #digits: Set<string> | undefined;
  #near: string | undefined;
  #nearNum: string | undefined;
  #nearCompact: string | undefined;
  #exact: Map<CanonValue, boolean> | undefined;

  constructor(raw: string) {
    this.#raw = raw;
    const c = cleanText(raw);
    const ex = extras(c);
    this.norm = ex.length === 0 ? c : `${c} ¦ ${ex.join(' ¦ ')}`;
    this.num = numText(this.norm);
  }
  get compact(): string {
    return (this.#compact ??= compactText(this.norm));
  }
  /** Maximal word runs of the exact view. */
  get words(): ReadonlySet<string> {
    if (this.#words === undefined) addWordRuns(this.norm, (this.#words = new Set()));
    return this.#words;
  }
  /** Maximal word runs of the numeric view. */
  get numWords(): ReadonlySet<string> {
    if (this.#numWords === undefined) addWordRuns(this.num, (this.#numWords = new Set()));
    return this.#numWords;
  }
  /** Maximal digit runs of the compact view. */
  get digits(): ReadonlySet<string> {
    if (this.#digits === undefined) addDigitRuns(this.compact, (this.#digits = new Set()));
    return this.#digits;
  }
  get near(): string {
    if (this.#near === undefined) {
      const decoded = decodedText(this.#raw, this.norm);
      const ex = extras(decoded);
      this.#near = skeleton(
        `${this.norm} ¦ ${decoded}${ex.length === 0 ? '' : ` ¦ ${ex.join(' ¦ ')}`}`,
      );
    }
    return this.#near;
  }
  get nearNum(): string {
    return (this.#nearNum ??= numText(this.near));
  }
  get nearCompact(): string {
    return (this.#nearCompact ??= compactText(this.near));
  }

  /**
   * Exact: the value occurs in this text under its canonical form. Memoised per value (a
   * canonical value is one object per value, a Hay's text never changes; ADR 0077).
   */
  exact(v: CanonValue): boolean {
    const m = (this.#exact ??= new Map());
    let r = m.get(v);
    if (r === undefined) {
      r = this.exactUncached(v);
      if (m.size >= EXACT_MAX) m.clear();
      m.set(v, r);
    }
    return r;
  }

  /** {@link exact} without the memo (the full path). */
  exactUncached(v: CanonValue): boolean {
    const p = valueProbe(v);
    if (v.view === 'text') {
      if (p === undefined) return mentions(this.norm, v.form);
      return this.words.has(p) && (p === v.form || mentions(this.norm, v.form));
    }
    if (v.view === 'compact') {
      if (p === undefined) return compactMentions(this.compact, v.form);
      return this.digits.has(p) && (p === v.form || compactMentions(this.compact, v.form));
    }
    if (p === undefined) return mentions(this.num, v.form);
    return this.numWords.has(p) && (p === v.form || mentions(this.num, v.form));
  }

  /** Near: confusables skeleton, decoded encodings, or a piece of the value (taint only). */
  near_(v: CanonValue): boolean {
    const nn = nearNeedles(v);
    if (v.view === 'text') {
      if (mentions(this.near, nn.skeleton)) return true;
    } else if (v.view === 'compact') {
      if (compactMentions(this.nearCompact, v.form)) return true;
    } else if (mentions(this.nearNum, v.form)) return true;
    for (const t of nn.text) if (mentions(this.near, t)) return true;
    for (const t of nn.compact) if (this.nearCompact.includes(t)) return true;
    return false;
  }
}

/** A parsed sealed context with the views of every segment, memoised per (context, seal). */
export interface ParsedContext {
  readonly segments: readonly ParsedSegment[];
  readonly hays: readonly Hay[];
  readonly byId: ReadonlyMap<string, number>;
  /** Which segments have a run (word runs of the exact and numeric views, digit runs of the compact view). */
  readonly index: RunIndex;
}

/**
 * Run → indices of the segments whose view has it (ascending). Each view's map is built on
 * first use (a decision whose needles are all text never builds the compact view's).
 */
export class RunIndex {
  readonly #hays: readonly Hay[];
  #words: Map<string, number[]> | undefined;
  #numWords: Map<string, number[]> | undefined;
  #digits: Map<string, number[]> | undefined;
  #leafHits: Map<Leaf, readonly number[]> | undefined;

  constructor(hays: readonly Hay[]) {
    this.#hays = hays;
  }
  get words(): ReadonlyMap<string, readonly number[]> {
    return (this.#words ??= this.#build((h) => h.words));
  }
  get numWords(): ReadonlyMap<string, readonly number[]> {
    return (this.#numWords ??= this.#build((h) => h.numWords));
  }
  get digits(): ReadonlyMap<string, readonly number[]> {
    return (this.#digits ??= this.#build((h) => h.digits));
  }
  /**
   * The segments a leaf's needles mention, ascending — {@link mentionedSegments} of the leaf's
   * needles, memoised per leaf (a context's views never change; ADR 0077). Bounded.
   */
  leafHits(leaf: Leaf): readonly number[] {
    const m = (this.#leafHits ??= new Map());
    let r = leaf.kept ? m.get(leaf) : undefined;
    if (r === undefined) {
      const hit = new Uint8Array(this.#hays.length);
      const pc = { hays: this.#hays, index: this } as unknown as ParsedContext;
      for (const t of leaf.text) markMentioned(pc, t, 'text', hit);
      for (const t of leaf.numbers) markMentioned(pc, t, 'number', hit);
      for (const t of leaf.compact) markMentioned(pc, t, 'compact', hit);
      const out: number[] = [];
      for (let i = 0; i < hit.length; i++) if (hit[i] === 1) out.push(i);
      r = out.length === 0 ? NONE : out;
      if (!leaf.kept) return r; // a leaf computed for this call only: nothing to key it by
      if (m.size >= LEAF_HITS_MAX) m.clear();
      m.set(leaf, r);
    }
    return r;
  }
  #build(runs: (h: Hay) => ReadonlySet<string>): Map<string, number[]> {
    const m = new Map<string, number[]>();
    this.#hays.forEach((h, i) => {
      for (const r of runs(h)) {
        const l = m.get(r);
        if (l === undefined) m.set(r, [i]);
        else l.push(i);
      }
    });
    return m;
  }
}

const NONE: readonly number[] = Object.freeze([]);
/** Leaves whose mentions a context keeps (see {@link RunIndex.leafHits}). */
const LEAF_HITS_MAX = 512;

/** Marks in `hit` the segments whose `view` mentions `needle` (index lookup, then a check of the candidates). */
function markMentioned(
  pc: ParsedContext,
  needle: string,
  view: 'text' | 'number' | 'compact',
  hit: Uint8Array,
): void {
  const compact = view === 'compact';
  const p = probeOf(needle, compact);
  const n = pc.hays.length;
  if (p === undefined) {
    for (let i = 0; i < n; i++)
      if (hit[i] === 0 && viewMentions(pc.hays[i] as Hay, needle, view)) hit[i] = 1;
    return;
  }
  const m =
    view === 'text' ? pc.index.words : view === 'number' ? pc.index.numWords : pc.index.digits;
  const cand = m.get(p) ?? NONE;
  for (const i of cand)
    if (hit[i] === 0 && (p === needle || viewMentions(pc.hays[i] as Hay, needle, view))) hit[i] = 1;
}

function viewMentions(hay: Hay, needle: string, view: 'text' | 'number' | 'compact'): boolean {
  return view === 'text'
    ? mentions(hay.norm, needle)
    : view === 'number'
      ? mentions(hay.num, needle)
      : compactMentions(hay.compact, needle);
}

/**
 * Which segments of `pc` the needles mention (exact views): `hit[i] === 1` exactly when
 * {@link segmentMentioned}`(pc, i, needles)`, found through the run index.
 */
export function mentionedSegments(pc: ParsedContext, needles: Needles): Uint8Array {
  const hit = new Uint8Array(pc.hays.length);
  for (const t of needles.text) markMentioned(pc, t, 'text', hit);
  for (const t of needles.numbers) markMentioned(pc, t, 'number', hit);
  for (const t of needles.compact) markMentioned(pc, t, 'compact', hit);
  return hit;
}

/**
 * The indices (ascending) of the segments {@link mentionedSegments} marks, from the leaves
 * `needles.leaves` lists, each leaf's mentions memoised with the context: the same segments,
 * since a call's needles are the concatenation of its leaves' needles.
 */
export function mentionedByLeaves(pc: ParsedContext, leaves: readonly Leaf[]): readonly number[] {
  // One leaf mentioning anything (the common call): its memoised list is the answer.
  let only: readonly number[] = NONE;
  let several = false;
  for (const l of leaves) {
    const h = pc.index.leafHits(l);
    if (h.length === 0) continue;
    if (only.length === 0) only = h;
    else several = true;
  }
  if (!several) return only;
  const hit = new Uint8Array(pc.hays.length);
  for (const l of leaves) for (const i of pc.index.leafHits(l)) hit[i] = 1;
  const out: number[] = [];
  for (let i = 0; i < hit.length; i++) if (hit[i] === 1) out.push(i);
  return out;
}

/** True when segment `i` of `pc` is mentioned by any of `needles` (exact views, by scanning: the reference {@link mentionedSegments} is tested against). */
export function segmentMentioned(pc: ParsedContext, i: number, needles: Needles): boolean {
  const hay = pc.hays[i] as Hay;
  for (const t of needles.text) if (mentions(hay.norm, t)) return true;
  for (const t of needles.numbers) if (mentions(hay.num, t)) return true;
  if (needles.compact.length > 0) {
    const c = hay.compact;
    for (const t of needles.compact) if (compactMentions(c, t)) return true;
  }
  return false;
}

/**
 * Canonical forms (and their {@link valueKey}) of recent strings and numbers: a pure function
 * of the value, and an agent turn asks about the same values (claims, recipients) again and
 * again. One object per value, so what is derived from it (its index probe) is derived once.
 * Bounded; cleared when full.
 */
const MEMO_MAX = 2048;

/** `map`'s value for `key`, made by `make` on a miss (bounded: cleared when full). */
function memoised<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  const hit = map.get(key);
  if (hit !== undefined) return hit;
  const v = make();
  if (map.size >= MEMO_MAX) map.clear();
  map.set(key, v);
  return v;
}
export interface Canon {
  readonly cv: CanonValue | undefined;
  readonly key: string;
}
const memo = new Map<string, Canon>();
const numMemo = new Map<number, Canon>();

function freshCanonOfString(value: string): Canon {
  const c = cleanText(value);
  const cv = c.length === 0 ? undefined : canonString(c);
  return { cv, key: keyOf(cv) };
}
function canonOfString(value: string): Canon {
  return memoised(memo, value, () => freshCanonOfString(value));
}

function freshCanonOfNumber(value: number): Canon {
  const cv: CanonValue = { kind: 'amount', form: String(value), view: 'number' };
  return { cv, key: `n:${cv.form}` };
}
/** A finite number's entry. */
function canonOfNumber(value: number): Canon {
  return memoised(numMemo, value, () => freshCanonOfNumber(value));
}

/** The canonical form of a single value, or undefined for values that are never mentioned. */
export function canonValue(value: unknown): CanonValue | undefined {
  if (typeof value === 'string') return canonOfString(value).cv;
  if (typeof value === 'number' && Number.isFinite(value)) return canonOfNumber(value).cv;
  return undefined;
}

/** A value's canonical form and {@link valueKey}, from the memo (one lookup for both); with `memo` false, computed afresh (the full path). */
export function canonEntry(value: unknown, memo = true): Canon {
  if (typeof value === 'string') return memo ? canonOfString(value) : freshCanonOfString(value);
  if (typeof value === 'number' && Number.isFinite(value))
    return memo ? canonOfNumber(value) : freshCanonOfNumber(value);
  return { cv: undefined, key: valueKey(value) };
}

/** The {@link valueKey} of a canonical value. */
export function keyOf(cv: CanonValue | undefined): string {
  if (cv === undefined) return 's:';
  return cv.view === 'number'
    ? `n:${cv.form}`
    : cv.view === 'compact'
      ? `c:${cv.form}`
      : `s:${cv.form}`;
}

/**
 * Equality and search key of a parameter value: `n:<number>` for numbers and every numeric
 * spelling (`"98.50"`, `"2,500.00"`, `"two thousand"`), `c:<compact>` for IBAN / account /
 * phone numbers (separators removed), `s:<canonical>` for other strings (e-mail, URL, domain,
 * date canonical forms; clean text otherwise), `j:<JSON>` for the rest.
 */
export function valueKey(v: unknown): string {
  if (typeof v === 'number') return Number.isFinite(v) ? canonOfNumber(v).key : `x:${v}`;
  if (typeof v === 'string') return canonOfString(v).key;
  try {
    return `j:${JSON.stringify(v) ?? String(v)}`;
  } catch {
    return `x:${typeof v}`;
  }
}

/** Parse `context` under `seal` (core/render `parseSegments` — never anything else). */
export function parseContext(
  context: string,
  seal: string,
  hayOf: (content: string) => Hay = (c) => new Hay(c),
): ParsedContext {
  const segments = parseSegments(context, seal);
  const byId = new Map<string, number>();
  segments.forEach((s, i) => {
    const id = flat(s.id);
    if (!byId.has(id)) byId.set(id, i);
  });
  const hays = segments.map((s) => hayOf(s.content));
  return { segments, hays, byId, index: new RunIndex(hays) };
}

/** Segment views kept per gate (see {@link ContextCache}). */
const HAYS_MAX = 1024;

/**
 * A small memo of parsed contexts. An agent turn asks the gate about several calls against
 * the same rendered context; parsing once keeps a decision within its microsecond budget.
 * Bounded (oldest evicted), keyed by seal, then checked for the exact same context string.
 */
export class ContextCache {
  readonly #max: number;
  readonly #map = new Map<string, { context: string; parsed: ParsedContext }>();
  /**
   * The views of segment contents already seen (a {@link Hay} is a pure function of the
   * content, and a segment's content never changes): the next turn's context — a new seal,
   * mostly the same memories — builds only the views of segments new to it. Bounded.
   */
  readonly #hays = new Map<string, Hay>();
  readonly #hayOf = (content: string): Hay => {
    let h = this.#hays.get(content);
    if (h === undefined) {
      h = new Hay(content);
      if (this.#hays.size >= HAYS_MAX) this.#hays.delete(this.#hays.keys().next().value as string);
      this.#hays.set(content, h);
    }
    return h;
  };

  constructor(max = 32) {
    this.#max = max;
  }

  get(context: string, seal: string): ParsedContext {
    const hit = this.#map.get(seal);
    if (hit !== undefined && hit.context === context) return hit.parsed;
    const parsed = parseContext(context, seal, this.#hayOf);
    this.#map.delete(seal);
    if (this.#map.size >= this.#max) {
      const oldest = this.#map.keys().next();
      if (oldest.done !== true) this.#map.delete(oldest.value);
    }
    this.#map.set(seal, { context, parsed });
    return parsed;
  }
}
