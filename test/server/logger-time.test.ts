import fc from 'fast-check';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isoTime } from '../../src/server/logger.js';

const reference = (ms: number): string => `,"time":"${new Date(ms).toISOString()}"`;

describe('access-log timestamp', () => {
  afterEach(() => vi.useRealTimers());

  it("is pino's isoTime for any millisecond a Date holds (cached second prefixes reused)", () => {
    const MAX = 8.64e15;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: -MAX, max: MAX }),
          fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
          fc.constantFrom(0, -1, 1, 999, 1000, -999, -1000, -1001, 253_402_300_799_999, 253_402_300_800_000, -62_167_219_200_000, -62_167_219_200_001),
        ),
        (ms) => {
          expect(isoTime(ms)).toBe(reference(ms));
          expect(isoTime(ms)).toBe(reference(ms)); // again, from the cache
        },
      ),
      { numRuns: 5000 },
    );
  });

  it("equals pino.stdTimeFunctions.isoTime at the current time", () => {
    vi.useFakeTimers();
    for (const t of [1_795_298_534_554, 1_795_298_534_999, 1_795_298_535_000, 1_795_298_535_007]) {
      vi.setSystemTime(t);
      expect(isoTime()).toBe(pino.stdTimeFunctions.isoTime());
    }
  });
});
