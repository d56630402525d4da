import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVectorIndex, listOrder, type VectorIndex } from '../../../src/core/vector/index.js';
import { DotArena } from '../../../src/core/vector/kernel.js';
import { Naive, clustered, expectSameRanking, randomVector, recall, rng } from './reference.js';

type Stats = { lists: number; trainings: number; holes: number; slots: number };
const stats = (ix: VectorIndex): Stats => (ix as unknown as { stats(): Stats }).stats();

describe('vector index: IVF mode', () => {
  it('probing every list is exact: interleaved adds / removes / replaces across trainings, list moves and fold-backs', () => {
    for (const simd of [true, false]) {
      const r = rng(simd ? 21 : 22);
      const d = 24;
      const gen = clustered(r, d, 30, 0.8);
      const ix = createVectorIndex(d, {
        exactBelow: 64,
        nprobe: 1_000_000,
        ...(simd ? {} : { simd: false }),
      });
      const naive = new Naive();
      let maxLists = 1;
      let sawFoldBack = false;
      for (let step = 0; step < 8000; step++) {
        // Grow to ~1,500, shrink below 32, grow again: trainings, moves, compaction, fold-back.
        const phase = Math.floor(step / 2000) % 2;
        let key = Math.floor(r() * 2000);
        if (phase === 1 && naive.rows.size > 0 && r() < 0.9) {
          const live = [...naive.rows.keys()];
          key = live[Math.floor(r() * live.length)] as number;
        }
        if (r() < (phase === 0 ? 0.8 : 0.1)) {
          const v = gen();
          ix.add(key, v);
          naive.add(key, v);
        } else {
          expect(ix.remove(key)).toBe(naive.remove(key));
        }
        expect(ix.size).toBe(naive.rows.size);
        const s = stats(ix);
        if (s.lists > 1) maxLists = Math.max(maxLists, s.lists);
        if (maxLists > 1 && s.lists === 1) sawFoldBack = true;
        if (step % 97 === 0) {
          const q = gen();
          expectSameRanking(ix.search(q, 24), naive.search(q, 24), naive, q);
          const accept = (k: number): boolean => k % 5 === 1;
          expectSameRanking(ix.search(q, 10, accept), naive.search(q, 10, accept), naive, q);
        }
      }
      expect(maxLists).toBeGreaterThan(20);
      expect(sawFoldBack).toBe(true);
      expect(stats(ix).trainings).toBeGreaterThan(3);
      for (const key of naive.rows.keys()) expect(ix.has(key)).toBe(true);
    }
  });

  it('recall@10 ≥ 0.95 on clustered data with the default nprobe; scores are true cosines, best first', () => {
    const r = rng(5);
    const d = 384;
    const n = 10_000;
    const gen = clustered(r, d, n / 50, 1.5);
    const ix = createVectorIndex(d);
    const naive = new Naive();
    for (let key = 0; key < n; key++) {
      const v = gen();
      ix.add(key, v);
      naive.add(key, v);
    }
    expect(stats(ix).lists).toBeGreaterThan(50);
    let sum = 0;
    const queries = 100;
    for (let i = 0; i < queries; i++) {
      const q = gen();
      const got = ix.search(q, 10);
      const want = naive.search(q, 10);
      expect(got).toHaveLength(10);
      for (let j = 1; j < got.length; j++)
        expect((got[j] as { score: number }).score).toBeLessThanOrEqual(
          (got[j - 1] as { score: number }).score,
        );
      for (const h of got) {
        const truth = naive.search(q, n, (k) => k === h.key)[0];
        expect(Math.abs((truth?.score as number) - h.score)).toBeLessThan(2e-5);
      }
      sum += recall(got, want);
    }
    const rec = sum / queries;
    expect(rec).toBeGreaterThanOrEqual(0.95);
    // The same queries over uniform random data would not reach this: the assertion measures the index.
  });

  it('a selective accept filter still yields k accepted hits (further lists are scanned)', () => {
    const r = rng(8);
    const d = 32;
    const ix = createVectorIndex(d, { exactBelow: 256, nprobe: 2 });
    const gen = clustered(r, d, 40, 1);
    for (let key = 0; key < 5000; key++) ix.add(key, gen());
    expect(stats(ix).lists).toBeGreaterThan(30);
    const accept = (k: number): boolean => k % 97 === 0;
    const got = ix.search(gen(), 40, accept);
    expect(got).toHaveLength(40);
    expect(got.every((h) => accept(h.key))).toBe(true);
    expect(ix.search(gen(), 100, accept)).toHaveLength(52);
  });

  it('is deterministic: the same operations build the same lists and answer the same', () => {
    const run = (): string => {
      const r = rng(13);
      const ix = createVectorIndex(48, { exactBelow: 300 });
      const gen = clustered(r, 48, 25, 1.2);
      for (let key = 0; key < 3000; key++) ix.add(key, gen());
      for (let key = 0; key < 3000; key += 7) ix.remove(key);
      return JSON.stringify(Array.from({ length: 10 }, () => ix.search(gen(), 10)));
    };
    expect(run()).toBe(run());
  });

  it('the JavaScript kernel builds and searches IVF like the SIMD kernel', () => {
    const make = (simd: boolean): { ix: VectorIndex; gen: () => Float32Array } => {
      const r = rng(17);
      const gen = clustered(r, 64, 60, 1);
      const ix = createVectorIndex(64, { exactBelow: 500, ...(simd ? {} : { simd: false }) });
      for (let key = 0; key < 4000; key++) ix.add(key, gen());
      return { ix, gen };
    };
    const a = make(true);
    const b = make(false);
    expect(stats(a.ix).lists).toBe(stats(b.ix).lists);
    let agree = 0;
    for (let i = 0; i < 30; i++) {
      const q = a.gen();
      b.gen();
      const x = a.ix.search(q, 24);
      const y = b.ix.search(q, 24);
      agree += recall(x, y);
      for (let j = 0; j < Math.min(x.length, y.length); j++) {
        if (x[j]?.key === y[j]?.key)
          expect(Math.abs((x[j]?.score as number) - (y[j]?.score as number))).toBeLessThan(1e-5);
      }
    }
    expect(agree / 30).toBeGreaterThan(0.99);
  });

  it('uniform random data: still correct scores; the recall it reaches is what nprobe buys', () => {
    const r = rng(31);
    const d = 64;
    const ix = createVectorIndex(d, { exactBelow: 500, nprobe: 4 });
    const naive = new Naive();
    for (let key = 0; key < 5000; key++) {
      const v = randomVector(r, d);
      ix.add(key, v);
      naive.add(key, v);
    }
    const q = randomVector(r, d);
    for (const h of ix.search(q, 10)) {
      const t = naive.search(q, 5000, (k) => k === h.key)[0];
      expect(Math.abs((t?.score as number) - h.score)).toBeLessThan(2e-5);
    }
  });

  it('adaptive probing: lists whose centroid scores near the nearest one are scanned too, up to maxProbe', () => {
    const r = rng(51);
    const d = 64;
    const n = 8000;
    const gen = clustered(r, d, 400, 1.2);
    const data = Array.from({ length: n }, gen);
    const queries = Array.from({ length: 60 }, gen);
    const naive = new Naive();
    data.forEach((v, key) => naive.add(key, v));
    const mean = (ix: VectorIndex): number => {
      data.forEach((v, key) => ix.add(key, v));
      ix.maintain(Infinity);
      return queries.reduce((s, q) => s + recall(ix.search(q, 10), naive.search(q, 10)), 0) / 60;
    };
    const opts = { exactBelow: 1000, seed: 3 };
    const fixed = mean(createVectorIndex(d, { ...opts, nprobe: 2, probeGap: 0, maxProbe: 2 }));
    const adaptive = mean(
      createVectorIndex(d, { ...opts, nprobe: 2, probeGap: 0.25, maxProbe: 32 }),
    );
    const all = mean(createVectorIndex(d, { ...opts, nprobe: 1000 }));
    expect(all).toBe(1);
    expect(adaptive).toBeGreaterThan(fixed + 0.1);
    expect(() => createVectorIndex(d, { probeGap: -0.1 })).toThrow(RangeError);
    expect(() => createVectorIndex(d, { nprobe: 8, maxProbe: 4 })).toThrow(RangeError);
  });
});

describe('listOrder (the probe order of the lists)', () => {
  const byComparator = (cs: Float32Array): number[] =>
    Array.from({ length: cs.length }, (_, c) => c).sort(
      (a, b) => (cs[b] as number) - (cs[a] as number) || a - b,
    );

  it('is the comparator sort: score descending, ties by the smaller list (±0 equal, any float32)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.float({ noNaN: true }),
            fc.constantFrom(0, -0, 1, -1, 0.5, -0.5, Number.MIN_VALUE, -Number.MIN_VALUE),
          ),
          { minLength: 1, maxLength: 300 },
        ),
        (xs) => {
          const cs = Float32Array.from(xs);
          expect(Array.from(listOrder(cs))).toEqual(byComparator(cs));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('falls back to the comparator sort with NaN scores', () => {
    const cs = Float32Array.from([0.5, Number.NaN, 0.7, 0.5]);
    expect(Array.from(listOrder(cs))).toEqual(byComparator(cs));
    expect(Array.from(listOrder(cs, 2))).toEqual(byComparator(cs).slice(0, 2));
  });

  it('with `first`: exactly the head of the whole order (ties, ±0, any length)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.float({ noNaN: true }),
            fc.constantFrom(0, -0, 1, -1, 0.5, -0.5, 0.25, Number.MIN_VALUE),
          ),
          { minLength: 1, maxLength: 400 },
        ),
        fc.nat({ max: 420 }),
        (xs, first) => {
          const cs = Float32Array.from(xs);
          expect(Array.from(listOrder(cs, first))).toEqual(byComparator(cs).slice(0, first));
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('signed-byte prefilter', () => {
  it('dots8 (SIMD and JavaScript) is the exact integer dot product of byte rows in −127…127 with a 16-bit query', () => {
    const r = rng(31);
    for (const simd of [true, false]) {
      const a = new DotArena(1 << 16, simd ? {} : { simd: false });
      expect(a.simd).toBe(simd);
      for (let t = 0; t < 40; t++) {
        // Up to 512 bytes a row: at ±127 × ±32767 the sum stays below 2³¹ (the index's bound).
        const rb = 32 * (1 + (t % 16));
        const n = 1 + ((t * 7) % 37);
        const h = 4096;
        const B = a.i8;
        const Q = a.i16;
        // Extremes too: every product ±127·32767, the i32 sums near their limit.
        const extreme = t % 4 === 0;
        const byte = (): number =>
          extreme ? (r() < 0.5 ? -127 : 127) : Math.floor(r() * 255) - 127;
        const lane = (): number =>
          extreme ? (r() < 0.5 ? -32767 : 32767) : Math.floor(r() * 65535) - 32767;
        for (let i = 0; i < rb; i++) Q[i] = lane();
        for (let i = 0; i < rb * n; i++) B[h + i] = byte();
        a.dots8(h, 0, 12_000, n, rb);
        for (let row = 0; row < n; row++) {
          let want = 0;
          for (let j = 0; j < rb; j++) want += (B[h + row * rb + j] as number) * (Q[j] as number);
          expect(a.i32[12_000 + row]).toBe(want);
        }
      }
    }
  });

  it('changes no result: the same keys and bit-identical scores as scoring every scanned row, through adds, removes, trainings, filters and any k', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.constantFrom(8, 24, 40, 384),
        fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 4, maxLength: 12 }),
        (seed, d, ks) => {
          const r = rng(seed);
          const gen = clustered(r, d, 12, r() < 0.5 ? 0.3 : 1.2);
          const opts = { exactBelow: 128, nprobe: 2, sliceWork: 1 << 14 };
          const a = createVectorIndex(d, opts);
          const b = createVectorIndex(d, { ...opts, prefilter: false });
          let next = 0;
          for (const [burst, k] of ks.entries()) {
            if (burst === 3) {
              // Finish the rebuild under way in both (the same work): IVF lists from here on.
              a.maintain(Infinity);
              b.maintain(Infinity);
            }
            for (let i = 0; i < 80; i++) {
              const v = gen();
              a.add(next, v);
              b.add(next, v);
              if (r() < 0.2 && next > 0) {
                const gone = Math.floor(r() * next);
                a.remove(gone);
                b.remove(gone);
              }
              next++;
            }
            for (let i = 0; i < 6; i++) {
              const q = gen();
              const mod = 2 + (i % 3);
              const accept = i % 2 === 0 ? undefined : (key: number) => key % mod !== 0;
              expect(a.search(q, k, accept)).toEqual(b.search(q, k, accept));
            }
          }
          expect(
            (a as unknown as { stats(): { trainings: number } }).stats().trainings,
          ).toBeGreaterThan(0);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('minScore: exactly the hits of the same search at or above it — IVF and exact, mid-rebuild, prefilter on and off, filters, any k, floors at, between and around the scores', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.constantFrom(8, 24, 384),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 3, maxLength: 8 }),
        (seed, d, ks) => {
          const r = rng(seed);
          const gen = clustered(r, d, 10, r() < 0.5 ? 0.3 : 1.2);
          const opts = { exactBelow: 128, nprobe: 2, maxProbe: 3, sliceWork: 1 << 14 };
          // Twins: every search advances a rebuild under way by one slice, floor or not, so
          // the plain search on one and the floored one on its twin see the same layout.
          const pairs = [opts, { ...opts, prefilter: false }].map((o) => [
            createVectorIndex(d, o),
            createVectorIndex(d, o),
          ]);
          let next = 0;
          let kept = 0;
          let cut = 0;
          for (const [burst, k] of ks.entries()) {
            for (let i = 0; i < 70; i++) {
              const v = gen();
              for (const pair of pairs) for (const ix of pair) ix.add(next, v);
              next++;
            }
            // The first training finished (IVF lists from here on), the same work in every twin.
            if (burst === 1) for (const pair of pairs) for (const ix of pair) ix.maintain(Infinity);
            for (let i = 0; i < 24; i++) {
              // Near a stored row sometimes (scores close to 1), anywhere otherwise.
              const q =
                i % 2 === 0 ? gen() : Float32Array.from(gen(), (x, j) => x + (j === 0 ? 1e-3 : 0));
              const accept = i % 3 === 0 ? (key: number) => key % 3 !== 0 : undefined;
              for (const [plain, floored] of pairs) {
                const full = (plain as VectorIndex).search(q, k, accept);
                const at = full[Math.floor(r() * full.length)]?.score ?? 0;
                const floors = [-2, 2, 0.97, 0.5, 0, -0.3, at, at + 1e-7, at - 1e-7, at + 0.05];
                const floor = floors[i % floors.length] as number;
                const got = (floored as VectorIndex).search(q, k, accept, floor);
                const want = full.filter((h) => h.score >= floor);
                expect(got).toEqual(want);
                kept += want.length;
                cut += full.length - want.length;
              }
            }
          }
          // Both cases occur: hits kept and hits cut by the floor.
          expect(kept).toBeGreaterThan(0);
          expect(cut).toBeGreaterThan(0);
          for (const pair of pairs)
            expect(
              (pair[0] as unknown as { stats(): { trainings: number } }).stats().trainings,
            ).toBeGreaterThan(0);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('minScore: NaN is refused, ±Infinity are floors like any other', () => {
    const r = rng(5);
    const ix = createVectorIndex(8);
    for (let i = 0; i < 50; i++) ix.add(i, randomVector(r, 8));
    const q = randomVector(r, 8);
    expect(() => ix.search(q, 5, undefined, Number.NaN)).toThrow(RangeError);
    expect(ix.search(q, 5, undefined, Number.NEGATIVE_INFINITY)).toEqual(ix.search(q, 5));
    expect(ix.search(q, 5, undefined, Number.POSITIVE_INFINITY)).toEqual([]);
  });
});
