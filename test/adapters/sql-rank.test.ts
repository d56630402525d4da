/**
 * The in-process ranking's score with kept norms (`cosineNormed`, used when ranking without
 * pgvector) is `cosine` — the same double, not merely close — so a search that keeps its
 * candidates' norms ranks exactly as one that computes them per query.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cosine, cosineNormed, norm2 } from '../../src/adapters/sql/rank.js';

const vec = (n: number) =>
  fc
    .array(fc.float({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }), {
      minLength: n,
      maxLength: n,
    })
    .map((xs) => Float32Array.from(xs));

describe('cosineNormed', () => {
  it('is cosine bit for bit, zero vectors and unequal lengths included', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 48 }).chain((n) => fc.tuple(vec(n), vec(n), vec(n + 1))),
        ([a, b, c]) => {
          expect(Object.is(cosineNormed(a, norm2(a), b, norm2(b)), cosine(a, b))).toBe(true);
          expect(Object.is(cosineNormed(a, norm2(a), c, norm2(c)), cosine(a, c))).toBe(true);
          const z = new Float32Array(a.length);
          expect(cosineNormed(a, norm2(a), z, norm2(z))).toBe(cosine(a, z));
        },
      ),
      { numRuns: 500 },
    );
  });
});
