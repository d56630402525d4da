/**
 * The gate's hand-written whitespace scan (perf, issue 4) is a drop-in for the regex it
 * replaced: differential property test of `normText` against the reference implementation.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normText, valueKey } from '../../../src/core/gate/match.js';

const reference = (s: string): string => {
  const t = s.toLowerCase().trim();
  return /\s\s|[^\S ]/.test(t) ? t.replace(/\s+/g, ' ') : t;
};

const SPACES = [
  ' ',
  '  ',
  '\t',
  '\n',
  '\v',
  '\f',
  '\r',
  '\u00a0',
  '\u1680',
  '\u2000',
  '\u200a',
  '\u2028',
  '\u2029',
  '\u202f',
  '\u205f',
  '\u3000',
  '\ufeff',
  '\u200b',
  '\u180e',
];
const piece = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom(...SPACES),
  fc.constantFrom('IBAN', 'Ä', '1,000.50', 'x'),
);

describe('normText', () => {
  it('equals the regex reference on strings rich in every kind of whitespace', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
        const s = parts.join('');
        expect(normText(s)).toBe(reference(s));
      }),
      { numRuns: 3000 },
    );
    for (const sp of SPACES) expect(normText(`a${sp}b`)).toBe(reference(`a${sp}b`));
  });

  it('valueKey: numeric strings equal numbers; the prefilter keeps every numeric form', () => {
    for (const [s, n] of [
      ['98.50', 98.5],
      ['+5', 5],
      ['-2', -2],
      ['.5', 0.5],
      ['1e3', 1000],
      [' 7 ', 7],
    ] as const)
      expect(valueKey(s)).toBe(valueKey(n));
    // IBAN / account / phone numbers key on their compact form, so separators do not matter.
    expect(valueKey('GB33BUKB20201555555555')).toBe('c:gb33bukb20201555555555');
    expect(valueKey('GB33 BUKB 2020 1555 5555 55')).toBe(valueKey('GB33BUKB20201555555555'));
    expect(valueKey('true')).not.toBe(valueKey(true));
  });
});
