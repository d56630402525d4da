/**
 * The pieces AutoDetection's growth recalibration combines incrementally (ADR 0019) give
 * exactly what a calibration from scratch gives: n-gram counts kept per text and tallied
 * (texts added and evicted), proactive scores kept per vector, and a MemSAD that reuses its
 * reference matrix across references of changing size.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DotMatrix,
  type IndexedText,
  Memsad,
  NgramIndex,
  NgramJsd,
  Proactive,
  abstain,
  dotProduct,
  finding,
  jsdAgainst,
  meanStd,
  gramKey,
  ngramCounts,
  ngramKeys,
  normalized,
} from '../../../src/core/detect/index.js';
import { rowHash } from '../../../src/core/detect/memsad.js';
import { mulberry32 } from '../../../src/core/prng.js';
import { MemsadBefore } from './fixtures/memsad-before.js';

// Code units past 511 (Ж, 中, an emoji's surrogates, ǿ = 511, Ȁ = 512) are keyed as strings, the rest as numbers.
const vocabulary = ['red', 'folder', 'invoice', 'supplier', 'garden', 'water', 'key', '{"a":1}', 'Über', 'note', '42', 'è', '  ', 'Жук', '中文', '🙂', 'ǿȀ', '\u0000'];
const text = fc.array(fc.constantFrom(...vocabulary), { minLength: 0, maxLength: 8 }).map((w) => w.join(' '));

const rng = mulberry32;

/**
 * The string-keyed calibration the index replaced (the oracle): a Map baseline of
 * count / total over every text, each text's JSD against it, τ = mean + κσ.
 */
function stringKeyed(texts: readonly string[], n: number, kappa: number) {
  const per = texts.map((t) => ngramCounts(t, n));
  const counts = new Map<string, number>();
  let total = 0;
  for (const c of per)
    for (const [g, k] of c) {
      counts.set(g, (counts.get(g) ?? 0) + k);
      total += k;
    }
  const base = new Map<string, number>();
  if (total > 0) for (const [g, k] of counts) base.set(g, k / total);
  const stats = per.length === 0 ? undefined : meanStd(per.map((c) => jsdAgainst(c, base)));
  const threshold = stats === undefined ? undefined : stats.mean + kappa * stats.std;
  const score = (t: string) => jsdAgainst(ngramCounts(t, n), base);
  const detect = (t: string) => {
    if (threshold === undefined || base.size === 0) return abstain('memsad_plus', 'no benign baseline');
    const x = score(t);
    return finding('memsad_plus', x, threshold, `char ${n}-gram JSD ${x.toFixed(3)} ${x > threshold ? '>' : '≤'} τ ${threshold.toFixed(3)}`);
  };
  return { threshold, stats, score, detect };
}

describe('gram keys', () => {
  it('ngramKeys is ngramCounts with every gram through gramKey: same counts, same order; gramKey is one-to-one', () => {
    const unit = fc.oneof(
      fc.integer({ min: 0, max: 600 }),
      fc.constantFrom(0x416, 0x4e2d, 0xd83d, 0xde42, 0xffff, 32, 9, 10),
    );
    fc.assert(
      fc.property(
        fc.array(unit, { maxLength: 24 }).map((us) => String.fromCharCode(...us)),
        fc.oneof(fc.constantFrom(1, 2, 3), fc.integer({ min: 4, max: 6 })),
        (t, n) => {
          const want = [...ngramCounts(t, n)].map(([g, c]) => [gramKey(g), c]);
          expect([...ngramKeys(t, n)]).toEqual(want);
          const grams = [...ngramCounts(t, n).keys()];
          expect(new Set(grams.map(gramKey)).size).toBe(grams.length);
        },
      ),
      { numRuns: 500 },
    );
    // Every short gram of units below 512 is a distinct small integer; others stay strings.
    const seen = new Set<number | string>();
    for (const g of ['', 'a', 'ab', 'abc', 'a\u0000', 'a\u0000\u0000', '\u0000', '\u01ff\u01ff\u01ff'])
      seen.add(gramKey(g));
    expect(seen.size).toBe(8);
    expect(typeof gramKey('\u01ff\u01ff\u01ff')).toBe('number');
    expect(gramKey('\u0200ab')).toBe('\u0200ab');
    expect(gramKey('abcd')).toBe('abcd');
    expect(gramKey('\u01ff\u01ff\u01ff') as number).toBeLessThan(2 ** 30);
  });
});

describe('incremental calibration (differential against a calibration from scratch)', () => {
  it('NgramJsd.calibrateIndexed over an index rolled through adds and evictions equals the string-keyed calibration, bit for bit', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(text, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 4 }),
        (batches, max, n) => {
          const window: { t: string; c: IndexedText }[] = [];
          const index = new NgramIndex();
          const inc = new NgramJsd({ n });
          for (const batch of batches) {
            for (const [i, t] of batch.entries()) {
              // Keyed counts (what detection makes) and string-keyed ones (the public form) mixed.
              window.push({ t, c: index.add(i % 2 === 0 ? ngramKeys(t, n) : ngramCounts(t, n)) });
              if (window.length > max) index.remove(window.shift()!.c);
            }
            inc.calibrateIndexed(window.map((w) => w.c), index);
            const full = new NgramJsd({ n });
            full.calibrate(window.map((w) => w.t));
            const want = stringKeyed(window.map((w) => w.t), n, inc.kappa);
            expect(inc.threshold).toBe(want.threshold);
            expect(inc.stats).toEqual(want.stats);
            expect(full.threshold).toBe(want.threshold);
            expect(full.stats).toEqual(want.stats);
            for (const probe of ['red folder', 'Über 42 note', 'zzz', '', ...window.map((w) => w.t)]) {
              expect(inc.score(probe)).toBe(want.score(probe));
              expect(inc.scoreCounts(ngramCounts(probe, n))).toBe(want.score(probe));
              expect(full.score(probe)).toBe(want.score(probe));
              expect(inc.detect(probe)).toEqual(want.detect(probe));
            }
          }
          // The index holds exactly the window's grams.
          const grams = new Set(window.flatMap((w) => [...ngramCounts(w.t, n).keys()]));
          expect(index.size).toBe(grams.size);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('renumbering the grams of a long-rolling index (most ids stale) changes no value and bounds the table', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', minLength: 0, maxLength: 40 }), { minLength: 50, maxLength: 400 }),
        fc.integer({ min: 1, max: 6 }),
        (texts, max) => {
          const index = new NgramIndex();
          const window: { t: string; c: IndexedText }[] = [];
          const inc = new NgramJsd({ n: 2 });
          let earlier: { j: NgramJsd; probe: string; score: number } | undefined;
          for (const [i, t] of texts.entries()) {
            window.push({ t, c: index.add(ngramCounts(t, 2)) });
            if (window.length > max) index.remove(window.shift()!.c);
            if (i % 7 !== 0 && i !== texts.length - 1) continue;
            inc.calibrateIndexed(window.map((w) => w.c), index);
            // The table is bounded by what the window holds (renumbered at calibration).
            expect(index.ids).toBeLessThanOrEqual(Math.max(1024, 4 * index.size));
            const want = stringKeyed(window.map((w) => w.t), 2, inc.kappa);
            expect(inc.threshold).toBe(want.threshold);
            for (const probe of [texts[0]!, t, 'zz']) expect(inc.score(probe)).toBe(want.score(probe));
            // A baseline taken earlier (another detector's) is unaffected by later renumbering.
            if (earlier !== undefined) expect(earlier.j.score(earlier.probe)).toBe(earlier.score);
            const j = new NgramJsd({ n: 2 });
            j.calibrateIndexed(window.map((w) => w.c), index);
            earlier = { j, probe: t, score: want.score(t) };
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('an empty reference still abstains through calibrateIndexed', () => {
    const j = new NgramJsd();
    j.calibrate(['some benign text']);
    j.calibrateIndexed([], new NgramIndex());
    expect(j.threshold).toBeUndefined();
    expect(j.detect('anything').flagged).toBe(false);
  });

  it('Proactive.score equals the mean of dotProduct(probe, normalized(v)) exactly', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 0, max: 11 }),
        fc.integer({ min: 1, max: 40 }),
        fc.constantFrom(1, 1e-3, 7, 0),
        (seed, k, dims, scale) => {
          const r = rng(seed);
          const probes = Array.from({ length: k }, () => Float32Array.from({ length: dims }, () => r() - 0.5));
          const v = Float32Array.from({ length: dims }, () => scale * (r() - 0.5));
          const pro = new Proactive();
          pro.setProbes(probes);
          const u = normalized(v);
          const ps = probes.map((p) => normalized(p));
          let s = 0;
          for (const p of ps) s += dotProduct(p, u);
          const want = k === 0 ? 0 : s / k;
          expect(pro.score(v)).toBe(want);
          expect(pro.score(Array.from(v))).toBe(want);
          expect(pro.detectScore(pro.score(v))).toEqual(pro.detect(v));
        },
      ),
      { numRuns: 300 },
    );
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

  it('Memsad: a reference grown with no history (kept unnormalised until a history arrives) then queried, recalibrated and certified equals one calibrated on it whole', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 8 }), // extensions
        fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 4 }), // query bursts
        fc.constantFrom<'max' | 'mean' | 'combined'>('max', 'mean', 'combined'),
        fc.boolean(),
        (seed, grows, bursts, mode, simd) => {
          const r = rng(seed);
          const centres = Array.from({ length: 3 }, () => normalized(Float32Array.from({ length: 20 }, () => r() - 0.5)));
          // Not unit length: normalising them is part of what is deferred.
          const near = () => centres[Math.floor(r() * 3)]!.map((x) => (1 + r()) * (x + 0.7 * (r() - 0.5)));
          const inc = new Memsad({ dimensions: 20, capacity: 16, mode, simd, kappa: 0.5 });
          const reference: Float32Array[] = [];
          const queries: Float32Array[] = [];
          const check = (): void => {
            const full = new Memsad({ dimensions: 20, capacity: 16, mode, simd, kappa: 0.5 });
            for (const q of queries) full.observeQuery(q);
            expect(inc.recalibrate()).toEqual(full.calibrate(reference));
            // Flagged entries too (κ ½): their certificate reads the reference sample.
            for (let i = 0; i < 4; i++) {
              const p = queries.length > 0 && r() < 0.5 ? queries.at(-1)! : near();
              expect(inc.detect(p)).toEqual(full.detect(p));
            }
          };
          for (const [step, n] of grows.entries()) {
            const add = Array.from({ length: n }, near);
            reference.push(...add);
            inc.extendReference(add);
            if (step === grows.length - 1 || r() < 0.3) check(); // no history yet: abstains alike
          }
          for (const b of bursts) {
            for (let i = 0; i < b; i++) {
              const q = near();
              queries.push(q);
              inc.observeQuery(q);
            }
            if (r() < 0.5) {
              const add = Array.from({ length: 1 + Math.floor(r() * 5) }, near);
              reference.push(...add);
              inc.extendReference(add);
            }
            check();
          }
        },
      ),
      { numRuns: 150 },
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

/** `v` with bit `bit` of component `i` flipped (a near-repeat one float bit away). */
function flipBit(v: Float32Array, i: number, bit: number): Float32Array {
  const out = v.slice();
  const w = new Uint32Array(out.buffer);
  w[i] = ((w[i] as number) ^ (1 << bit)) >>> 0;
  return out;
}

const sameBits = (a: number, b: number): boolean => Object.is(a, b);

describe('MemSAD repeated queries (ADR 0091): the shortcuts change no value', () => {
  it('the kernel dot product is symmetric in its operands at scale 1 (a row scored against a query equals the query scored against the row), SIMD and not', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 41 }),
        fc.integer({ min: 1, max: 9 }),
        fc.boolean(),
        (seed, dims, rows, simd) => {
          const r = rng(seed);
          const special = [0, -0, 1e-40, -1e-45, 3.4e38, -3.4e38, 1, -1, 2 ** -20];
          const vec = (): Float32Array =>
            Float32Array.from({ length: dims }, () =>
              r() < 0.15 ? special[Math.floor(r() * special.length)]! : (r() - 0.5) * 10 ** Math.floor(r() * 6 - 3),
            );
          const xs = Array.from({ length: rows }, vec);
          const ys = Array.from({ length: rows }, vec);
          const X = new DotMatrix(dims, rows, { simd });
          const Y = new DotMatrix(dims, rows, { simd });
          xs.forEach((x, i) => X.setRow(i, x));
          ys.forEach((y, i) => Y.setRow(i, y));
          // Row j of `X.dots(y_i)` is x_j·y_i; row i of `Y.dots(x_j)` is y_i·x_j.
          const a = ys.map((y) => X.dots(y, rows).slice());
          const b = xs.map((x) => Y.dots(x, rows).slice());
          for (let i = 0; i < rows; i++)
            for (let j = 0; j < rows; j++) expect(sameBits(a[i]![j]!, b[j]![i]!)).toBe(true);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('random queries with heavy repetition, recalibrations, wrap-around, reference growth and resets: every calibration and every reference score equal the pre-ADR-0091 algorithm (Object.is), and the maxima equal a MemSAD computed from scratch', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.oneof(fc.integer({ min: 2, max: 24 }), fc.constantFrom(70, 130)), // capacity
        fc.integer({ min: 1, max: 6 }), // distinct pool size
        fc.constantFrom<'max' | 'mean' | 'combined'>('max', 'mean', 'combined'),
        fc.boolean(),
        fc.constantFrom(0, 3),
        fc.constantFrom(0.03, 0.16), // how often a recalibration comes (rarely: long runs of writes)
        fc.constantFrom(0.12, 0.5), // share of new vectors (the rest repeats the pool)
        (seed, capacity, poolSize, mode, simd, recalibrateEvery, pRecal, pNew) => {
          const r = rng(seed);
          const dims = 12;
          const unit = (): Float32Array => normalized(Float32Array.from({ length: dims }, () => r() - 0.5));
          const pool = Array.from({ length: poolSize }, unit);
          // A pool vector with a zero component, and its −0 twin (distinct bits, equal products).
          const z = pool[0]!.slice();
          z[3] = 0;
          pool.push(z, Float32Array.from(z, (x, i) => (i === 3 ? -0 : x)));
          const query = (): Float32Array => {
            const k = r();
            const p = pool[Math.floor(r() * pool.length)]!;
            if (k < 0.65 * (1 - pNew)) return p; // an exact repeat (the same vector a query cache hands back)
            if (k < 0.85 * (1 - pNew)) return flipBit(p, Math.floor(r() * dims), Math.floor(r() * 3)); // one float bit away
            if (k < 1 - pNew) return p.map((x) => x * 3); // the same direction, another length
            return unit(); // new
          };
          const opts = { dimensions: dims, capacity, mode, simd, kappa: 1.5, recalibrateEvery };
          const now = new Memsad(opts);
          const before = new MemsadBefore(opts);
          let reference: Float32Array[] = Array.from({ length: 1 + Math.floor(r() * 6) }, unit);
          let history: Float32Array[] = [];
          const check = (got: { mean: number; std: number; threshold: number; epsilon: number; n: number }, want: typeof got): void => {
            for (const k of ['mean', 'std', 'threshold', 'epsilon', 'n'] as const) expect(sameBits(got[k], want[k])).toBe(true);
            const a = now.lastReferenceScores;
            const b = before.lastReferenceScores;
            expect(a.length).toBe(b.length);
            for (let i = 0; i < a.length; i++) expect(sameBits(a[i]!, b[i]!)).toBe(true);
            expect(now.calibration).toEqual(before.calibration);
            if (mode === 'max') {
              // Scores are the maxima alone: a MemSAD from scratch on the same history gives them.
              const fresh = new Memsad({ ...opts, recalibrateEvery: 0 });
              fresh.calibrate(reference, history.slice(-capacity));
              const f = fresh.lastReferenceScores;
              expect(f.length).toBe(a.length);
              for (let i = 0; i < a.length; i++) expect(sameBits(a[i]!, f[i]!)).toBe(true);
            }
          };
          check(now.calibrate(reference), before.calibrate(reference));
          for (let step = 0; step < 200; step++) {
            const k = r();
            if (k < 0.88 - pRecal) {
              const q = query();
              history.push(q);
              now.observeQuery(q);
              before.observeQuery(q);
              if (recalibrateEvery > 0 && now.queriesSinceCalibration === 0) check(now.calibration!, before.calibration!);
            } else if (k < 0.88) check(now.recalibrate(), before.recalibrate());
            else if (k < 0.94) {
              const add = Array.from({ length: Math.floor(r() * 4) }, () => (r() < 0.5 ? query() : unit()));
              reference = [...reference, ...add];
              check(now.extendReference(add), before.extendReference(add));
            } else if (k < 0.96) {
              history = [];
              now.clearHistory();
              before.clearHistory();
            } else if (k < 0.98) {
              reference = Array.from({ length: Math.floor(r() * 6) }, unit);
              check(now.calibrate(reference), before.calibrate(reference));
            } else {
              reference = Array.from({ length: 1 + Math.floor(r() * 6) }, unit);
              history = Array.from({ length: Math.floor(r() * capacity * 1.5) }, query);
              check(now.calibrate(reference, history), before.calibrate(reference, history));
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rows whose hashes collide are told apart by the full comparison (a collision found by search)', () => {
    const r = rng(5);
    const seen = new Map<number, Float32Array>();
    let pair: [Float32Array, Float32Array] | undefined;
    for (let k = 0; k < 400_000 && pair === undefined; k++) {
      const v = normalized(Float32Array.from({ length: 4 }, () => r() - 0.5));
      const h = rowHash(new Int32Array(v.buffer));
      const other = seen.get(h);
      if (other === undefined) seen.set(h, v);
      else pair = [other, v];
    }
    expect(pair).toBeDefined();
    const [a, b] = pair!;
    expect(rowHash(new Int32Array(a.buffer))).toBe(rowHash(new Int32Array(b.buffer)));
    expect(Array.from(a)).not.toEqual(Array.from(b));
    const x = normalized(Float32Array.from([1, 2, 3, 4]));
    const reference = [a, b, x, normalized(Float32Array.from([-1, 0.5, 0, 2]))];
    for (const simd of [true, false]) {
      const m = new Memsad({ dimensions: 4, capacity: 4, mode: 'max', simd });
      const before = new MemsadBefore({ dimensions: 4, capacity: 4, mode: 'max', simd });
      const same = (): void => {
        expect(m.recalibrate()).toEqual(before.recalibrate());
        const got = m.lastReferenceScores;
        const want = before.lastReferenceScores;
        for (let i = 0; i < want.length; i++) expect(Object.is(got[i], want[i])).toBe(true);
      };
      for (const q of [a, a, x, x]) {
        m.observeQuery(q);
        before.observeQuery(q);
      }
      m.calibrate(reference);
      before.calibrate(reference);
      // b (same hash as a, another row) is new: scored, not taken for a.
      const w = m.work;
      m.observeQuery(b);
      before.observeQuery(b);
      same();
      expect(m.work.referencePasses - w.referencePasses).toBe(1);
      expect(m.work.skippedQueries - w.skippedQueries).toBe(0);
      // Every copy of a leaves while b stays: a's own max must come down.
      for (const q of [x, x, x]) {
        m.observeQuery(q);
        before.observeQuery(q);
      }
      same();
      expect(m.lastReferenceScores[0]).toBeLessThan(0.9999);
    }
  });

  it('the shortcuts are taken: repeated queries cost no kernel pass, an overwritten max moves to a held copy, only a max whose vector left is rescanned', () => {
    const r = rng(91);
    const dims = 16;
    const unit = (): Float32Array => normalized(Float32Array.from({ length: dims }, () => r() - 0.5));
    const pool = Array.from({ length: 5 }, unit);
    const reference = Array.from({ length: 40 }, unit);
    const m = new Memsad({ dimensions: dims, capacity: 50, mode: 'max' });
    const before = new MemsadBefore({ dimensions: dims, capacity: 50, mode: 'max' });
    const ask = (q: Float32Array): void => {
      m.observeQuery(q);
      before.observeQuery(q);
    };
    const same = (): void => {
      expect(m.recalibrate()).toEqual(before.recalibrate());
      const a = m.lastReferenceScores;
      const b = before.lastReferenceScores;
      expect(a.length).toBe(reference.length);
      for (let i = 0; i < a.length; i++) expect(Object.is(a[i], b[i])).toBe(true);
    };
    const delta = (w: Memsad['work'], v: Memsad['work']) => ({
      referencePasses: v.referencePasses - w.referencePasses,
      historyPasses: v.historyPasses - w.historyPasses,
      skippedQueries: v.skippedQueries - w.skippedQueries,
      movedMaxima: v.movedMaxima - w.movedMaxima,
    });
    for (let i = 0; i < 50; i++) ask(pool[i % 5]!);
    m.calibrate(reference);
    before.calibrate(reference);
    // Each max is attained by a copy in the last five slots (the newest of its vector).
    // 25 more of the same five queries (slots 0…24), then 25 (slots 25…49): no kernel pass at
    // all; the second time the slots of the maxima are overwritten and they move to a copy.
    let w = m.work;
    for (let i = 0; i < 25; i++) ask(pool[(i + 1) % 5]!);
    same();
    expect(delta(w, m.work)).toEqual({ referencePasses: 0, historyPasses: 0, skippedQueries: 5, movedMaxima: 0 });
    w = m.work;
    for (let i = 25; i < 50; i++) ask(pool[(i + 1) % 5]!);
    same();
    const moved = delta(w, m.work);
    expect(moved).toMatchObject({ referencePasses: 0, historyPasses: 0, skippedQueries: 5 });
    expect(moved.movedMaxima).toBeGreaterThan(0);
    // One new vector: one pass over the reference, nothing else.
    w = m.work;
    ask(unit());
    same();
    expect(delta(w, m.work)).toEqual({ referencePasses: 1, historyPasses: 0, skippedQueries: 0, movedMaxima: 0 });
    // Every copy of pool[0] leaves the ring (49 writes of the others, in two recalibrations):
    // only the maxima it attained are recomputed — by at most one pass per distinct held
    // vector (5) or one per such reference.
    const attainedBy0 = reference.filter((ref) => {
      const sims = pool.map((p) => dotProduct(normalized(ref), p));
      return sims.indexOf(Math.max(...sims)) === 0;
    }).length;
    expect(attainedBy0).toBeGreaterThan(0);
    w = m.work;
    for (let i = 0; i < 24; i++) ask(pool[1 + (i % 4)]!);
    same();
    for (let i = 0; i < 25; i++) ask(pool[1 + (i % 4)]!);
    same();
    const gone = delta(w, m.work);
    expect(gone.referencePasses + gone.historyPasses).toBeGreaterThan(0);
    expect(gone.referencePasses).toBeLessThanOrEqual(5);
    expect(gone.historyPasses).toBeLessThanOrEqual(attainedBy0);
    expect(gone.skippedQueries).toBe(8);
  });
});
