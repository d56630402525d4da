/**
 * @module core/gate/canon
 * Canonical forms per value kind (issue 18, ADR 0043): the gate decides on where a value came
 * from, not on how it is spelled. A tool-call value and the memory segments it may have come
 * from are both brought to canonical forms before matching:
 *
 * - **Unicode** (every kind): NFKC, then zero-width, bidi and other invisible format
 *   characters removed, then lower case (`cleanText`).
 * - **E-mail addresses**: `at` / `dot` spelled out or bracketed (`billing [at] attacker [dot]
 *   example`, also `arobase`, `arroba`, `chiocciola`, `klammeraffe`, `point`, `punto`, `punkt`),
 *   spaces around `@` and `.`, percent-encoding, an internationalised domain to its IDNA ASCII
 *   form (Node's WHATWG `domainToASCII`), a trailing dot dropped.
 * - **URLs**: defanged schemes and dots (`hxxp`, `[.]`, `[:]`), host lower-cased and IDNA, a
 *   trailing host dot and a bare `/` path dropped (WHATWG `URL`).
 * - **IBAN / account / phone numbers**: separators (spaces, dashes, dots, slashes, brackets)
 *   removed — searched in a *compact* view of the text with digit boundaries.
 * - **Amounts**: digit grouping, decimal commas (`2.500,00`), `k` / `thousand` suffixes and
 *   English number words (`two thousand five hundred`) become one decimal form.
 * - **Dates**: ISO `yyyy-mm-dd` from `2024-03-05`, `5 March 2024`, `March 5, 2024`, `05.03.2024`,
 *   `03/05/2024` (both readings of a slashed date).
 *
 * A segment's *exact* view is its clean text plus the canonical forms of every obfuscated or
 * reformatted value found in it (appended, so ordinary matching is unchanged). Its *near* view
 * adds what only an adversary writes: the Unicode confusables skeleton (UTS #39 table, from the
 * `unhomoglyph` package), and text decoded from base64, hex and rot13 tokens. Exact matches may
 * authorise a value (a trusted segment that spells the user's address out still traces it);
 * near matches only ever *taint* one: where a value is near an untrusted segment's value, that
 * segment's label governs it. Splitting a value across entries is caught by {@link pieces}:
 * an e-mail's domain, a URL's host, a long number's prefix or suffix found in an untrusted
 * segment is a near match.
 */
import { domainToASCII } from 'node:url';
import confusables from 'unhomoglyph/data.json' with { type: 'json' };

/** Kinds of values the gate recognises. */
export const ValueKinds = [
  'email',
  'url',
  'domain',
  'iban',
  'phone',
  'account',
  'amount',
  'date',
  'path',
  'text',
] as const;
export type ValueKind = (typeof ValueKinds)[number];

/** Kinds a sensitive tool's arguments are governed by when a policy names none (ADR 0043). */
export const DEFAULT_GOVERNED_KINDS: readonly ValueKind[] = [
  'email',
  'url',
  'domain',
  'iban',
  'phone',
  'account',
];

/** A value brought to its canonical search form. */
export interface CanonValue {
  readonly kind: ValueKind;
  /** The exact search form: in the exact view (`text` kinds), the compact view (numbers), or the numeric view (amounts). */
  readonly form: string;
  /** Which view `form` is searched in. */
  readonly view: 'text' | 'compact' | 'number';
  /** The clean value before IDNA (set when it differs): near matches compare its skeleton. */
  readonly unicode?: string;
}

// ---------------------------------------------------------------------------------------------
// Unicode
// ---------------------------------------------------------------------------------------------

/** Invisible format characters: soft hyphen, combining grapheme joiner, zero-width and bidi controls, variation selectors, fillers. */
/* eslint-disable no-misleading-character-class -- combining marks are matched one by one, on purpose */
const INVISIBLE = new RegExp(
  '[\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0]',
  'g',
);
/* eslint-enable no-misleading-character-class */

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) return false;
  return true;
}

/**
 * Whether `t` has a whitespace run to collapse: two spaces in a row, or any whitespace other
 * than U+0020 — exactly the regex `/\s\s|[^\S ]/` (ECMAScript `\s`: WhiteSpace and
 * LineTerminator), as a loop (cheaper than a regex call on the short strings of a tool call).
 */
export function needsCollapse(t: string): boolean {
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
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** NFKC, invisibles removed, lower case, whitespace collapsed and trimmed. ASCII skips the Unicode steps. */
export function cleanText(s: string): string {
  let t = s;
  if (!isAscii(t)) t = t.normalize('NFKC').replace(INVISIBLE, '');
  t = t.toLowerCase().trim();
  return needsCollapse(t) ? t.replace(/\s+/g, ' ') : t;
}

const SKELETON = new Map<number, string>();
for (const [k, v] of Object.entries(confusables as Record<string, string>)) {
  const cp = k.codePointAt(0);
  if (cp !== undefined) SKELETON.set(cp, v.toLowerCase());
}

/**
 * The confusables skeleton of clean text (UTS #39 `confusables.txt`, as packaged by
 * `unhomoglyph`): every character mapped to its prototype, lower-cased. `аttacker` (Cyrillic а)
 * and `attacker` share a skeleton. Both sides of a near match go through it.
 */
export function skeleton(clean: string): string {
  let out = '';
  for (const ch of clean) {
    const m = SKELETON.get(ch.codePointAt(0) as number);
    out += m ?? ch;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Spelled-out and defanged addresses
// ---------------------------------------------------------------------------------------------

const AT_WORDS = 'at|arobase|arroba|chiocciola|klammeraffe|sobaka|snabel-a';
const DOT_WORDS = 'dot|point|punto|punkt|ponto|punt';
const OPEN = '[\\[({<]';
const CLOSE = '[\\])}>]';
const AT = `(?:\\s*@\\s*|\\s*${OPEN}\\s*(?:${AT_WORDS}|@)\\s*${CLOSE}\\s*|\\s+(?:${AT_WORDS})\\s+|\\s*%40\\s*)`;
const DOT = `(?:\\.|\\s*${OPEN}\\s*(?:${DOT_WORDS}|\\.)\\s*${CLOSE}\\s*|\\s+(?:${DOT_WORDS})\\s+)`;
// Bounded like the things they spell (a DNS label is at most 63 characters, an address's
// local part at most 64): an unbounded run made every start position inside a long word scan to
// its end — quadratic, ~3 s of one core for a 4,000-character segment, minutes at the 64 KiB
// content limit (issue 18 speed).
const LABEL = '[\\p{L}\\p{N}](?:[\\p{L}\\p{N}-]{0,61}[\\p{L}\\p{N}])?';
const LOCAL = "[\\p{L}\\p{N}._%+'-]{1,64}";
const EMAIL_RE = new RegExp(`(${LOCAL})${AT}(${LABEL}(?:${DOT}${LABEL})+)`, 'gu');
/** A domain written with bracketed or spelled dots (`attacker[.]example`, `attacker dot example`). */
const DOMAIN_OBF_RE = new RegExp(
  `(${LABEL})((?:(?:\\s*${OPEN}\\s*(?:${DOT_WORDS}|\\.)\\s*${CLOSE}\\s*|\\s+(?:${DOT_WORDS})\\s+)${LABEL})+)`,
  'gu',
);
const DOT_SPLIT = new RegExp(DOT, 'gu');
const URL_RE = /\b(h(?:tt|xx)ps?|ftp)(?:\[:\]|:)\/\/[^\s<>"'|]+/gu;
const NON_ASCII_DOMAIN_RE =
  /[\p{L}\p{N}-]{0,63}\P{ASCII}[\p{L}\p{N}-]{0,63}(?:\.[\p{L}\p{N}-]{1,63})+/gu;

/** A domain's IDNA ASCII form, trailing dot dropped; '' when it is not a valid domain. */
export function asciiDomain(d: string): string {
  const t = d.endsWith('.') ? d.slice(0, -1) : d;
  if (isAscii(t) && !t.includes('%')) return t;
  return domainToASCII(t).toLowerCase();
}

function splitDomain(spelled: string): string {
  return spelled
    .split(DOT_SPLIT)
    .map((x) => x.trim())
    .filter((x) => x !== '')
    .join('.');
}

/** Canonical e-mail from a local part and a (possibly spelled-out) domain, or undefined. */
function email(local: string, domain: string): string | undefined {
  let l = local;
  if (l.includes('%')) l = safeDecode(l);
  const d = asciiDomain(splitDomain(domain));
  if (d === '' || !d.includes('.')) return undefined;
  return `${l}@${d}`;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Canonical URL string (WHATWG), or undefined when it does not parse. */
export function canonicalUrl(raw: string): string | undefined {
  const refanged = raw
    .replace(/^hxxp/, 'http')
    .replace(/\[:\]/g, ':')
    .replace(/\[\.\]|\(\.\)|\[dot\]|\(dot\)/g, '.');
  let u: URL;
  try {
    u = new URL(refanged.startsWith('www.') ? `http://${refanged}` : refanged);
  } catch {
    return undefined;
  }
  if (u.hostname.endsWith('.')) u.hostname = u.hostname.slice(0, -1);
  const s = u.href.toLowerCase();
  return u.pathname === '/' && u.search === '' && u.hash === '' ? s.replace(/\/$/, '') : s;
}

/** The host of a canonical URL (without `www.`), or ''. */
export function urlHost(canonical: string): string {
  try {
    const h = new URL(canonical).hostname;
    return h.startsWith('www.') ? h.slice(4) : h;
  } catch {
    return '';
  }
}

// ---------------------------------------------------------------------------------------------
// Numbers, amounts, dates
// ---------------------------------------------------------------------------------------------

const SMALL: Readonly<Record<string, number>> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const SCALE: Readonly<Record<string, number>> = {
  hundred: 100,
  thousand: 1000,
  million: 1e6,
  billion: 1e9,
};
const NUMBER_WORD = `(?:${[...Object.keys(SMALL), ...Object.keys(SCALE)].join('|')})`;
const WORDS_RE = new RegExp(`\\b${NUMBER_WORD}(?:(?:\\s+|-|\\s+and\\s+)${NUMBER_WORD})*\\b`, 'g');

/** `two thousand five hundred` → 2500 (English number words), or undefined. */
export function wordsToNumber(words: string): number | undefined {
  let total = 0;
  let current = 0;
  let any = false;
  for (const w of words.split(/[\s-]+/)) {
    if (w === 'and' || w === '') continue;
    const s = SMALL[w];
    if (s !== undefined) {
      current += s;
      any = true;
      continue;
    }
    const k = SCALE[w];
    if (k === undefined) return undefined;
    any = true;
    if (k === 100) current = (current === 0 ? 1 : current) * 100;
    else {
      total += (current === 0 ? 1 : current) * k;
      current = 0;
    }
  }
  return any ? total + current : undefined;
}

/** Digit groups removed and trailing decimal zeros dropped (`1,000.50` → `1000.5`). */
export function numText(clean: string): string {
  return clean
    .replace(/(\d)[,_'](?=\d{3}(?!\d))/g, '$1')
    .replace(/(\d)[,_'](?=\d)/g, '$1')
    .replace(/(\d)\.(\d*?)0+(?!\d)/g, (_m, a: string, b: string) => (b === '' ? a : `${a}.${b}`));
}

/** Decimal comma amounts (`2.500,00`, `98,50`) and `k` / `thousand` suffixes as plain numbers. */
const EU_AMOUNT_RE = /(?<![\d.,])(\d{1,3}(?:[.\s\u202f]\d{3})*|\d+),(\d{1,2})(?![\d,])/g;
const SUFFIX_RE = /(?<![\d.,])(\d+(?:[.,]\d+)?)\s?(k|thousand|m|million|mio)\b/g;

/** Parse a numeric string in any common format to a number, or undefined. */
export function parseAmount(s: string): number | undefined {
  return amountOf(cleanText(s));
}

/** {@link parseAmount} of clean text. */
function amountOf(clean: string): number | undefined {
  const t = clean
    .replace(/^(?:[$€£¥]|eur|usd|gbp|chf)\s*/, '')
    .replace(/\s*(?:[$€£¥]|eur|usd|gbp|chf|euros?|dollars?|pounds?)$/, '')
    .trim();
  if (t === '') return undefined;
  if (/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/.test(t)) return Number(t);
  if (/^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$/.test(t)) return Number(t.replace(/,/g, ''));
  if (/^[-+]?\d{1,3}(?:[.\s']\d{3})+(?:,\d+)?$/.test(t))
    return Number(t.replace(/[.\s']/g, '').replace(',', '.'));
  if (/^[-+]?\d+,\d{1,2}$/.test(t)) return Number(t.replace(',', '.'));
  const suf = /^(\d+(?:[.,]\d+)?)\s?(k|thousand|m|million|mio)$/.exec(t);
  if (suf !== null)
    return (
      Number((suf[1] as string).replace(',', '.')) *
      (suf[2] === 'k' || suf[2] === 'thousand' ? 1000 : 1e6)
    );
  if (/^[a-z\s-]+$/.test(t)) return wordsToNumber(t);
  return undefined;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH =
  '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const DATE_ISO_RE = /\b(\d{4})-(\d{1,2})-(\d{1,2})\b/g;
const DATE_DMY_TEXT_RE = new RegExp(
  `\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\.?,?\\s+(\\d{4})\\b`,
  'g',
);
const DATE_MDY_TEXT_RE = new RegExp(
  `\\b${MONTH}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`,
  'g',
);
const DATE_NUM_RE = /\b(\d{1,2})([./])(\d{1,2})\2(\d{4})\b/g;

function iso(y: number, m: number, d: number): string | undefined {
  if (m < 1 || m > 12 || d < 1 || d > 31) return undefined;
  return `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}
const monthOf = (name: string): number => MONTHS.indexOf(name.slice(0, 3)) + 1;

/** Every ISO reading of the dates in clean text (a slashed date has two). */
function datesIn(clean: string, out: string[]): void {
  // Each pass only where its shape can occur (a cheap test first: most text has no dates).
  if (clean.includes('-'))
    for (const m of clean.matchAll(DATE_ISO_RE)) push(out, iso(+m[1]!, +m[2]!, +m[3]!), m[0]);
  if (MONTH_HINT.test(clean)) {
    for (const m of clean.matchAll(DATE_DMY_TEXT_RE))
      push(out, iso(+m[3]!, monthOf(m[2]!), +m[1]!));
    for (const m of clean.matchAll(DATE_MDY_TEXT_RE))
      push(out, iso(+m[3]!, monthOf(m[1]!), +m[2]!));
  }
  if (DATE_NUM_HINT.test(clean))
    for (const m of clean.matchAll(DATE_NUM_RE)) {
      push(out, iso(+m[4]!, +m[3]!, +m[1]!));
      if (m[2] === '/') push(out, iso(+m[4]!, +m[1]!, +m[3]!));
    }
}
/** Necessary for a month-name date: a month's first three letters. */
const MONTH_HINT = /jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec/;
/** Necessary for a numeric date: a digit, `.` or `/`, a digit. */
const DATE_NUM_HINT = /\d[./]\d/;

/** A date string's ISO form (day-first for dotted and slashed dates), or undefined. */
export function parseDate(clean: string): string | undefined {
  const out: string[] = [];
  datesIn(clean, out);
  return out.length > 0 && out[0] !== undefined && cleanText(clean).length <= 24
    ? out[0]
    : undefined;
}

function push(out: string[], v: string | undefined, literal?: string): void {
  if (v !== undefined && v !== literal) out.push(v);
}

// ---------------------------------------------------------------------------------------------
// Views of a segment
// ---------------------------------------------------------------------------------------------

const HAS_AT_WORD = new RegExp(
  `\\s(?:${AT_WORDS})\\s|${OPEN}\\s*(?:${AT_WORDS}|@)\\s*${CLOSE}|%40`,
);
const HAS_DOT_WORD = new RegExp(
  `\\s(?:${DOT_WORDS})\\s|${OPEN}\\s*(?:${DOT_WORDS}|\\.)\\s*${CLOSE}`,
);

/**
 * The canonical forms of the obfuscated, reformatted or internationalised values in clean
 * text — appended to it to make the exact view. Empty for plain text (the common case costs a
 * few `includes` and regex tests).
 */
export function extras(clean: string): string[] {
  const out: string[] = [];
  const atWord = HAS_AT_WORD.test(clean);
  const dotWord = HAS_DOT_WORD.test(clean);
  if (atWord || clean.includes('@')) {
    for (const m of clean.matchAll(EMAIL_RE)) {
      const e = email(m[1] as string, m[2] as string);
      if (e !== undefined && e !== m[0]) out.push(e);
    }
  }
  if (dotWord) {
    for (const m of clean.matchAll(DOMAIN_OBF_RE)) {
      const d = asciiDomain(splitDomain(m[0]));
      if (d !== '' && d.includes('.') && d !== m[0]) out.push(d);
    }
  }
  if (clean.includes('://') || clean.includes('[:]//')) {
    for (const m of clean.matchAll(URL_RE)) {
      const u = canonicalUrl(m[0].replace(/[.,;:!?)]+$/, ''));
      if (u !== undefined && u !== m[0]) out.push(u);
    }
  }
  if (!isAscii(clean)) {
    for (const m of clean.matchAll(NON_ASCII_DOMAIN_RE)) {
      const d = asciiDomain(m[0]);
      if (d !== '' && d !== m[0]) out.push(d);
    }
  }
  if (/\d,\d/.test(clean)) {
    for (const m of clean.matchAll(EU_AMOUNT_RE)) {
      const n = Number(`${(m[1] as string).replace(/[.\s\u202f]/g, '')}.${m[2] as string}`);
      if (Number.isFinite(n)) out.push(String(n));
    }
  }
  if (/\d\s?(?:k|thousand|m|million|mio)\b/.test(clean))
    for (const m of clean.matchAll(SUFFIX_RE)) {
      const n = parseAmount(m[0]);
      if (n !== undefined) out.push(String(n));
    }
  if (
    /hundred|thousand|million|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|teen\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b/.test(
      clean,
    )
  )
    for (const m of clean.matchAll(WORDS_RE)) {
      const n = wordsToNumber(m[0]);
      if (n !== undefined && /\s|-/.test(m[0])) out.push(String(n));
    }
  if (/\d{4}/.test(clean)) datesIn(clean, out);
  return out;
}

/** Separator runs between alphanumerics removed (`GB33 BUKB 2020` → `gb33bukb2020`): the view number kinds are searched in. */
export function compactText(clean: string): string {
  return clean
    .replace(/([\p{L}\p{N}])[\s\-./()\u2010-\u2015]{1,3}(?=[\p{L}\p{N}+])/gu, '$1')
    .replace(/\+(?=\d)/g, ' ');
}

/** True when `needle` (compact, number kind) occurs in compact `hay` without a digit glued to a digit edge. */
export function compactMentions(hay: string, needle: string): boolean {
  const n = needle.length;
  if (n === 0) return false;
  const digitL = isDigit(needle.charCodeAt(0));
  const digitR = isDigit(needle.charCodeAt(n - 1));
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + 1)) {
    if (digitL && i > 0 && isDigit(hay.charCodeAt(i - 1))) continue;
    const j = i + n;
    if (digitR && j < hay.length && isDigit(hay.charCodeAt(j))) continue;
    return true;
  }
  return false;
}
const isDigit = (c: number): boolean => c >= 48 && c <= 57;

const B64_RE = /[A-Za-z0-9+/_-]{12,}={0,2}/g;
const HEX_RE = /\b(?:[0-9a-fA-F]{2}){6,}\b/g;

/** Text an adversary hid in encodings: decoded base64 and hex tokens, and the rot13 of the text. */
export function decodedText(raw: string, clean: string): string {
  const parts: string[] = [];
  for (const m of raw.matchAll(B64_RE)) {
    const d = b64(m[0]);
    if (d !== undefined) parts.push(d);
  }
  for (const m of raw.matchAll(HEX_RE)) {
    const d = hex(m[0]);
    if (d !== undefined) parts.push(d);
  }
  parts.push(rot13(clean));
  return parts.map(cleanText).join(' ¦ ');
}

function printable(s: string): boolean {
  if (s.length === 0) return false;
  let bad = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 32 && c !== 10 && c !== 9 && c !== 13) || c === 0xfffd) bad++;
  }
  return bad / s.length < 0.05;
}
const UTF8 = new TextDecoder('utf-8', { fatal: false });
function b64(tok: string): string | undefined {
  try {
    const t = tok.replace(/-/g, '+').replace(/_/g, '/');
    const bin = atob(t + '='.repeat((4 - (t.length % 4)) % 4));
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
    const s = UTF8.decode(bytes);
    return printable(s) ? s : undefined;
  } catch {
    return undefined;
  }
}
function hex(tok: string): string | undefined {
  const bytes = new Uint8Array(tok.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(tok.slice(2 * i, 2 * i + 2), 16);
  const s = UTF8.decode(bytes);
  return printable(s) ? s : undefined;
}
function rot13(s: string): string {
  return s.replace(/[a-z]/g, (c) => String.fromCharCode(((c.charCodeAt(0) - 97 + 13) % 26) + 97));
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

const EMAIL_VALUE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//;
const DOMAIN_VALUE = /^(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?\.)+\p{L}[\p{L}\p{N}-]*\.?$/u;
const IBAN_VALUE = /^[a-z]{2}\d{2}[a-z0-9]{10,30}$/;
const SEPARATED_DIGITS = /^\+?[\d\s\-./()]{7,}$/;
const PATH_VALUE = /^(?:~?\/|[a-z]:\\)/;

/**
 * The kind and canonical search form of a string value (clean it first with {@link cleanText}).
 * Numbers in tool calls (`typeof v === 'number'`) are amounts and never reach here. Hot path:
 * one scan of the characters decides which parsers can apply at all.
 */
export function canonString(clean: string): CanonValue {
  const n = clean.length;
  if (n === 0 || n > 256) return { kind: 'text', form: clean, view: 'text' };
  let at = false;
  let digit = false;
  let dot = false;
  let space = false;
  let odd = false; // brackets, %, non-ASCII, ':' — the rarer parsers
  for (let i = 0; i < n; i++) {
    const c = clean.charCodeAt(i);
    if (c >= 48 && c <= 57) digit = true;
    else if (c === 64) at = true;
    else if (c === 46) dot = true;
    else if (c === 32) space = true;
    else if (c > 127 || c === 37 || c === 58 || c === 40 || c === 91 || c === 123 || c === 60)
      odd = true;
  }
  const c0 = clean.charCodeAt(0);
  if (at && EMAIL_VALUE.test(clean)) {
    const i = clean.lastIndexOf('@');
    const e = odd ? email(clean.slice(0, i), clean.slice(i + 1)) : plainEmail(clean, i);
    if (e !== undefined)
      return e === clean
        ? { kind: 'email', form: e, view: 'text' }
        : { kind: 'email', form: e, view: 'text', unicode: clean };
  }
  if ((space || odd) && HAS_AT_WORD.test(` ${clean} `)) {
    const ex = extras(clean);
    if (ex.length === 1 && (ex[0] as string).includes('@'))
      return { kind: 'email', form: ex[0] as string, view: 'text' };
  }
  if (odd || clean.startsWith('www.') || clean.startsWith('hxxp')) {
    if (SCHEME.test(clean) || clean.startsWith('www.') || clean.startsWith('hxxp')) {
      const u = canonicalUrl(clean);
      if (u !== undefined)
        return isAscii(clean)
          ? { kind: 'url', form: u, view: 'text' }
          : { kind: 'url', form: u, view: 'text', unicode: clean };
    }
  }
  if (c0 === 47 || c0 === 126 || (odd && PATH_VALUE.test(clean))) {
    if (PATH_VALUE.test(clean)) return { kind: 'path', form: clean, view: 'text' };
  }
  if (dot && !space && !(c0 >= 48 && c0 <= 57) && DOMAIN_VALUE.test(clean)) {
    const d = asciiDomain(clean);
    if (d !== '')
      return d === clean
        ? { kind: 'domain', form: d, view: 'text' }
        : { kind: 'domain', form: d, view: 'text', unicode: clean };
  }
  if (digit) {
    if ((c0 >= 48 && c0 <= 57) || c0 === 43 || (c0 >= 97 && c0 <= 122)) {
      const compact =
        space || dot || odd || clean.includes('-') || clean.includes('/')
          ? clean.replace(/[\s\-./()]/g, '')
          : clean;
      if (IBAN_VALUE.test(compact)) return { kind: 'iban', form: compact, view: 'compact' };
      const digits = compact.charCodeAt(0) === 43 ? compact.slice(1) : compact;
      if (ALL_DIGITS.test(digits)) {
        if (
          (c0 === 43 || /[\s\-()]/.test(clean)) &&
          digits.length >= 7 &&
          digits.length <= 15 &&
          SEPARATED_DIGITS.test(clean)
        )
          return { kind: 'phone', form: digits, view: 'compact' };
        if (digits.length >= 6 && !dot && !clean.includes(','))
          return { kind: 'account', form: digits, view: 'compact' };
      }
    }
    const amount = amountOf(clean);
    if (amount !== undefined && Number.isFinite(amount))
      return { kind: 'amount', form: String(amount), view: 'number' };
    if (n <= 24 && /\d{4}/.test(clean)) {
      const d = parseDate(clean);
      if (d !== undefined) return { kind: 'date', form: d, view: 'text' };
    }
  } else if (space && n <= 80 && WORDS_ONLY.test(clean) && NUMBER_WORD_RE.test(clean)) {
    const w = wordsToNumber(clean.replace(/\s*(?:euros?|dollars?|pounds?|eur|usd|gbp)$/, ''));
    if (w !== undefined) return { kind: 'amount', form: String(w), view: 'number' };
  }
  return { kind: 'text', form: clean, view: 'text' };
}
const ALL_DIGITS = /^\d+$/;
const WORDS_ONLY = /^[a-z\s-]+$/;
const NUMBER_WORD_RE = new RegExp(`\\b${NUMBER_WORD}\\b`);

/** A plain ASCII address: the domain's trailing dot dropped, nothing else to do. */
function plainEmail(clean: string, at: number): string | undefined {
  const d = clean.endsWith('.') ? clean.slice(at + 1, -1) : clean.slice(at + 1);
  if (!d.includes('.')) return undefined;
  return d.length === n1(clean, at) ? clean : `${clean.slice(0, at)}@${d}`;
}
const n1 = (clean: string, at: number): number => clean.length - at - 1;

/**
 * The pieces of a canonical value that, found in an untrusted segment, mean the value was
 * assembled from it (splitting a value across entries; containment): an e-mail's domain, a
 * URL's host, a long number's prefix and suffix (a third of it, at least six characters).
 */
export function pieces(v: CanonValue): {
  readonly text: readonly string[];
  readonly compact: readonly string[];
} {
  switch (v.kind) {
    case 'email': {
      const f = v.unicode ?? v.form;
      const d = f.slice(f.lastIndexOf('@') + 1);
      return { text: d.length >= 4 ? [d] : [], compact: [] };
    }
    case 'url': {
      const h =
        v.unicode === undefined
          ? urlHost(v.form)
          : (/^[a-z]+:\/\/([^/:?#]+)/.exec(v.unicode)?.[1] ?? '');
      return { text: h.length >= 4 ? [h.replace(/^www\./, '')] : [], compact: [] };
    }
    case 'iban':
    case 'account':
    case 'phone': {
      const n = v.form.length;
      if (n < 9) return { text: [], compact: [] };
      const k = Math.max(6, Math.ceil(n / 3));
      return { text: [], compact: [v.form.slice(0, k), v.form.slice(n - k)] };
    }
    default:
      return { text: [], compact: [] };
  }
}
