import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVectorIndex } from '../../../src/core/vector/index.js';
import { Naive, clustered, expectSameRanking, randomVector, rng } from './reference.js';

describe('vector index: contract and edge cases', () => {
  it('an empty index returns nothing; k larger than size returns every vector, best first', () => {
    const ix = createVectorIndex(5);
    expect(ix.size).toBe(0);
    expect(ix.dimensions).toBe(5);
    expect(ix.search([1, 0, 0, 0, 0], 10)).toEqual([]);
    ix.add(3, [1, 0, 0, 0, 0]);
    ix.add(1, [0, 2, 0, 0, 0]);
    ix.add(7, [1, 1, 0, 0, 0]);
    const hits = ix.search([1, 0, 0, 0, 0], 50);
    expect(hits.map((h) => h.key)).toEqual([3, 7, 1]);
    expect(hits[0]?.score).toBeCloseTo(1, 6);
    expect(hits[1]?.score).toBeCloseTo(Math.SQRT1_2, 6);
    expect(hits[2]?.score).toBeCloseTo(0, 6);
    expect(ix.search([1, 0, 0, 0, 0], 0)).toEqual([]);
  });

  it('stores vectors normalised: scale does not change scores', () => {
    const ix = createVectorIndex(3);
    ix.add(0, [1e-30, 2e-30, 2e-30]);
    ix.add(1, [3e30, 0, 4e30]);
    const hits = ix.search([1e10, 2e10, 2e10], 2);
    expect(hits[0]?.key).toBe(0);
    expect(hits[0]?.score).toBeCloseTo(1, 6);
    expect(hits[1]?.score).toBeCloseTo((3 + 8) / 15, 6);
  });

  it('refuses zero, non-finite and wrong-width vectors, bad keys and bad k with RangeError, changing nothing', () => {
    const ix = createVectorIndex(4);
    ix.add(1, [1, 2, 3, 4]);
    const bad: unknown[] = [
      [0, 0, 0, 0],
      [1, NaN, 0, 0],
      [1, Infinity, 0, 0],
      [1, 2, 3],
      [1, 2, 3, 4, 5],
      new Float32Array(4),
      ['1', 2, 3, 4],
    ];
    for (const v of bad) {
      expect(() => ix.add(1, v as number[])).toThrow(RangeError);
      expect(() => ix.add(2, v as number[])).toThrow(RangeError);
      expect(() => ix.search(v as number[], 3)).toThrow(RangeError);
    }
    for (const key of [-1, 1.5, NaN, Infinity, 2 ** 53])
      expect(() => ix.add(key, [1, 0, 0, 0])).toThrow(RangeError);
    for (const k of [-1, 1.5, NaN]) expect(() => ix.search([1, 0, 0, 0], k)).toThrow(RangeError);
    expect(ix.size).toBe(1);
    expect(ix.has(2)).toBe(false);
    const hits = ix.search([1, 2, 3, 4], 5);
    expect(hits).toHaveLength(1);
    expect(hits[0]?.score).toBeCloseTo(1, 6);
    for (const d of [0, -3, 2.5, 70000]) expect(() => createVectorIndex(d)).toThrow(RangeError);
  });

  it('remove of an absent key is false; add of an existing key replaces it', () => {
    const ix = createVectorIndex(2);
    expect(ix.remove(9)).toBe(false);
    ix.add(9, [1, 0]);
    ix.add(9, [0, 1]);
    expect(ix.size).toBe(1);
    expect(ix.search([0, 1], 5)).toEqual([{ key: 9, score: expect.closeTo(1, 6) as number }]);
    expect(ix.remove(9)).toBe(true);
    expect(ix.remove(9)).toBe(false);
    expect(ix.has(9)).toBe(false);
    expect(ix.search([0, 1], 5)).toEqual([]);
  });

  it('applies accept during the scan: k accepted hits whenever k exist', () => {
    const r = rng(3);
    const ix = createVectorIndex(16);
    const naive = new Naive();
    for (let key = 0; key < 500; key++) {
      const v = randomVector(r, 16);
      ix.add(key, v);
      naive.add(key, v);
    }
    const q = randomVector(r, 16);
    const odd = (key: number): boolean => key % 7 === 3;
    const got = ix.search(q, 30, odd);
    expect(got).toHaveLength(30);
    expect(got.every((h) => odd(h.key))).toBe(true);
    expectSameRanking(got, naive.search(q, 30, odd), naive, q);
    expect(ix.search(q, 10, () => false)).toEqual([]);
  });

  it('equal scores rank by the smaller key, whatever the insertion order', () => {
    const ix = createVectorIndex(3);
    for (const key of [50, 4, 17, 9]) ix.add(key, [1, 1, 1]);
    ix.add(2, [1, 0, 0]);
    expect(ix.search([1, 1, 1], 3).map((h) => h.key)).toEqual([4, 9, 17]);
    const r = rng(5);
    for (let trial = 0; trial < 20; trial++) {
      const keys = Array.from({ length: 40 }, (_, i) => i * 3);
      for (let i = keys.length - 1; i > 0; i--) {
        const j = Math.floor(r() * (i + 1));
        [keys[i], keys[j]] = [keys[j] as number, keys[i] as number];
      }
      const tied = createVectorIndex(3);
      for (const key of keys) tied.add(key, [2, 2, 2]);
      expect(tied.search([1, 1, 1], 6).map((h) => h.key)).toEqual([0, 3, 6, 9, 12, 15]);
    }
  });
});

describe('vector index: exact mode against the naive scan', () => {
  for (const simd of [true, false]) {
    it(`random and clustered data, interleaved adds / removes / replaces, with and without filters (simd ${simd})`, () => {
      for (const [d, data] of [
        [13, 'random'],
        [64, 'clustered'],
        [384, 'clustered'],
      ] as const) {
        const r = rng(d);
        const gen = data === 'random' ? () => randomVector(r, d) : clustered(r, d, 12, 0.6);
        const ix = createVectorIndex(d, simd ? {} : { simd: false });
        const naive = new Naive();
        for (let step = 0; step < 3000; step++) {
          const key = Math.floor(r() * 1500);
          const op = r();
          if (op < 0.7) {
            const v = gen();
            ix.add(key, v);
            naive.add(key, v);
          } else {
            expect(ix.remove(key)).toBe(naive.remove(key));
          }
          expect(ix.size).toBe(naive.rows.size);
          if (step % 150 === 149) {
            const q = gen();
            for (const k of [1, 10, 24])
              expectSameRanking(ix.search(q, k), naive.search(q, k), naive, q);
            const accept = (key: number): boolean => key % 3 !== 0;
            expectSameRanking(ix.search(q, 10, accept), naive.search(q, 10, accept), naive, q);
          }
        }
      }
    });
  }

  it('the JavaScript kernel ranks like the SIMD kernel', () => {
    const r = rng(11);
    const gen = clustered(r, 384, 20, 0.8);
    const a = createVectorIndex(384);
    const b = createVectorIndex(384, { simd: false });
    expect((a as unknown as { simd: boolean }).simd).toBe(true);
    expect((b as unknown as { simd: boolean }).simd).toBe(false);
    for (let key = 0; key < 2000; key++) {
      const v = gen();
      a.add(key, v);
      b.add(key, v);
    }
    for (let i = 0; i < 20; i++) {
      const q = gen();
      const x = a.search(q, 24);
      const y = b.search(q, 24);
      expect(x.length).toBe(24);
      for (let j = 0; j < 24; j++) {
        expect(Math.abs((x[j]?.score as number) - (y[j]?.score as number))).toBeLessThan(1e-5);
        if (x[j]?.key !== y[j]?.key)
          expect(Math.abs((x[j]?.score as number) - (y[j]?.score as number))).toBeLessThan(1e-5);
      }
    }
  });
});

describe('vector index: properties', () => {
  const op = fc.oneof(
    fc.record({
      t: fc.constant('add' as const),
      key: fc.nat(40),
      v: fc.array(fc.integer({ min: -5, max: 5 }), { minLength: 6, maxLength: 6 }),
    }),
    fc.record({ t: fc.constant('remove' as const), key: fc.nat(40) }),
  );

  it('size / has / remove follow a Map model; every stored key is found by its own vector', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), fc.boolean(), (ops, simd) => {
        const ix = createVectorIndex(6, simd ? {} : { simd: false });
        const model = new Map<number, number[]>();
        for (const o of ops) {
          if (o.t === 'add') {
            if (o.v.every((x) => x === 0)) {
              expect(() => ix.add(o.key, o.v)).toThrow(RangeError);
            } else {
              ix.add(o.key, o.v);
              model.set(o.key, o.v);
            }
          } else {
            expect(ix.remove(o.key)).toBe(model.delete(o.key));
          }
          expect(ix.size).toBe(model.size);
        }
        for (let key = 0; key <= 40; key++) expect(ix.has(key)).toBe(model.has(key));
        const all = ix.search([1, 0, 0, 0, 0, 0], 100);
        expect(all.map((h) => h.key).sort((a, b) => a - b)).toEqual(
          [...model.keys()].sort((a, b) => a - b),
        );
        for (const [key, v] of model) {
          const hits = ix.search(v, model.size, (k) => k === key);
          expect(hits).toHaveLength(1);
          expect(hits[0]?.score).toBeCloseTo(1, 5);
        }
      }),
      { numRuns: 200 },
    );
  });
});
