import { describe, expect, it } from 'vitest';
import { cosine, nearDuplicate, wilson } from '../../../src/core/smsr/index.js';

const v = (...xs: number[]): Float32Array => Float32Array.from(xs);

describe('near-duplicate control', () => {
  it('flags a vector above the threshold and reports the closest', () => {
    const existing = [v(1, 0, 0), v(0, 1, 0), v(0.9, 0.1, 0)];
    const r = nearDuplicate(v(1, 0.05, 0), existing, 0.95);
    expect(r.duplicate).toBe(true);
    expect(r.index).toBe(0);
    expect(r.similarity).toBeGreaterThan(0.99);
    expect(nearDuplicate(v(0, 0, 1), existing, 0.95).duplicate).toBe(false);
  });
  it('empty, zero and mismatched vectors never match', () => {
    expect(nearDuplicate(v(1, 0), [], 0.9)).toEqual({
      duplicate: false,
      similarity: -1,
      index: -1,
    });
    expect(cosine(v(0, 0), v(1, 0))).toBe(0);
    expect(nearDuplicate(v(1, 0), [v(1, 0, 0)], 0.5).duplicate).toBe(false);
    expect(() => cosine(v(1), v(1, 2))).toThrow(RangeError);
  });
});

describe('Wilson interval', () => {
  it('matches the paper (36/450 → [5.8 %, 10.9 %]; 170/450 → [33.4 %, 42.3 %])', () => {
    const a = wilson(36, 450);
    expect(a.lower.toFixed(3)).toBe('0.058');
    expect(a.upper.toFixed(3)).toBe('0.109');
    const b = wilson(170, 450);
    expect(b.lower.toFixed(3)).toBe('0.334');
    expect(b.upper.toFixed(3)).toBe('0.423');
    expect(wilson(0, 0)).toMatchObject({ lower: 0, upper: 1 });
    expect(wilson(0, 10).lower).toBe(0);
  });
});
