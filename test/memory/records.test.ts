import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nsToIso } from '../../src/memory/read/records.js';

const reference = (ns: bigint): string => new Date(Number(ns / 1_000_000n)).toISOString();
const MAX_NS = 8_640_000_000_000_000n * 1_000_000n; // a Date's range, in ns

describe('nsToIso', () => {
  it('is toISOString of the whole milliseconds, for any time a Date holds', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -MAX_NS - 999_999n, max: MAX_NS + 999_999n }), (ns) => {
        expect(nsToIso(ns)).toBe(reference(ns));
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees at second, millisecond, year and sign boundaries (cached prefixes reused)', () => {
    const edges = [
      0n,
      1n,
      -1n,
      999_999n,
      1_000_000n,
      -999_999n,
      -1_000_000n,
      -1_000_001n,
      999_999_999n,
      1_000_000_000n,
      1_000_000_001n,
      -999_999_999n,
      -1_000_000_000n,
      1_795_298_534_554_668_112n,
      1_795_298_534_999_999_999n,
      1_795_298_535_000_000_000n,
      253_402_300_799_999_000_000n, // 9999-12-31T23:59:59.999Z
      253_402_300_800_000_000_000n, // +010000-01-01
      -62_167_219_200_001_000_000n, // before year 0
      MAX_NS,
      -MAX_NS,
      MAX_NS + 999_999n,
      -MAX_NS - 999_999n,
    ];
    for (let round = 0; round < 2; round++)
      for (const e of edges)
        for (const d of [-1_000_000n, -1n, 0n, 1n, 7_000_000n]) {
          const ns = e + d;
          let want: string | Error;
          try {
            want = reference(ns);
          } catch (err) {
            want = err as Error;
          }
          if (want instanceof Error) expect(() => nsToIso(ns)).toThrow(RangeError);
          else expect(nsToIso(ns)).toBe(want);
        }
  });

  it('throws RangeError beyond a Date, as toISOString does', () => {
    expect(() => nsToIso(MAX_NS + 1_000_000n)).toThrow(RangeError);
    expect(() => nsToIso(-MAX_NS - 1_000_000n)).toThrow(RangeError);
  });
});
