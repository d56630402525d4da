/**
 * The pieces AutoDetection's growth recalibration combines incrementally (ADR 0019) give
 * exactly what a calibration from scratch gives: n-gram counts kept per text and tallied
 * (texts added and evicted), proactive scores kept per vector, and a MemSAD that reuses its
 * reference matrix across references of changing size.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Memsad, NgramJsd, NgramTally, Proactive, ngramCounts, normalized } from '../../../src/core/detect/index.js';
import { mulberry32 } from '../../../src/core/prng.js';

const vocabulary = ['red', 'folder', 'invoice', 'supplier', 'garden', 'water', 'key', '{"a":1}', 'Über', 'note', '42', 'è', '  '];
const text = fc.array(fc.constantFrom(...vocabulary), { minLength: 0, maxLength: 8 }).map((w) => w.join(' '));

const rng = mulberry32;

describe('incremental calibration (differential against a calibration from scratch)', () => {
  it('NgramJsd.calibrateCounts over a tally rolled through adds and evictions equals calibrate(texts)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(text, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 2, max: 4 }),
        (batches, max, n) => {
          const window: { t: string; c: Map<string, number> }[] = [];
          const tally = new NgramTally();
          const inc = new NgramJsd({ n });
          for (const batch of batches) {
            for (const t of batch) {
              const c = ngramCounts(t, n);
              window.push({ t, c });
              tally.add(c);
              if (window.length > max) tally.remove(window.shift()!.c);
            }
            inc.calibrateCounts(window.map((w) => w.c), tally);
            const full = new NgramJsd({ n });
            full.calibrate(window.map((w) => w.t));
            expect(inc.threshold).toBe(full.threshold);
            expect(inc.stats).toEqual(full.stats);
            for (const probe of ['red folder', 'Über 42 note', 'zzz']) expect(inc.score(probe)).toBe(full.score(probe));
          }
          // The tally holds no zero counts: exactly the window's grams.
          const grams = new Set(window.flatMap((w) => [...w.c.keys()]));
          expect(new Set(tally.counts.keys())).toEqual(grams);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('an empty reference still abstains through calibrateCounts', () => {
    const j = new NgramJsd();
    j.calibrate(['some benign text']);
    j.calibrateCounts([], new NgramTally());
    expect(j.threshold).toBeUndefined();
    expect(j.detect('anything').flagged).toBe(false);
  });

  it('Proactive.calibrateScores on kept scores equals calibrate(vectors)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 0, max: 40 }), (seed, k) => {
        const r = rng(seed);
        const vec = () => normalized(Float32Array.from({ length: 24 }, () => r() - 0.5));
        const probes = Array.from({ length: 4 }, vec);
        const refs = Array.from({ length: k }, vec);
        const a = new Proactive();
        const b = new Proactive();
        a.setProbes(probes);
        b.setProbes(probes);
        a.calibrate(refs);
        b.calibrateScores(refs.map((v) => b.score(v)));
        expect(b.threshold).toBe(a.threshold);
      }),
      { numRuns: 100 },
    );
  });

  it('Memsad.extendReference equals calibrate(the whole reference) with the same history, exactly', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 2, max: 24 }), // capacity
        fc.array(fc.tuple(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 30 })), { minLength: 1, maxLength: 8 }), // (added, queries before)
        fc.constantFrom<'max' | 'mean' | 'combined'>('max', 'mean', 'combined'),
        fc.boolean(),
        (seed, capacity, steps, mode, simd) => {
          const r = rng(seed);
          // Few directions, repeated queries: ties in the maxima.
          const centres = Array.from({ length: 3 }, () => normalized(Float32Array.from({ length: 20 }, () => r() - 0.5)));
          const near = () => normalized(centres[Math.floor(r() * 3)]!.map((x) => x + 0.7 * (r() - 0.5)));
          const inc = new Memsad({ dimensions: 20, capacity, mode, simd });
          const reference: Float32Array[] = [];
          const queries: Float32Array[] = [];
          const first = Array.from({ length: 3 }, near);
          reference.push(...first);
          inc.calibrate(first);
          for (const [added, asked] of steps) {
            for (let i = 0; i < asked; i++) {
              const q = r() < 0.2 && queries.length > 0 ? queries.at(-1)! : near();
              queries.push(q);
              inc.observeQuery(q);
            }
            if (r() < 0.3) inc.recalibrate(); // a rolling recalibration in between
            const add = Array.from({ length: added }, near);
            reference.push(...add);
            const got = inc.extendReference(add);
            const full = new Memsad({ dimensions: 20, capacity, mode, simd });
            for (const q of queries) full.observeQuery(q);
            const want = full.calibrate(reference);
            expect(got).toEqual(want);
            const p = near();
            expect(inc.detect(p)).toEqual(full.detect(p));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a Memsad recalibrated on references of changing size (matrix reused) equals a fresh one', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 20 }),
        fc.boolean(),
        (seed, sizes, queries, simd) => {
          const r = rng(seed);
          const vec = () => normalized(Float32Array.from({ length: 20 }, () => r() - 0.5));
          const history = Array.from({ length: queries }, vec);
          const reused = new Memsad({ dimensions: 20, capacity: 16, simd });
          for (const q of history) reused.observeQuery(q);
          for (const size of sizes) {
            const ref = Array.from({ length: size }, vec);
            const got = reused.calibrate(ref);
            const fresh = new Memsad({ dimensions: 20, capacity: 16, simd });
            const want = fresh.calibrate(ref, history);
            expect(got).toEqual(want);
            const p = vec();
            expect(reused.detect(p)).toEqual(fresh.detect(p));
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});
