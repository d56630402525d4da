import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { descending } from '../../src/core/compare.js';

const num = fc.oneof(
  fc.double(),
  fc.constantFrom(0, -0, Number.NaN, Infinity, -Infinity, Number.MIN_VALUE, -Number.MIN_VALUE),
);

describe('descending (comparator term)', () => {
  it('has the sign of b − a, and 0 where b − a is 0 or NaN', () => {
    fc.assert(
      fc.property(num, num, (a, b) => {
        const d = b - a;
        const want = d > 0 ? 1 : d < 0 ? -1 : 0;
        expect(descending(a, b)).toBe(want);
      }),
      { numRuns: 5000 },
    );
  });

  it('sorts as the difference comparator does, ties broken by a second key', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(num, fc.nat(50)), { maxLength: 80 }), (xs) => {
        const a = [...xs].sort((x, y) => y[0] - x[0] || x[1] - y[1]);
        const b = [...xs].sort((x, y) => descending(x[0], y[0]) || x[1] - y[1]);
        expect(b).toEqual(a);
      }),
      { numRuns: 500 },
    );
  });
});
