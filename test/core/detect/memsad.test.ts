import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DotMatrix, Memsad, dotProduct, normalized } from '../../../src/core/detect/index.js';
import { mulberry32 } from '../../../src/core/prng.js';

const rng = mulberry32;
const randVec = (r: () => number, d: number): Float32Array =>
  normalized(Float32Array.from({ length: d }, () => r() - 0.5));
/** A unit vector near `base` (cosine ≈ 1 − noise²/2). */
function near(r: () => number, base: Float32Array, noise: number): Float32Array {
  return normalized(base.map((x) => x + noise * (r() - 0.5)));
}

describe('DotMatrix', () => {
  it('SIMD kernel and JS fallback agree with a naive dot product (odd widths too)', () => {
    const r = rng(1);
    for (const d of [3, 8, 13, 384]) {
      const a = new DotMatrix(d, 50);
      const b = new DotMatrix(d, 50, { simd: false });
      const rows = Array.from({ length: 50 }, () => randVec(r, d));
      rows.forEach((v, i) => {
        a.setRow(i, v);
        b.setRow(i, v);
      });
      const x = randVec(r, d);
      const da = Array.from(a.dots(x, 50));
      const db = Array.from(b.dots(x, 50));
      rows.forEach((v, i) => {
        expect(da[i]).toBeCloseTo(dotProduct(v, x), 5);
        expect(db[i]).toBeCloseTo(dotProduct(v, x), 5);
      });
    }
  });

  it('uses the SIMD kernel on Node 20', () => {
    expect(new DotMatrix(384, 10).simd).toBe(true);
  });
});

describe('Memsad', () => {
  const d = 64;
  function setup(mode: 'max' | 'mean' | 'combined' = 'combined') {
    const r = rng(7);
    const m = new Memsad({ dimensions: d, capacity: 100, kappa: 2, mode });
    const queries = Array.from({ length: 100 }, () => randVec(r, d));
    for (const q of queries) m.observeQuery(q);
    const benign = Array.from({ length: 300 }, () => randVec(r, d));
    m.calibrate(benign);
    return { r, m, queries };
  }

  it('abstains without history or calibration, and on a wrong width, never throws', () => {
    const m = new Memsad({ dimensions: 8 });
    expect(m.detect(new Float32Array(8)).flagged).toBe(false);
    expect(m.detect(new Float32Array(8)).reason).toMatch(/empty/);
    m.observeQuery(normalized([1, 0, 0, 0, 0, 0, 0, 0]));
    expect(m.detect(normalized([1, 0, 0, 0, 0, 0, 0, 0])).reason).toMatch(/not calibrated/);
    expect(m.detect(new Float32Array(3)).flagged).toBe(false);
  });

  it('computes max / mean / combined (Eq. 7) exactly', () => {
    const m = new Memsad({ dimensions: 2, capacity: 4, alpha: 0.5 });
    m.observeQuery([1, 0]);
    m.observeQuery([0, 1]);
    const s = m.scores([1, 0])!;
    expect(s.max).toBeCloseTo(1);
    expect(s.mean).toBeCloseTo(0.5);
    expect(s.combined).toBeCloseTo(0.75);
  });

  it('τ = mean + κσ of benign scores; benign passes, a passage near a victim query is flagged with a Lemma 8 radius', () => {
    const { r, m, queries } = setup();
    const cal = m.calibration!;
    expect(cal.threshold).toBeCloseTo(cal.mean + 2 * cal.std, 6);
    expect(cal.epsilon).toBeGreaterThan(0);
    // Issue 19: ε carries Theorem 11's κ·σ term (the threshold's σ is estimated too), not only
    // the mean's tolerance. δ = 0.05 split over the four sub-events: x = ln(4/δ).
    const x = Math.log(4 / 0.05);
    const meanTerm = cal.std * Math.sqrt((2 * x) / cal.n);
    const stdTerm = 2 * cal.std * (2 * Math.sqrt(x / cal.n) + (2 * x) / cal.n);
    expect(cal.epsilon).toBeCloseTo(meanTerm + stdTerm, 9);
    const fp = Array.from({ length: 200 }, () => randVec(r, d)).filter(
      (v) => m.detect(v).flagged,
    ).length;
    expect(fp / 200).toBeLessThan(0.06);
    const poison = near(r, queries[3]!, 0.2);
    const f = m.detect(poison);
    expect(f.flagged).toBe(true);
    expect(f.detector).toBe('memsad');
    expect(f.certifiedRadius).toBeGreaterThan(0);
    expect(f.certifiedRadius).toBeCloseTo(f.score - f.threshold - cal.epsilon, 6);
  });

  it('FIFO history evicts the oldest query', () => {
    const m = new Memsad({ dimensions: 2, capacity: 2, mode: 'max' });
    m.observeQuery([1, 0]);
    m.observeQuery([0, 1]);
    m.observeQuery([0, -1]); // evicts [1, 0]
    expect(m.historySize).toBe(2);
    expect(m.scores([1, 0])!.max).toBeCloseTo(0);
  });

  it('triggered calibration replaces the history with the given queries', () => {
    const r = rng(3);
    const m = new Memsad({ dimensions: d, capacity: 50, mode: 'max' });
    for (let i = 0; i < 50; i++) m.observeQuery(randVec(r, d));
    const trigger = randVec(r, d);
    const triggered = Array.from({ length: 10 }, () => near(r, trigger, 0.3));
    const benign = Array.from({ length: 200 }, () => randVec(r, d));
    const poison = near(r, trigger, 0.2);
    m.calibrate(benign);
    expect(m.detect(poison).flagged).toBe(false); // plain calibration misses it
    m.calibrate(benign, triggered);
    expect(m.historySize).toBe(10);
    expect(m.detect(poison).flagged).toBe(true);
  });

  it('rolling recalibration recomputes τ every N queries', () => {
    const r = rng(5);
    const m = new Memsad({ dimensions: d, capacity: 20, recalibrateEvery: 5 });
    for (let i = 0; i < 20; i++) m.observeQuery(randVec(r, d));
    m.calibrate(Array.from({ length: 100 }, () => randVec(r, d)));
    const before = m.calibration!;
    for (let i = 0; i < 4; i++) m.observeQuery(randVec(r, d));
    expect(m.calibration).toBe(before);
    m.observeQuery(randVec(r, d));
    expect(m.calibration).not.toBe(before);
  });

  it('a fixed threshold overrides calibration', () => {
    const m = new Memsad({ dimensions: 2, threshold: 0.9, mode: 'max' });
    m.observeQuery([1, 0]);
    expect(m.detect([1, 0.1]).flagged).toBe(true);
    expect(m.detect([0.5, 1]).flagged).toBe(false);
  });
});

describe('Memsad incremental rolling recalibration', () => {
  const d = 24;
  /** A history that drifts: queries near one centre, then near another. */
  const stream = (r: () => number, n: number, centres: Float32Array[], noise: number) =>
    Array.from({ length: n }, (_, i) =>
      near(r, centres[Math.floor((i * centres.length) / n)]!, noise),
    );

  it('equals a full recomputation after any interleaving of queries and recalibrations (differential)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 2, max: 40 }), // capacity
        fc.integer({ min: 1, max: 60 }), // reference size
        fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 1, maxLength: 12 }), // queries between recalibrations
        fc.constantFrom<'max' | 'mean' | 'combined'>('max', 'mean', 'combined'),
        fc.boolean(),
        (seed, capacity, refs, bursts, mode, simd) => {
          const r = rng(seed);
          // Few distinct directions, so ties and repeated maxima happen.
          const centres = Array.from({ length: 3 }, () => randVec(r, d));
          const reference = Array.from({ length: refs }, () =>
            near(r, centres[Math.floor(r() * 3)]!, r() < 0.3 ? 0 : 0.8),
          );
          const inc = new Memsad({ dimensions: d, capacity, mode, kappa: 2, simd });
          const held: Float32Array[] = [];
          for (let i = 0; i < capacity; i++) {
            const q = near(r, centres[Math.floor(r() * 3)]!, 0.8);
            inc.observeQuery(q);
            held.push(q);
          }
          inc.calibrate(reference);
          for (const k of bursts) {
            for (let i = 0; i < k; i++) {
              // Repeated queries: equal similarities in several slots.
              const q =
                r() < 0.2 && held.length > 0
                  ? held.at(-1)!
                  : near(r, centres[Math.floor(r() * 3)]!, 0.6);
              inc.observeQuery(q);
              held.push(q);
            }
            const got = inc.recalibrate();
            const full = new Memsad({ dimensions: d, capacity, mode, kappa: 2, simd });
            full.calibrate(reference, held.slice(-capacity));
            const want = full.calibration!;
            expect(got.n).toBe(want.n);
            if (mode === 'max') {
              // The max part is the same products in the same order: exactly equal.
              expect(got.mean).toBe(want.mean);
              expect(got.std).toBe(want.std);
            } else {
              // The mean part is r · Σq / n with Σq rolled forward vs recomputed: float rounding.
              expect(Math.abs(got.mean - want.mean)).toBeLessThan(1e-6);
              expect(Math.abs(got.std - want.std)).toBeLessThan(1e-6);
            }
            expect(Math.abs(got.threshold - want.threshold)).toBeLessThan(1e-5);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a history of repeated queries calibrates like the plain definition (each distinct query scored once)', () => {
    // Mostly repeats (a cached query asked again, sometimes a bit-identical copy from a client):
    // the calibration must equal mean/std of α·max + (1−α)·mean over the references, computed
    // naively in float64 over every held slot.
    for (const simd of [true, false]) {
      const r = rng(simd ? 5 : 6);
      const capacity = 60;
      const m = new Memsad({ dimensions: d, capacity, kappa: 2, simd });
      const pool = Array.from({ length: 7 }, () => randVec(r, d));
      const held: Float32Array[] = [];
      const reference = Array.from({ length: 45 }, () => randVec(r, d));
      m.calibrate(reference);
      for (let burst = 0; burst < 4; burst++) {
        for (let i = 0; i < 37; i++) {
          const q = pool[Math.floor(r() * pool.length)]!;
          const copy = r() < 0.5 ? q : Float32Array.from(q); // same object or an equal copy
          m.observeQuery(copy);
          held.push(copy);
        }
        const got = m.recalibrate();
        const window = held.slice(-capacity);
        const scores = reference.map((ref) => {
          const sims = window.map((q) => dotProduct(ref, q));
          const max = Math.max(...sims);
          const mean = sims.reduce((a, b) => a + b, 0) / sims.length;
          return 0.5 * max + 0.5 * mean;
        });
        const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
        const std = Math.sqrt(scores.reduce((a, b) => a + (b - mean) ** 2, 0) / scores.length);
        expect(got.n).toBe(reference.length);
        expect(Math.abs(got.mean - mean)).toBeLessThan(1e-5);
        expect(Math.abs(got.std - std)).toBeLessThan(1e-4);
      }
    }
  });

  it('τ follows a drifting history once recalibrated, and not before', () => {
    const r = rng(11);
    const a = randVec(r, d);
    const b = randVec(r, d);
    const m = new Memsad({ dimensions: d, capacity: 50, kappa: 2 });
    for (const q of stream(r, 50, [a], 0.3)) m.observeQuery(q);
    // Reference: half near a, half near b.
    m.calibrate([...stream(r, 40, [a], 0.9), ...stream(r, 40, [b], 0.3)]);
    const before = m.calibration!.threshold;
    for (const q of stream(r, 50, [b], 0.3)) m.observeQuery(q);
    expect(m.queriesSinceCalibration).toBe(50);
    expect(m.calibration!.threshold).toBe(before); // no schedule given: τ waits
    const after = m.recalibrate().threshold;
    expect(m.queriesSinceCalibration).toBe(0);
    // The references near b now sit near the history: the benign score distribution moved.
    expect(Math.abs(after - before)).toBeGreaterThan(0.05);
  });
});
