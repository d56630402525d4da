/**
 * Relation keys (ADR 0084): a stored text's `relationKeys` and a new text's `relationProbes`
 * share a key whenever `relateWords(stored, new)` is not `distinct` or the two have the same
 * words — the read model rules a write's candidates out by them, so a missed relation would
 * change a consolidation decision. Property-tested over texts built from the words every rule
 * of `relate` looks at (negations, negated auxiliaries, numbers and dates, units, prepositions,
 * single-valued cues), with the new text mostly a small edit of the stored one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  relateWords,
  relationKeys,
  relationKeysAndProbes,
  relationProbes,
  words,
} from '../../../src/core/text/index.js';

const VOCAB = [
  // subjects and plain words
  'alice',
  'bob',
  'the',
  'meeting',
  'car',
  'tea',
  'paris',
  'berlin',
  'red',
  'blue',
  'apples',
  'invoice',
  'likes',
  'plays',
  'chess',
  'class',
  'my',
  'a',
  // negation
  'not',
  'no',
  'never',
  'nor',
  'cannot',
  'isn',
  'doesn',
  'don',
  't',
  'can',
  'ain',
  'won',
  'does',
  'do',
  'did',
  // predicates, cues and numeric cues
  'is',
  'are',
  'was',
  'has',
  'costs',
  'lives',
  'live',
  'works',
  'moved',
  'name',
  'favourite',
  'favorite',
  'called',
  'due',
  'now',
  'born',
  'married',
  'dating',
  'scheduled',
  'turns',
  // prepositions and units
  'at',
  'on',
  'in',
  'by',
  'for',
  'to',
  'until',
  'with',
  'and',
  'am',
  'pm',
  'kg',
  'years',
  'old',
  'o',
  'clock',
  // values
  '3',
  '10am',
  '11am',
  '31',
  '1001',
  'monday',
  'friday',
  'may',
  'tomorrow',
] as const;

const word = fc.constantFrom(...VOCAB);
const text = fc.array(word, { minLength: 0, maxLength: 12 });

/** A new text from a stored one: the same, a span replaced, a word inserted or dropped, or unrelated. */
const pair = text.chain((a) =>
  fc
    .oneof(
      fc.constant(a),
      fc
        .tuple(
          fc.nat(a.length),
          fc.integer({ min: 0, max: 5 }),
          fc.array(word, { minLength: 0, maxLength: 5 }),
        )
        .map(([at, drop, ins]) => [...a.slice(0, at), ...ins, ...a.slice(at + drop)]),
      fc
        .tuple(fc.nat(a.length), fc.constantFrom('not', 'no', 'never', 't', 'does', 'don'))
        .map(([at, w]) => [...a.slice(0, at), w, ...a.slice(at)]),
      text,
    )
    .map((b) => [a, b] as const),
);

const shares = (keys: readonly number[], probes: readonly number[]): boolean => {
  const s = new Set(keys);
  return probes.some((k) => s.has(k));
};
const same = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((w, i) => w === b[i]);

describe('relation keys', () => {
  it('a pair relate calls same or update, or with the same words, shares a key', () => {
    let related = 0;
    let ruledOut = 0;
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const rel = relateWords(a, b);
        const keys = relationKeys(a);
        if (rel !== 'distinct' || same(a, b)) {
          related++;
          expect(shares(keys, relationProbes(b))).toBe(true);
        } else if (!shares(keys, relationProbes(b))) ruledOut++;
        // Event kinds: only the same words matter.
        if (same(a, b)) expect(shares(keys, relationProbes(b, true))).toBe(true);
        // The writer's one-pass form gives the same keys and probes.
        for (const sameOnly of [false, true])
          expect(relationKeysAndProbes(b, sameOnly)).toEqual({
            keys: relationKeys(b),
            probes: relationProbes(b, sameOnly),
          });
      }),
      { numRuns: 30_000, seed: 84 },
    );
    // Not vacuous: many related pairs, and most distinct ones are ruled out by the keys.
    expect(related).toBeGreaterThan(3_000);
    expect(ruledOut).toBeGreaterThan(10_000);
  });

  it.each([
    ['Bob lives in Paris', 'Bob lives in Berlin'],
    ['The meeting is at 10am', 'The meeting is at 11am'],
    ['The meeting is at 10am on Monday', 'The meeting is at 11am on Monday'],
    ['cats live here', 'no cats live here'],
    ["Alice isn't allergic to peanuts", 'Alice is allergic to peanuts'],
    ['Alice likes tea', "Alice doesn't like tea"],
    ['My favourite colour is red', 'My favourite colour is blue'],
    ['Ben is 31 years old', 'Ben is 32 years old'],
    ['', ''],
    ['!!!', '???'],
  ])('%s → %s: a key is shared', (prev, next) => {
    const a = words(prev);
    const b = words(next);
    expect(relateWords(a, b) !== 'distinct' || same(a, b)).toBe(true);
    expect(shares(relationKeys(a), relationProbes(b))).toBe(true);
  });

  it.each([
    [
      'Ana prefers to discuss the budget on Monday mornings (run 1, write 5)',
      'Ana prefers to discuss the budget on Monday mornings (run 1, write 6)',
    ],
    ['Invoice 1001 is due', 'Invoice 1002 is due'],
    ['Bob likes apples', 'Bob likes pears'],
    ['Ana drinks tea', 'Ben plays chess'],
  ])('%s → %s: distinct, and no key is shared', (prev, next) => {
    const a = words(prev);
    const b = words(next);
    expect(relateWords(a, b)).toBe('distinct');
    expect(shares(relationKeys(a), relationProbes(b))).toBe(false);
  });
});
