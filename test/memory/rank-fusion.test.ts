/**
 * The hybrid fusion (`rank`, ADR 0050) computes each side's span in one pass (issue 21: the
 * intermediate arrays were part of a 100k search's allocations). Its scores and order must be
 * those of the spread-based formulation it replaced, kept here as the reference.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rank } from '../../src/memory/read/search.js';
import type { StoredEntry } from '../../src/ports/storage.js';

type Hit = { entry: StoredEntry; vectorScore?: number; lexicalScore?: number };

function reference(hits: readonly Hit[]): { entry: StoredEntry; score: number }[] {
  const span = (xs: number[]): [number, number] =>
    xs.length === 0 ? [0, 0] : [Math.min(...xs), Math.max(...xs)];
  const [vMin, vMax] = span(hits.flatMap((h) => (h.vectorScore === undefined ? [] : [h.vectorScore])));
  const [lMin, lMax] = span(hits.map((h) => h.lexicalScore ?? 0));
  const norm = (x: number, lo: number, hi: number): number => (hi > lo ? (x - lo) / (hi - lo) : 0);
  return hits
    .map((h) => ({
      entry: h.entry,
      score:
        0.5 * (h.vectorScore === undefined ? 0 : norm(h.vectorScore, vMin, vMax)) +
        0.5 * norm(h.lexicalScore ?? 0, lMin, lMax),
    }))
    .sort((a, b) => b.score - a.score || a.entry.leafIndex - b.entry.leafIndex);
}

const score = fc.oneof(
  fc.double({ min: -1, max: 40, noNaN: true }),
  fc.constantFrom(0, -0, 0.5, 1, 12.25),
);

describe('hybrid fusion', () => {
  it('one-pass spans give the reference scores and order, bit for bit', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.option(score, { nil: undefined }), fc.option(score, { nil: undefined })), {
          maxLength: 70,
        }),
        (pairs) => {
          const hits: Hit[] = pairs.map(([v, l], i) => ({
            entry: { id: `m${i}`, leafIndex: i } as StoredEntry,
            ...(v === undefined ? {} : { vectorScore: v }),
            ...(l === undefined ? {} : { lexicalScore: l }),
          }));
          const got = rank(hits, 'hybrid');
          const want = reference(hits);
          expect(got.map((h) => h.entry.id)).toEqual(want.map((h) => h.entry.id));
          got.forEach((h, i) => expect(Object.is(h.score, want[i]?.score)).toBe(true));
        },
      ),
      { numRuns: 500 },
    );
  });
});
