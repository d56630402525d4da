import { describe, expect, it } from 'vitest';
import { systemRandom } from '../../src/adapters/system/index.js';

describe('systemRandom', () => {
  it('returns fresh, independent arrays of the asked length across pool refills', () => {
    const seen = new Set<string>();
    const got: Uint8Array[] = [];
    // 16-byte draws through several 4 KiB refills, odd sizes to cross the refill boundary.
    for (let i = 0; i < 2000; i++) {
      const n = [16, 1, 7, 16, 3][i % 5] ?? 16;
      const b = systemRandom.randomBytes(n);
      expect(b).toBeInstanceOf(Uint8Array);
      expect(b.length).toBe(n);
      expect(b.byteOffset).toBe(0);
      expect(b.buffer.byteLength).toBe(n); // its own buffer, not a view of the pool
      if (n === 16) {
        const hex = Buffer.from(b).toString('hex');
        expect(seen.has(hex)).toBe(false);
        seen.add(hex);
      }
      got.push(b);
    }
    // Earlier results are unaffected by later draws (no aliasing of the pool).
    const first = Buffer.from(got[0] ?? new Uint8Array()).toString('hex');
    for (let i = 0; i < 600; i++) systemRandom.randomBytes(16);
    expect(Buffer.from(got[0] ?? new Uint8Array()).toString('hex')).toBe(first);
    expect(systemRandom.randomBytes(0).length).toBe(0);
  });

  it('draws key-sized requests directly, and they are not all zero', () => {
    const a = systemRandom.randomBytes(32);
    const b = systemRandom.randomBytes(32);
    expect(a.length).toBe(32);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
    expect(a.some((x) => x !== 0)).toBe(true);
  });

  it('pooled bytes look uniform (not zeroed or repeated): byte histogram of 64 KiB', () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 4096; i++) for (const x of systemRandom.randomBytes(16)) counts[x]! += 1;
    // 65,536 bytes: 256 expected per value; a zero-filled or stuck pool would be far off.
    const chi2 = counts.reduce((s, c) => s + (c - 256) ** 2 / 256, 0);
    expect(chi2).toBeLessThan(400); // 255 dof: p ≈ 1e-7 beyond 400
  });
});
