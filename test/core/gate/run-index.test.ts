/**
 * The gate's exact-value index (issue 18 speed, ADR 0066) is a drop-in for the scans it
 * replaced: differential property tests against the reference scans — `Hay.exact` against
 * `mentions` / `compactMentions` over the same view, `mentionedSegments` against
 * `segmentMentioned` per segment, and the hand-written edge-punctuation trim against its regex.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CanonValue, compactMentions } from '../../../src/core/gate/canon.js';
import {
  Hay,
  RunIndex,
  type Needles,
  type ParsedContext,
  canonValue,
  mentionedSegments,
  mentions,
  probeOf,
  segmentMentioned,
  trimEdgePunct,
} from '../../../src/core/gate/match.js';

// Word characters (ASCII, accented, Cyrillic, CJK, a lone surrogate half), digits, separators,
// punctuation the views and the boundary rule care about.
const CHARS = [
  ...'abcdeé аб中',
  ...'0123456789',
  ...' .-/@,:()[]\'"!?',
  '\ud83d',
  '\ude00',
  '\u200b',
];
const text = (max: number) =>
  fc.array(fc.constantFrom(...CHARS), { maxLength: max }).map((a) => a.join(''));

function reference(hay: Hay, v: CanonValue): boolean {
  if (v.view === 'text') return mentions(hay.norm, v.form);
  if (v.view === 'compact') return compactMentions(hay.compact, v.form);
  return mentions(hay.num, v.form);
}

const views = ['text', 'compact', 'number'] as const;

describe('exact-value index (ADR 0066)', () => {
  it('Hay.exact equals the scan of the same view, for every view', () => {
    fc.assert(
      fc.property(
        text(60),
        fc.nat(60),
        fc.nat(12),
        fc.constantFrom(...views),
        (raw, at, len, view) => {
          const hay = new Hay(raw);
          const src = view === 'text' ? hay.norm : view === 'compact' ? hay.compact : hay.num;
          // A needle cut from the view itself (so hits happen), or arbitrary text.
          const form =
            at % 3 === 0 ? raw.slice(0, len) : src.slice(at % (src.length + 1), at + len);
          const v: CanonValue = { kind: 'text', form, view };
          expect(hay.exact(v)).toBe(reference(hay, v));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('mentionedSegments marks exactly the segments segmentMentioned finds', () => {
    fc.assert(
      fc.property(
        fc.array(text(50), { minLength: 1, maxLength: 6 }),
        fc.array(fc.tuple(fc.nat(5), fc.nat(50), fc.nat(10), fc.constantFrom(...views)), {
          maxLength: 6,
        }),
        (contents, picks) => {
          const hays = contents.map((c) => new Hay(c));
          const index = new RunIndex(hays);
          const pc = { segments: [], hays, byId: new Map(), index } as unknown as ParsedContext;
          const nd: Needles = { text: [], numbers: [], compact: [], governed: [] };
          for (const [s, at, len, view] of picks) {
            const h = hays[s % hays.length] as Hay;
            const src = view === 'text' ? h.norm : view === 'compact' ? h.compact : h.num;
            const needle = src.slice(at % (src.length + 1), at + len);
            (view === 'text' ? nd.text : view === 'compact' ? nd.compact : nd.numbers).push(needle);
          }
          const hit = mentionedSegments(pc, nd);
          hays.forEach((_, i) => expect(hit[i] === 1).toBe(segmentMentioned(pc, i, nd)));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('the index answers for real canonical values (IBAN in a spaced form, amounts, e-mail)', () => {
    const hay = new Hay(
      'Pay 1.234,50 EUR to IBAN DE89 3704 0044 0532 0130 00; questions to billing at acme dot example.',
    );
    for (const [value, want] of [
      ['DE89370400440532013000', true],
      ['DE8937040044053201300', false],
      ['370400440532013000', false],
      ['billing@acme.example', true],
      ['acme.example', true],
      ['cme.example', false],
    ] as const)
      expect(hay.exact(canonValue(value) as CanonValue), value).toBe(want);
    expect(hay.exact(canonValue(1234.5) as CanonValue)).toBe(true);
    expect(hay.exact(canonValue(99) as CanonValue)).toBe(false);
  });

  it('probeOf is the longest run, the needle itself when it is one run', () => {
    expect(probeOf('gb33bukb20201555555555', true)).toBe('20201555555555');
    expect(probeOf('acme utilities bill')).toBe('utilities');
    expect(probeOf('98.5')).toBe('98');
    expect(probeOf('word')).toBe('word');
    expect(probeOf('...')).toBeUndefined();
    expect(probeOf('abc', true)).toBeUndefined();
  });

  it('trimEdgePunct equals the regex it replaced', () => {
    const re = /^[("'<[{`]+|[)"'>\]}`,;:!?.]+$/g;
    fc.assert(
      fc.property(
        fc
          .array(fc.constantFrom(...'("\'<[{`)>]},;:!?.ab1 '), { maxLength: 12 })
          .map((a) => a.join('')),
        (t) => {
          expect(trimEdgePunct(t)).toBe(t.replace(re, ''));
        },
      ),
      { numRuns: 5000 },
    );
  });
});

describe('canonicalisers stay linear in the segment length', () => {
  it('a long word before a spelled-out "at" and a non-ASCII letter parses in linear time', () => {
    // Unbounded local-part / label runs made every start position scan to the end of the
    // word: ~3 s of one core at 4,000 characters, ~45 s at 16,000 (quadratic). Bounded, both
    // take a fraction of a second; the limit leaves room for a loaded machine.
    const raw = `${'x'.repeat(16_000)} at й dot example`;
    const t0 = performance.now();
    const hay = new Hay(raw);
    expect(hay.near.length).toBeGreaterThan(16_000);
    expect(performance.now() - t0).toBeLessThan(8_000);
  });
});
