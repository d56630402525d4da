/**
 * The read model's per-candidate filter and hybrid cosine (ADR 0086) give exactly the answers of
 * the expressions they replace: `tiers.includes(tier)` and `expiresAtNs > nowNs` (BigInt) for
 * the filter, `cosine(q, v)` for the fused vector score — on tier strings that are not interned
 * literals (as rows decoded from the database carry them) and on expiries a nanosecond apart at
 * today's magnitude, where the rounded doubles are equal.
 */
import { describe, expect, it } from 'vitest';
import { SourceTiers } from '../../src/core/trust.js';
import {
  cosine,
  cosineWithNorms,
  cosinesWithNorms,
  sumSquares,
} from '../../src/core/smsr/near-duplicate.js';
import { Held, heldAdmits } from '../../src/memory/read/read-model.js';
import type { StoredEntry } from '../../src/ports/storage.js';
import { mulberry32 } from '../../src/core/prng.js';

/** A tier string built at run time (not the interned literal), like a decoded row's. */
const fresh = (t: string): string => Buffer.from(t, 'utf8').toString('utf8');

function entry(
  tier: string,
  expiresAtNs: bigint | undefined,
  embedding?: Float32Array,
): StoredEntry {
  return {
    id: 'e',
    owner: 'p',
    tier,
    bytes: new Uint8Array(1),
    leafIndex: 0,
    macKid: 'k',
    mac: new Uint8Array(1),
    ...(expiresAtNs === undefined ? {} : { expiresAtNs }),
    ...(embedding === undefined ? {} : { embedding }),
  } as unknown as StoredEntry;
}

/** The project's seeded PRNG (core/prng). */
const rng = mulberry32;

describe('read model filter (heldAdmits)', () => {
  const now = 1_795_000_000_123_456_789n; // ~2026 in ns: Number() rounds it to a multiple of 256
  const tierNames = [...SourceTiers, 'NOT_A_TIER'];
  const tierLists: (readonly string[] | undefined)[] = [
    undefined,
    [],
    ['OPERATOR', 'USER_VERIFIED', 'USER_OBSERVED'],
    [...SourceTiers],
    ['EXTERNAL_WEB'],
    ['NOT_A_TIER'],
    ['USER_OBSERVED', 'NOT_A_TIER'],
  ];
  const offsets = [
    -1_000_000_000n,
    -257n,
    -256n,
    -129n,
    -128n,
    -1n,
    0n,
    1n,
    127n,
    128n,
    255n,
    256n,
    1_000n,
  ];

  it('admits exactly what tiers.includes and the BigInt expiry comparison admit', () => {
    let cases = 0;
    let admitted = 0;
    let roundedEqual = 0;
    for (const tier of tierNames)
      for (const tiers of tierLists)
        for (const off of [undefined, ...offsets]) {
          const exp = off === undefined ? undefined : now + off;
          const h = new Held(entry(fresh(tier), exp));
          const want =
            (tiers === undefined || tiers.includes(fresh(tier))) &&
            (exp === undefined || exp > now);
          // The query's mask: the bits of the known tiers it names.
          const mask = (tiers ?? []).reduce((m, t) => {
            const i = SourceTiers.indexOf(t as never);
            return i < 0 ? m : m | (1 << i);
          }, 0);
          expect(heldAdmits(h, tiers, mask, now, Number(now))).toBe(want);
          if (exp !== undefined && Number(exp) === Number(now)) roundedEqual++;
          if (want) admitted++;
          cases++;
        }
    // The table covers both answers and the case the rounded doubles cannot decide.
    expect(cases).toBe(tierNames.length * tierLists.length * (offsets.length + 1));
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThan(cases);
    expect(roundedEqual).toBeGreaterThan(0);
  });

  it('agrees on random expiries and clocks', () => {
    const r = rng(7);
    for (let i = 0; i < 5_000; i++) {
      const base = BigInt(Math.floor(r() * 2 ** 52)) * 1_000_000n;
      const nowNs = base + BigInt(Math.floor(r() * 1_000));
      const exp = base + BigInt(Math.floor(r() * 1_000));
      const h = new Held(entry(fresh('USER_OBSERVED'), exp));
      const mask = 1 << SourceTiers.indexOf('USER_OBSERVED');
      expect(heldAdmits(h, ['USER_OBSERVED'], mask, nowNs, Number(nowNs))).toBe(exp > nowNs);
    }
  });
});

describe('hybrid cosine from held norms', () => {
  it('is cosine() bit for bit', () => {
    const r = rng(11);
    for (let n = 0; n < 300; n++) {
      const d = 1 + Math.floor(r() * 400);
      const q = new Float32Array(d);
      const v = new Float32Array(d);
      for (let i = 0; i < d; i++) {
        q[i] = (r() - 0.5) * (n % 7 === 0 ? 1e-20 : 2);
        v[i] = (r() - 0.5) * (n % 5 === 0 ? 1e20 : 1);
      }
      if (n % 11 === 0) v.fill(0);
      if (n % 13 === 0) q.fill(0);
      const want = cosine(q, v);
      expect(Object.is(cosineWithNorms(q, sumSquares(q), v, sumSquares(v)), want)).toBe(true);
      const h = new Held(entry('USER_OBSERVED', undefined, v));
      // Twice: the second call uses the sum the first one kept.
      expect(Object.is(h.cosine(q, sumSquares(q)), want)).toBe(true);
      expect(Object.is(h.cosine(q, sumSquares(q)), want)).toBe(true);
    }
    expect(() => cosineWithNorms(new Float32Array(2), 1, new Float32Array(3), 1)).toThrow(
      RangeError,
    );
  });

  it('four rows at a time (cosinesWithNorms, Held.cosines): cosine() of each, bit for bit', () => {
    const r = rng(12);
    for (let n = 0; n < 60; n++) {
      const d = 1 + Math.floor(r() * 400);
      const q = new Float32Array(d);
      for (let i = 0; i < d; i++) q[i] = (r() - 0.5) * (n % 7 === 0 ? 1e-20 : 2);
      if (n % 13 === 0) q.fill(0);
      // 0 … 9 rows: the groups of four and every remainder.
      const vs = Array.from({ length: n % 10 }, (_, k) => {
        const v = new Float32Array(d);
        for (let i = 0; i < d; i++) v[i] = (r() - 0.5) * ((n + k) % 5 === 0 ? 1e20 : 1);
        if ((n + k) % 11 === 0) v.fill(0);
        return v;
      });
      const out = new Float64Array(vs.length);
      cosinesWithNorms(q, sumSquares(q), vs, vs.map(sumSquares), out);
      const held = Held.cosines(
        q,
        sumSquares(q),
        vs.map((v) => new Held(entry('USER_OBSERVED', undefined, v))),
      );
      vs.forEach((v, i) => {
        expect(Object.is(out[i], cosine(q, v))).toBe(true);
        expect(Object.is(held[i], cosine(q, v))).toBe(true);
      });
    }
    expect(() =>
      cosinesWithNorms(new Float32Array(2), 1, [new Float32Array(3)], [1], new Float64Array(1)),
    ).toThrow(RangeError);
  });
});
