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
}

/** One argument value of a governed kind. */
export interface GovernedValue {
  /** Top-level parameter the value sits under. */
  readonly param: string;
  readonly value: CanonValue;
}

/** Fresh, empty needles. */
export const needles = (): Needles => ({ text: [], numbers: [], compact: [], governed: [] });

const EDGE_PUNCT = /^[("'<[{`]+|[)"'>\]}`,;:!?.]+$/g;
const IDENTLIKE = /[0-9@/]|\.[a-z]/;

/** What {@link collectNeedles} governs: kinds, and the parameter a leaf belongs to. */
export interface Governing {
  readonly kinds: ReadonlySet<ValueKind>;
  readonly param: string;
  /** Also govern the identifier-like tokens of free text (unnamed tools: any channel counts). */
  readonly tokens?: boolean;
}

function addString(clean: string, out: Needles, gov: Governing | undefined): void {
  out.text.push(clean);
  const cv = canonValue(clean) ?? { kind: 'text' as const, form: clean, view: 'text' as const };
  if (cv.view === 'text') {
    if (cv.form !== clean) out.text.push(cv.form);
  } else if (cv.view === 'compact') out.compact.push(cv.form);
  else out.numbers.push(cv.form);
  if (gov !== undefined && gov.kinds.has(cv.kind))
    out.governed.push({ param: gov.param, value: cv });
}

/**
 * Add the needles of one value to `out`; false when the value exceeds the walk bounds. With
 * `gov`, whole string and number values of a governed kind are also listed in `out.governed`.
 */
export function collectNeedles(
  value: unknown,
  out: Needles,
  depth = 0,
  budget = { leaves: MAX_LEAVES },
  gov?: Governing,
): boolean {
  if (depth > MAX_DEPTH) return false;
  if (typeof value === 'string') {
    if (--budget.leaves < 0) return false;
    const n = cleanText(value);
    if (n.length === 0) return true;
    if (n.length <= FREE_TEXT_CHARS || !n.includes(' ')) {
      addString(n, out, gov);
      return true;
    }
    out.text.push(n);
    const ex = extras(n);
    for (const e of ex) out.text.push(e);
    let k = 0;
    for (const raw of n.split(' ')) {
      const t = raw.replace(EDGE_PUNCT, '');
      if (t.length >= 4 && t !== n && IDENTLIKE.test(t)) {
        addString(t, out, gov?.tokens === true ? gov : undefined);
        if (++k >= MAX_TOKENS_PER_LEAF) break;
      }
    }
    return true;
  }
  if (typeof value === 'number') {
    if (--budget.leaves < 0) return false;
    if (Number.isFinite(value)) {
      out.numbers.push(String(value));
      if (gov !== undefined && gov.kinds.has('amount'))
        out.governed.push({
          param: gov.param,
          value: { kind: 'amount', form: String(value), view: 'number' },
        });
    }
    return true;
  }
  if (value === null || typeof value !== 'object')
    return typeof value !== 'function' && typeof value !== 'symbol';
  if (Array.isArray(value)) {
    for (const v of value) if (!collectNeedles(v, out, depth + 1, budget, gov)) return false;
    return true;
  }
  for (const k in value) {
    if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
    if (!collectNeedles((value as Record<string, unknown>)[k], out, depth + 1, budget, gov))
      return false;
  }
  return true;
}

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
  #near: string | undefined;
  #nearNum: string | undefined;
  #nearCompact: string | undefined;

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

  /** Exact: the value occurs in this text under its canonical form. */
  exact(v: CanonValue): boolean {
    if (v.view === 'text') return mentions(this.norm, v.form);
    if (v.view === 'compact') return compactMentions(this.compact, v.form);
    return mentions(this.num, v.form);
  }

  /** Near: confusables skeleton, decoded encodings, or a piece of the value (taint only). */
  near_(v: CanonValue): boolean {
    if (v.view === 'text') {
      if (mentions(this.near, skeleton(v.unicode ?? v.form))) return true;
    } else if (v.view === 'compact') {
      if (compactMentions(this.nearCompact, v.form)) return true;
    } else if (mentions(this.nearNum, v.form)) return true;
    const p = pieces(v);
    for (const t of p.text) if (mentions(this.near, skeleton(t))) return true;
    for (const t of p.compact) if (this.nearCompact.includes(t)) return true;
    return false;
  }
}

/** A parsed sealed context with the views of every segment, memoised per (context, seal). */
export interface ParsedContext {
  readonly segments: readonly ParsedSegment[];
  readonly hays: readonly Hay[];
  readonly byId: ReadonlyMap<string, number>;
}

/** True when segment `i` of `pc` is mentioned by any of `needles` (exact views). */
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
 * Canonical forms of recent strings: a pure function of the string, and an agent turn asks
 * about the same values (claims, recipients) again and again. Bounded; cleared when full.
 */
const MEMO_MAX = 2048;
const memo = new Map<string, CanonValue | null>();

/** The canonical form of a single value, or undefined for values that are never mentioned. */
export function canonValue(value: unknown): CanonValue | undefined {
  if (typeof value === 'string') {
    const hit = memo.get(value);
    if (hit !== undefined) return hit ?? undefined;
    const c = cleanText(value);
    const cv = c.length === 0 ? undefined : canonString(c);
    if (memo.size >= MEMO_MAX) memo.clear();
    memo.set(value, cv ?? null);
    return cv;
  }
  if (typeof value === 'number' && Number.isFinite(value))
    return { kind: 'amount', form: String(value), view: 'number' };
  return undefined;
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
  if (typeof v === 'number') return Number.isFinite(v) ? `n:${v}` : `x:${v}`;
  if (typeof v === 'string') return keyOf(canonValue(v));
  try {
    return `j:${JSON.stringify(v) ?? String(v)}`;
  } catch {
    return `x:${typeof v}`;
  }
}

/** The canonical value a {@link valueKey} stands for (undefined for `j:` / `x:` keys). */
export function keyValue(key: string): CanonValue | undefined {
  const kind = key.charCodeAt(0);
  const form = key.slice(2);
  if (form === '') return undefined;
  if (kind === 110 /* n */) return { kind: 'amount', form, view: 'number' };
  if (kind === 99 /* c */) return { kind: 'account', form, view: 'compact' };
  if (kind === 115 /* s */) return { kind: 'text', form, view: 'text' };
  return undefined;
}

/** Whether segment `i` of `pc` mentions the value with key `key` ({@link valueKey}), exactly. */
export function keyMentionedIn(pc: ParsedContext, i: number, key: string): boolean {
  const cv = keyValue(key);
  return cv !== undefined && (pc.hays[i] as Hay).exact(cv);
}

/** Parse `context` under `seal` (core/render `parseSegments` — never anything else). */
export function parseContext(context: string, seal: string): ParsedContext {
  const segments = parseSegments(context, seal);
  const byId = new Map<string, number>();
  segments.forEach((s, i) => {
    if (!byId.has(s.id)) byId.set(s.id, i);
  });
  return { segments, hays: segments.map((s) => new Hay(s.content)), byId };
}

/**
 * A small memo of parsed contexts. An agent turn asks the gate about several calls against
 * the same rendered context; parsing once keeps a decision within its microsecond budget.
 * Bounded (oldest evicted), keyed by seal, then checked for the exact same context string.
 */
export class ContextCache {
  readonly #max: number;
  readonly #map = new Map<string, { context: string; parsed: ParsedContext }>();

  constructor(max = 32) {
    this.#max = max;
  }

  get(context: string, seal: string): ParsedContext {
    const hit = this.#map.get(seal);
    if (hit !== undefined && hit.context === context) return hit.parsed;
    const parsed = parseContext(context, seal);
    this.#map.delete(seal);
    if (this.#map.size >= this.#max) {
      const oldest = this.#map.keys().next();
      if (oldest.done !== true) this.#map.delete(oldest.value);
    }
    this.#map.set(seal, { context, parsed });
    return parsed;
  }
}
