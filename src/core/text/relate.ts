/**
 * @module core/text/relate
 * The deterministic consolidation rule (issue 20, ADR 0051): how a new fact relates to an
 * existing one with a similar meaning — `same` (the same words), `update` (the same subject
 * with a changed value: a negation added or removed, a number / time / date changed, or the
 * value of a single-valued relation replaced), or `distinct` (anything else: both are kept).
 *
 * The rule compares word sequences (lower-cased runs of letters and digits, no stop-word
 * removal): it takes the longest common prefix P and suffix S and looks at the one changed
 * span in between (old R → new A). It errs towards `distinct`: a wrong `update` would hide a
 * true memory behind a new version, a wrong `distinct` only keeps both.
 * - negation: the two differ only by negation words (`not`, `no`, `never`, `n't`, …) → update;
 * - number / time / date: R and A both hold a number, time, weekday, month or relative day,
 *   the span follows a predicate word ("is", "at", "on", "costs", "has", …: a value, where
 *   after a noun it names a thing — "tea number 3", "invoice 1001") and is not itself the
 *   subject: it ends the sentence or is followed by a unit or a preposition, not by a verb
 *   ("Invoice 1001 is due" vs "Invoice 1002 is due" are two invoices) → update;
 * - single-valued relation: P ends with a cue of a relation that holds one value at a time
 *   ("lives in", "moved to", "works at", "is called", "… name is", "favourite … is", …) and the
 *   span ends the sentence or is followed by a preposition → update ("likes apples" vs "likes
 *   pears" stays distinct: liking is not single-valued);
 * - spans longer than four words on either side are never an update.
 */

const WORD = /[\p{L}\p{N}]+/gu;

/** Words for the comparison (no stop words removed: "not" matters here). */
export function words(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []) as string[];
}

/** Negation words on their own. */
const NEGATION: ReadonlySet<string> = new Set(['not', 'no', 'never', 'nor', 'neither', 'cannot']);

/** Negated auxiliaries ("isn't" → isn, t) and their positive form. */
const POSITIVE: ReadonlyMap<string, string> = new Map([
  ['isn', 'is'],
  ['aren', 'are'],
  ['wasn', 'was'],
  ['weren', 'were'],
  ['don', 'do'],
  ['doesn', 'does'],
  ['didn', 'did'],
  ['hasn', 'has'],
  ['haven', 'have'],
  ['hadn', 'had'],
  ['couldn', 'could'],
  ['shouldn', 'should'],
  ['wouldn', 'would'],
  ['mustn', 'must'],
  ['won', 'will'],
  ['cannot', 'can'],
]);

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
];
const RELATIVE_DAYS = [
  'today',
  'tomorrow',
  'yesterday',
  'tonight',
  'noon',
  'midnight',
  'morning',
  'afternoon',
  'evening',
];
const TEMPORAL: ReadonlySet<string> = new Set([...WEEKDAYS, ...MONTHS, ...RELATIVE_DAYS]);

/** Words that follow a value without making it a subject. */
const UNITS: ReadonlySet<string> = new Set([
  'am',
  'pm',
  'h',
  'hours',
  'hour',
  'minutes',
  'minute',
  'min',
  'days',
  'day',
  'weeks',
  'week',
  'months',
  'month',
  'years',
  'year',
  'old',
  'kg',
  'g',
  'lbs',
  'lb',
  'km',
  'miles',
  'm',
  'cm',
  'percent',
  'dollars',
  'euros',
  'eur',
  'usd',
  'o',
  'clock',
  'sharp',
]);

const PREPOSITIONS: ReadonlySet<string> = new Set([
  'at',
  'on',
  'in',
  'by',
  'for',
  'from',
  'to',
  'until',
  'till',
  'with',
  'before',
  'after',
  'during',
  'instead',
  'now',
  'and',
]);

/**
 * Cues of single-valued relations: the words right before the changed span (the last
 * element may be `*`, any one word, for "favourite <thing> is").
 */
const SINGLE_VALUED: readonly (readonly string[])[] = [
  ['lives', 'in'],
  ['live', 'in'],
  ['living', 'in'],
  ['lives', 'at'],
  ['moved', 'to'],
  ['relocated', 'to'],
  ['works', 'at'],
  ['works', 'for'],
  ['work', 'at'],
  ['work', 'for'],
  ['working', 'at'],
  ['employed', 'at'],
  ['employed', 'by'],
  ['located', 'in'],
  ['based', 'in'],
  ['born', 'in'],
  ['born', 'on'],
  ['is', 'called'],
  ['is', 'named'],
  ['name', 'is'],
  ['name', 'was'],
  ['birthday', 'is'],
  ['address', 'is'],
  ['email', 'is'],
  ['number', 'is'],
  ['password', 'is'],
  ['code', 'is'],
  ['status', 'is'],
  ['deadline', 'is'],
  ['price', 'is'],
  ['is', 'now'],
  ['are', 'now'],
  ['favourite', '*', 'is'],
  ['favorite', '*', 'is'],
  ['favourite', 'is'],
  ['favorite', 'is'],
  ['married', 'to'],
  ['engaged', 'to'],
  ['dating'],
  ['costs'],
  ['scheduled', 'for'],
  ['rescheduled', 'to'],
  ['is', 'due'],
  ['due', 'on'],
  ['due', 'by'],
];

/** Words after which a number or date is a value, not a name. */
const NUMERIC_CUES: ReadonlySet<string> = new Set([
  'is',
  'are',
  'was',
  'were',
  'be',
  'been',
  'now',
  'at',
  'on',
  'by',
  'to',
  'until',
  'till',
  'from',
  'in',
  'for',
  'since',
  'about',
  'around',
  'costs',
  'cost',
  'has',
  'have',
  'had',
  'weighs',
  'earns',
  'turns',
  'turned',
  'takes',
  'lasts',
]);

function isValueWord(w: string): boolean {
  // An ASCII digit (what `\d` matches), without a RegExp object per call.
  for (let i = 0; i < w.length; i++) {
    const c = w.charCodeAt(i);
    if (c >= 48 && c <= 57) return true;
  }
  return TEMPORAL.has(w);
}

function endsWithCue(prefix: readonly string[]): boolean {
  return SINGLE_VALUED.some((cue) => {
    if (cue.length > prefix.length) return false;
    const tail = prefix.slice(prefix.length - cue.length);
    return cue.every((c, i) => c === '*' || c === tail[i]);
  });
}

/** The auxiliaries a negation brings ("does not like"), dropped by {@link positive}. */
const AUXILIARIES: ReadonlySet<string> = new Set(['does', 'do', 'did']);

/** Does `ws` hold a word {@link positive} counts as a negation? */
const negates = (ws: readonly string[]): boolean =>
  ws.some((w) => w === 't' || NEGATION.has(w) || POSITIVE.has(w));

/** Strip negation words; negated auxiliaries become positive; trailing `s` of verbs folded. */
function positive(ws: readonly string[]): { ws: string[]; negations: number } {
  let negations = 0;
  const out: string[] = [];
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i] as string;
    const prev = i > 0 ? ws[i - 1] : undefined;
    if (w === 't' && prev !== undefined && (prev === 'can' || prev === 'ain')) {
      negations++; // "can't": the t carries the negation
      continue;
    }
    if (w === 't' && prev !== undefined && POSITIVE.has(prev)) continue; // "isn't"
    const p = POSITIVE.get(w);
    if (p !== undefined) {
      negations++;
      out.push(p);
      continue;
    }
    if (NEGATION.has(w)) {
      negations++;
      continue;
    }
    // "does not like" vs "likes": drop the auxiliaries a negation brings — before the `s` fold,
    // which would turn "does" into "doe" and keep it.
    if (AUXILIARIES.has(w)) continue;
    out.push(w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w);
  }
  return { ws: out.filter((w) => !AUXILIARIES.has(w)), negations };
}

export type Relation = 'same' | 'update' | 'distinct';

/** How `next` relates to `prev` (see the module comment). */
export function relate(prev: string, next: string): Relation {
  return relateWords(words(prev), words(next));
}

/** {@link relate} of texts already split by {@link words} (a caller comparing one text with many). */
export function relateWords(a: readonly string[], b: readonly string[]): Relation {
  if (a.length === 0 || b.length === 0) return 'distinct';
  if (a.length === b.length && a.every((w, i) => w === b[i])) return 'same';
  // Negation: equal once negations are stripped, an odd difference in their number (so at
  // least one side has a negation word: without one, neither is stripped).
  if (negates(a) || negates(b)) {
    const pa = positive(a);
    const pb = positive(b);
    if (
      pa.ws.length === pb.ws.length &&
      pa.ws.every((w, i) => w === pb.ws[i]) &&
      (pa.negations + pb.negations) % 2 === 1
    )
      return 'update';
  }
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  if (p === 0) return 'distinct'; // no shared subject
  let s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  const nRemoved = a.length - s - p;
  const nAdded = b.length - s - p;
  if (nRemoved > 4 || nAdded > 4 || nRemoved === 0 || nAdded === 0) return 'distinct';
  const removed = a.slice(p, a.length - s);
  const added = b.slice(p, b.length - s);
  const prefix = a.slice(0, p);
  const next1 = s === 0 ? undefined : a[a.length - s];
  // A span followed by a verb is (part of) the subject: "Invoice 1001 is due".
  const tailOk = next1 === undefined || PREPOSITIONS.has(next1) || UNITS.has(next1);
  if (!tailOk) return 'distinct';
  // A number is a value only after a predicate ("is 31", "at 3pm", "on Monday", "costs 5"):
  // after a noun it names the thing ("tea number 3", "invoice 1001"), a distinct fact.
  const last = prefix[prefix.length - 1] as string;
  if (removed.some(isValueWord) && added.some(isValueWord) && NUMERIC_CUES.has(last))
    return 'update';
  if (endsWithCue(prefix)) return 'update';
  return 'distinct';
}

// ---- relation keys (ADR 0084) ----------------------------------------------------------------

/**
 * A 32-bit hash of one word (FNV-1a over its UTF-16 units): the keys below are built from these.
 * Keys only ever rule a pair OUT; two different sequences sharing a key is a false positive
 * (the caller then compares the texts), never a missed relation.
 */
function wordHash(w: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 0x01000193);
  return h;
}

/** Fold `x` into the running sequence hash `h` (order-sensitive; the length is folded too). */
const fold = (h: number, x: number): number => Math.imul(h ^ x, 0x5bd1e995) ^ (h >>> 13);

const SEED = 0x2c1b3c6d;
const TAG_WORDS = 0x1000193;
const TAG_NEG_ANY = 0x27d4eb2f;
const TAG_NEG_ONLY = 0x165667b1;
const TAG_SPAN = 0x3c6ef372;

const seqHash = (ws: readonly string[]): number => {
  let h = SEED;
  for (const w of ws) h = fold(h, wordHash(w));
  return fold(h, ws.length);
};

/**
 * `seqHash(positive(ws).ws)` without building the arrays (a key of every write, ADR 0088): the
 * same words in the same order — a negated auxiliary's positive form, negation words and the
 * `t` of "isn't" / "can't" dropped, the auxiliaries dropped, a verb's trailing `s` folded.
 */
function positiveHash(ws: readonly string[]): number {
  let h = SEED;
  let n = 0;
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i] as string;
    if (w === 't' && i > 0) {
      const prev = ws[i - 1] as string;
      if (prev === 'can' || prev === 'ain' || POSITIVE.has(prev)) continue;
    }
    const p = POSITIVE.get(w);
    let out: string;
    if (p !== undefined) out = p;
    else if (NEGATION.has(w) || AUXILIARIES.has(w)) continue;
    else out = w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w;
    if (AUXILIARIES.has(out)) continue; // `positive`'s final filter
    h = fold(h, wordHash(out));
    n++;
  }
  return fold(h, n);
}

/** The single-valued cues by their last word (never `*`). */
const CUES_BY_LAST: ReadonlyMap<string, readonly (readonly string[])[]> = (() => {
  const m = new Map<string, (readonly string[])[]>();
  for (const cue of SINGLE_VALUED) {
    const last = cue[cue.length - 1] as string;
    m.set(last, [...(m.get(last) ?? []), cue]);
  }
  return m;
})();

/** {@link endsWithCue} of `ws[0..end)`, without slicing. */
function cueEndsAt(ws: readonly string[], end: number): boolean {
  const cues = CUES_BY_LAST.get(ws[end - 1] as string);
  if (cues === undefined) return false;
  for (const cue of cues) {
    if (cue.length > end) continue;
    const from = end - cue.length;
    let ok = true;
    for (let i = 0; i < cue.length - 1 && ok; i++) ok = cue[i] === '*' || cue[i] === ws[from + i];
    if (ok) return true;
  }
  return false;
}

/**
 * The keys of one side of the prefix/suffix rule: for every way `ws` could be the side of an
 * `update` found by it — a common prefix `ws[0..p)` (p ≥ 1) that qualifies (ends with a
 * single-valued cue, or with a numeric cue while this side's changed span `ws[p..j)` holds a
 * value word), a changed span of 1–4 words, and a common suffix `ws[j..)` that is empty or
 * starts with a preposition or unit — one key of the prefix and the suffix. Both texts of a
 * pair `relateWords` calls an update by this rule hold the key of its (prefix, suffix).
 */
let preScratch = new Int32Array(64);
let hwScratch = new Int32Array(64);
function spanKeys(ws: readonly string[], out: number[]): void {
  const n = ws.length;
  if (n < 2) return; // a prefix of ≥ 1 word and a span of ≥ 1 word
  // Scratch reused across calls (the hashes are 32-bit integers: `fold` ends in `^`).
  if (preScratch.length < n + 1) {
    preScratch = new Int32Array(2 * (n + 1));
    hwScratch = new Int32Array(2 * (n + 1));
  }
  const pre = preScratch;
  const hw = hwScratch;
  pre[0] = SEED;
  for (let i = 0; i < n; i++) {
    hw[i] = wordHash(ws[i] as string);
    pre[i + 1] = fold(pre[i] as number, hw[i] as number);
  }
  // Suffix hashes from the end (the suffix `ws[j..)`, by j).
  let suf = SEED;
  for (let j = n; j >= 2; j--) {
    if (j < n) suf = fold(suf, hw[j] as number);
    const tail = j === n || PREPOSITIONS.has(ws[j] as string) || UNITS.has(ws[j] as string);
    if (!tail) continue;
    let value = false; // a value word in ws[p..j)
    for (let p = j - 1; p >= Math.max(1, j - 4); p--) {
      if (isValueWord(ws[p] as string)) value = true;
      if ((value && NUMERIC_CUES.has(ws[p - 1] as string)) || cueEndsAt(ws, p))
        out.push(fold(fold(fold(TAG_SPAN, pre[p] as number), suf), n - j));
    }
  }
}

/**
 * Keys of a stored text (its words), for an index of texts a new one may relate to: a new text
 * for which `relateWords(stored, new)` is `same` or `update`, or whose words equal the stored
 * one's, shares at least one of these keys with {@link relationProbes} of the new text.
 */
export function relationKeys(ws: readonly string[]): number[] {
  const out: number[] = [fold(TAG_WORDS, seqHash(ws))];
  if (ws.length === 0) return out;
  const pos = positiveHash(ws);
  out.push(fold(TAG_NEG_ANY, pos));
  if (negates(ws)) out.push(fold(TAG_NEG_ONLY, pos));
  spanKeys(ws, out);
  return out;
}

/**
 * {@link relationKeys} and {@link relationProbes} of one text at once (the words hashed, the
 * negations stripped and the spans enumerated once): a writer probes with a text that is about
 * to be stored, so it needs both.
 */
export function relationKeysAndProbes(
  ws: readonly string[],
  sameOnly = false,
): { keys: number[]; probes: number[] } {
  const w = fold(TAG_WORDS, seqHash(ws));
  if (ws.length === 0) return { keys: [w], probes: [w] };
  const spans: number[] = [];
  spanKeys(ws, spans);
  const pos = positiveHash(ws);
  const neg = negates(ws);
  const keys = [w, fold(TAG_NEG_ANY, pos)];
  if (neg) keys.push(fold(TAG_NEG_ONLY, pos));
  for (const k of spans) keys.push(k);
  if (sameOnly) return { keys, probes: [w] };
  const probes = [w, fold(neg ? TAG_NEG_ANY : TAG_NEG_ONLY, pos)];
  for (const k of spans) probes.push(k);
  return { keys, probes };
}

/**
 * Keys to look up for a new text (its words): if no stored text holds one of them (its
 * {@link relationKeys}), `relateWords(stored, new)` is `distinct` and the words differ — for
 * every stored text. `sameOnly`: only the words-equal key (a caller that needs nothing else).
 */
export function relationProbes(ws: readonly string[], sameOnly = false): number[] {
  const out: number[] = [fold(TAG_WORDS, seqHash(ws))];
  if (sameOnly || ws.length === 0) return out;
  // The negation rule needs a negation word on either side: a new text without one can only
  // match a stored text with one.
  out.push(fold(negates(ws) ? TAG_NEG_ANY : TAG_NEG_ONLY, positiveHash(ws)));
  spanKeys(ws, out);
  return out;
}
