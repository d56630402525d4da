import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  binomial,
  certificate,
  delta,
  pCleanExact,
  planPoolSize,
  rationalToNumber,
} from '../../../src/core/smsr/index.js';

/** Naive float reference: Theorem 2 straight from its statement. */
function naiveDelta(t: number, m: number, k: number, n: number): number {
  const C = (a: number, b: number): number => {
    if (b < 0 || b > a) return 0;
    let r = 1;
    for (let i = 1; i <= b; i++) r = (r * (a - b + i)) / i;
    return r;
  };
  const p = C(m - Math.min(t, m), k) / C(m, k);
  let s = 0;
  for (let i = Math.ceil(n / 2); i <= n; i++) s += C(n, i) * (1 - p) ** i * p ** (n - i);
  return s;
}

describe('Theorem 2 certificate', () => {
  it('matches the issue and the paper (Table I, §VII-J)', () => {
    const c = certificate(1, 20, 5, 5);
    expect(c.pClean).toBe(0.75); // C(19,5)/C(20,5) = 15/20
    expect(c.exact).toEqual({ num: 53n, den: 512n }); // 0.103515625
    expect(c.delta).toBe(0.103515625);
    expect(c.delta.toFixed(3)).toBe('0.104');
    expect(delta(1, 20, 5, 7).toFixed(3)).toBe('0.071');
    expect(delta(1, 20, 5, 11).toFixed(3)).toBe('0.034');
    expect(delta(2, 20, 5, 5).toFixed(3)).toBe('0.402');
    expect(delta(3, 20, 5, 5).toFixed(3)).toBe('0.684');
    expect(delta(1, 11, 5, 5).toFixed(3)).toBe('0.415');
    expect(delta(2, 12, 5, 5).toFixed(3)).toBe('0.812');
    expect(delta(3, 13, 5, 5).toFixed(3)).toBe('0.945');
    expect(delta(1, 10, 5, 5).toFixed(2)).toBe('0.50');
  });

  it('hand-computed small cases', () => {
    // m=2,k=1,t=1: p_clean = 1/2; n=1: δ = P[X≥1] = 1/2; n=3: P[X≥2] = 3/8+1/8 = 1/2.
    expect(certificate(1, 2, 1, 1).exact).toEqual({ num: 1n, den: 2n });
    expect(certificate(1, 2, 1, 3).exact).toEqual({ num: 1n, den: 2n });
    // m=3,k=1,t=1: q = 1/3, n=3: 3·(1/9)(2/3) + 1/27 = 6/27 + 1/27 = 7/27.
    expect(certificate(1, 3, 1, 3).exact).toEqual({ num: 7n, den: 27n });
    // even n counts the tie: m=3,k=1,t=1,n=2: P[X≥1] = 1 − 4/9 = 5/9.
    expect(certificate(1, 3, 1, 2).exact).toEqual({ num: 5n, den: 9n });
    // t=0 → δ=0; t ≥ m−k+1 → every subset contaminated → δ=1.
    expect(delta(0, 20, 5, 5)).toBe(0);
    expect(delta(16, 20, 5, 5)).toBe(1);
    expect(delta(25, 20, 5, 5)).toBe(1); // t′ = min(t, m)
    expect(pCleanExact(2, 6, 2)).toEqual({ num: 2n, den: 5n }); // C(4,2)/C(6,2) = 6/15
    expect(binomial(52, 5)).toBe(2598960n);
    expect(binomial(5, 7)).toBe(0n);
  });

  it('even n_runs is never better than the odd n_runs below it (ties count)', () => {
    for (const [t, m] of [
      [1, 20],
      [2, 20],
      [1, 11],
      [3, 57],
    ] as const) {
      for (const n of [2, 4, 6, 8, 10])
        expect(delta(t, m, 5, n)).toBeGreaterThanOrEqual(delta(t, m, 5, n - 1));
    }
  });

  it('agrees with a naive float evaluation', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 10 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 12 }),
        (m, t, k0, n) => {
          const k = Math.min(k0, m);
          expect(Math.abs(delta(t, m, k, n) - naiveDelta(t, m, k, n))).toBeLessThan(1e-9);
        },
      ),
    );
  });

  it('δ is non-increasing in m and non-decreasing in t', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 5, max: 80 }),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 9 }),
        (m, t, k, n) => {
          expect(delta(t, m + 1, k, n)).toBeLessThanOrEqual(delta(t, m, k, n));
          expect(delta(t + 1, m, k, n)).toBeGreaterThanOrEqual(delta(t, m, k, n));
        },
      ),
    );
  });

  it('rejects bad parameters with INPUT_INVALID', () => {
    for (const [t, m, k, n] of [
      [-1, 20, 5, 5],
      [1, 4, 5, 5],
      [1, 20, 0, 5],
      [1, 20, 5, 0],
      [1.5, 20, 5, 5],
    ] as const) {
      expect(() => certificate(t, m, k, n)).toThrow(
        expect.objectContaining({ code: 'INPUT_INVALID' }),
      );
    }
    // Issue 19: this was a try/catch that passed when nothing was thrown.
    expect(() => planPoolSize(1, 0, 5, 5)).toThrow(
      expect.objectContaining({ code: 'INPUT_INVALID' }),
    );
    expect(() => planPoolSize(1, 1.5, 5, 5)).toThrow(
      expect.objectContaining({ code: 'INPUT_INVALID' }),
    );
    // Unreachable within maxM.
    expect(() => planPoolSize(5, 1e-12, 5, 5, { maxM: 64 })).toThrow(
      expect.objectContaining({ code: 'INPUT_INVALID' }),
    );
  });

  it('rationalToNumber is exact for dyadics and close otherwise', () => {
    expect(rationalToNumber({ num: 1n, den: 3n })).toBeCloseTo(1 / 3, 15);
    expect(rationalToNumber({ num: 3n, den: 8n })).toBe(0.375);
  });
});

describe('parameter selection', () => {
  it('reproduces the paper: t=1→21, t=2→39, t=3→57 at k=n=5; 18, 34, 50 at n=7', () => {
    expect(planPoolSize(1, 0.1, 5, 5).m).toBe(21);
    expect(planPoolSize(2, 0.1, 5, 5).m).toBe(39);
    expect(planPoolSize(3, 0.1, 5, 5).m).toBe(57);
    expect(planPoolSize(1, 0.1, 5, 7).m).toBe(18);
    expect(planPoolSize(2, 0.1, 5, 7).m).toBe(34);
    expect(planPoolSize(3, 0.1, 5, 7).m).toBe(50);
  });

  it('returns the smallest m', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 6 }),
        fc.double({ min: 0.001, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 9 }),
        (t, target, k, n) => {
          const p = planPoolSize(t, target, k, n);
          expect(p.certificate.delta).toBeLessThanOrEqual(target);
          if (p.m > k) expect(delta(t, p.m - 1, k, n)).toBeGreaterThan(target);
        },
      ),
      { numRuns: 60 },
    );
  });
});
