/**
 * @module core/gate/match
 * Which rendered segments a tool call "mentions" (MemLineage §3.7 Layer 1), and the memoised
 * parse of a sealed context.
 *
 * ## Matching rule
 * Text is normalised by lower-casing and collapsing every whitespace run to one space (and
 * trimming). The call's *needles* are taken from its argument values (object keys are
 * structure, not content; walked to depth {@link MAX_DEPTH}, at most {@link MAX_LEAVES}
 * leaves — beyond that the call is malformed and the gate fails closed):
 * - a string leaf contributes its whole normalised value; a long one (free text, more than
 *   {@link FREE_TEXT_CHARS} chars — an e-mail body, a memo) also contributes each of its
 *   identifier-like tokens: whitespace-separated, edge punctuation stripped, ≥ 4 chars and
 *   containing a digit, `@`, `/` or `.` followed by a letter (IBANs, amounts, addresses, URLs);
 * - a finite number contributes its JS decimal form (`100`, `99.5`); booleans and null none.
 * A segment is mentioned when a needle occurs in its normalised content *at token
 * boundaries*: the characters just outside the occurrence are not letters or digits (where
 * the needle's own edge is a letter or digit). So `5` matches "pay 5 EUR" but not "15" or
 * "500"; `100` matches "100.00". Numbers are searched in a copy of the content with digit group
 * separators removed and trailing decimal zeros dropped (`1,000.50` → `1000.5`, `100.00` →
 * `100`), so `98.5` matches "98.50 EUR".
 *
 * Over-matching only makes Layer 1 stricter (more segments considered); under-matching is the
 * residual risk — a value the model paraphrased (spelled-out numbers, reformatted IBANs) is not
 * recognised, which is why Layer 2 (explicit parameter provenance) exists.
 */
import { type ParsedSegment, parseSegments } from '../render/sentinel.js';

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

/**
 * Whether `t` has a whitespace run to collapse: two spaces in a row, or any whitespace other
 * than U+0020 — exactly the regex `/\s\s|[^\S ]/` (ECMAScript `\s`: WhiteSpace and
 * LineTerminator), as a loop (cheaper than a regex call on the short strings of a tool call).
 */
function needsCollapse(t: string): boolean {
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c === 32) {
      if (t.charCodeAt(i + 1) === 32) return true;
    } else if (c < 128) {
      if (c >= 9 && c <= 13) return true;
    } else if (isNonAsciiSpace(c)) return true;
  }
  return false;
}
function isNonAsciiSpace(c: number): boolean {
  return (
    c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
    c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}

/** Digit-group separators removed and trailing decimal zeros dropped (`1,000.50` → `1000.5`). */
function numText(normalised: string): string {
  return normalised
    .replace(/(\d)[,_'](?=\d)/g, '$1')
    .replace(/(\d)\.(\d*?)0+(?!\d)/g, (_m, a: string, b: string) => (b === '' ? a : `${a}.${b}`));
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

/** Needles of a call: text needles (search normalised content) and numeric ones (search `num`). */
export interface Needles {
  readonly text: string[];
  readonly numbers: string[];
}

const EDGE_PUNCT = /^[("'<[{`]+|[)"'>\]}`,;:!?.]+$/g;
const IDENTLIKE = /[0-9@/]|\.[a-z]/;

/** Add the needles of one value to `out`; false when the value exceeds the walk bounds. */
export function collectNeedles(value: unknown, out: Needles, depth = 0, budget = { leaves: MAX_LEAVES }): boolean {
  if (depth > MAX_DEPTH) return false;
  if (typeof value === 'string') {
    if (--budget.leaves < 0) return false;
    const n = normText(value);
    if (n.length === 0) return true;
    out.text.push(n);
    if (n.length > FREE_TEXT_CHARS) {
      let k = 0;
      for (const raw of n.split(' ')) {
        const t = raw.replace(EDGE_PUNCT, '');
        if (t.length >= 4 && t !== n && IDENTLIKE.test(t)) {
          out.text.push(t);
          if (++k >= MAX_TOKENS_PER_LEAF) break;
        }
      }
    }
    return true;
  }
  if (typeof value === 'number') {
    if (--budget.leaves < 0) return false;
    if (Number.isFinite(value)) out.numbers.push(String(value));
    return true;
  }
  if (value === null || typeof value !== 'object') return typeof value !== 'function' && typeof value !== 'symbol';
  if (Array.isArray(value)) {
    for (const v of value) if (!collectNeedles(v, out, depth + 1, budget)) return false;
    return true;
  }
  for (const k in value) {
    if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
    if (!collectNeedles((value as Record<string, unknown>)[k], out, depth + 1, budget)) return false;
  }
  return true;
}

/** A parsed sealed context with per-segment normalised text, memoised per (context, seal). */
export interface ParsedContext {
  readonly segments: readonly ParsedSegment[];
  readonly norm: readonly string[];
  readonly num: readonly string[];
  readonly byId: ReadonlyMap<string, number>;
}

/** True when segment `i` of `pc` is mentioned by any of `needles`. */
export function segmentMentioned(pc: ParsedContext, i: number, needles: Needles): boolean {
  const hay = pc.norm[i] as string;
  for (const t of needles.text) if (mentions(hay, t)) return true;
  if (needles.numbers.length > 0) {
    const nh = pc.num[i] as string;
    for (const t of needles.numbers) if (mentions(nh, t)) return true;
  }
  return false;
}

/** Whether a single value is mentioned by `hay` (normalised text) — Layer 2 source checks. */
export function valueMentioned(hayNorm: string, value: unknown): boolean {
  if (typeof value === 'string') return mentions(hayNorm, normText(value));
  if (typeof value === 'number' && Number.isFinite(value)) return mentions(numText(hayNorm), String(value));
  return false;
}

/**
 * Equality and search key of a parameter value: `n:<number>` for finite numbers and numeric
 * strings (so `"98.50"` equals `98.5`), `s:<normText>` for other strings, `j:<JSON>` otherwise.
 */
export function valueKey(v: unknown): string {
  if (typeof v === 'number') return Number.isFinite(v) ? `n:${v}` : `x:${v}`;
  if (typeof v === 'string') {
    const t = v.trim();
    // Only a string starting like a number can be numeric: skip the regex for the rest.
    const c = t.charCodeAt(0);
    if ((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46) if (NUMERIC.test(t)) return `n:${Number(t)}`;
    return `s:${normText(v)}`;
  }
  try {
    return `j:${JSON.stringify(v) ?? String(v)}`;
  } catch {
    return `x:${typeof v}`;
  }
}
const NUMERIC = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

/** Whether segment `i` of `pc` mentions the value with key `key` ({@link valueKey}). */
export function keyMentionedIn(pc: ParsedContext, i: number, key: string): boolean {
  const kind = key.charCodeAt(0);
  if (kind === 110 /* n */) return mentions(pc.num[i] as string, key.slice(2));
  if (kind === 115 /* s */) return mentions(pc.norm[i] as string, key.slice(2));
  return false;
}

/** Parse `context` under `seal` (core/render `parseSegments` — never anything else). */
export function parseContext(context: string, seal: string): ParsedContext {
  const segments = parseSegments(context, seal);
  const norm = segments.map((s) => normText(s.content));
  const byId = new Map<string, number>();
  segments.forEach((s, i) => {
    if (!byId.has(s.id)) byId.set(s.id, i);
  });
  return { segments, norm, num: norm.map(numText), byId };
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
