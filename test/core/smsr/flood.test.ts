/**
 * Issue 19, "keep t small, measurably": the near-duplicate threshold (0.97) lets paraphrase
 * floods at 0.85–0.96 cosine through; the flood window bounds mutually similar writes per
 * bucket and window without counting distinct facts against each other, and reports the
 * budget an attacker keeps and the certificate it leaves.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FLOOD_POLICY,
  FloodWindow,
  certificate,
  floodBudget,
} from '../../../src/core/smsr/index.js';

/** A unit vector at cosine `c` to e0, in a direction of its own (dimension i). */
function at(c: number, i: number, d = 16): Float32Array {
  const v = new Float32Array(d);
  v[0] = c;
  v[i] = Math.sqrt(1 - c * c);
  return v;
}

describe('FloodWindow', () => {
  it('holds the third paraphrase of one claim within the hour (cosines 0.86–0.96), whatever near-duplicate passes', () => {
    const w = new FloodWindow();
    const b = ['tier:alice:EXTERNAL_WEB', 'source:https://evil.example'];
    // Pairwise cosines of at(0.93, i) and at(0.93, j): 0.93² ≈ 0.865 ≥ 0.85, < 0.97.
    const xs = [2, 3, 4, 5].map((i) => at(0.93, i));
    let t = 0;
    const outcomes = xs.map((x) => {
      const c = w.check(b, x, t);
      if (!c.overBudget) w.record(b, x, t);
      t += 1000;
      return c.overBudget;
    });
    expect(outcomes).toEqual([false, false, true, true]);
    // An hour later the window has moved: the bucket may add again.
    expect(w.check(b, xs[3]!, 3_600_000 + 5000).overBudget).toBe(false);
  });

  it('never counts distinct facts against each other', () => {
    const w = new FloodWindow();
    const b = ['tier:alice:USER_OBSERVED'];
    for (let i = 1; i < 16; i++) {
      const v = new Float32Array(16);
      v[i] = 1; // orthogonal: distinct facts
      expect(w.check(b, v, i).overBudget).toBe(false);
      w.record(b, v, i);
    }
  });

  it('a different bucket (another source) has its own budget', () => {
    const w = new FloodWindow();
    const x = at(0.95, 2);
    w.record(['source:a'], x, 0);
    w.record(['source:a'], at(0.95, 3), 0);
    expect(w.check(['source:a'], at(0.95, 4), 1).overBudget).toBe(true);
    expect(w.check(['source:b'], at(0.95, 4), 1).overBudget).toBe(false);
  });

  it('reports the flood an attacker can still place per hour and the certificate that leaves', () => {
    const f = floodBudget(DEFAULT_FLOOD_POLICY, { sources: 1, hours: 1, m: 21, k: 5, runs: 5 });
    expect(f.perHour).toBe(2);
    expect(f.t).toBe(2);
    expect(f.certificate.delta).toBe(certificate(2, 21, 5, 5).delta);
    const day = floodBudget(DEFAULT_FLOOD_POLICY, { sources: 3, hours: 24, m: 21, k: 5, runs: 5 });
    expect(day.t).toBe(144);
    expect(day.certificate.t).toBe(21); // clamped to the pool: the certificate is vacuous (δ = 1)
    expect(day.certificate.delta).toBe(1);
  });
});
