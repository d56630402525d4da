import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SeededWords,
  aggregateVerdicts,
  certificate,
  sampleSubset,
  stringVote,
  uniformBelow,
  type Verdict,
} from '../../../src/core/smsr/index.js';

describe('uniform k-subsets', () => {
  it('draws k distinct indices in range', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 40 }),
        fc.string(),
        (m, k0, seed) => {
          const k = Math.min(k0, m);
          const s = sampleSubset(new SeededWords(seed), m, k);
          expect(s).toHaveLength(k);
          expect(new Set(s).size).toBe(k);
          for (const i of s) expect(i >= 0 && i < m).toBe(true);
        },
      ),
    );
  });

  it('E2: contaminated-run fraction matches 1 − p_clean within ±0.001 over 3·10⁵ draws', () => {
    const draws = 300_000;
    const m = 20;
    const k = 5;
    for (const t of [1, 2, 3]) {
      const words = new SeededWords(`e2-${t}`);
      const scratch = new Uint32Array(m);
      // Adversarial entries at the *top* ranks 0..t-1: rank must not matter.
      let contaminated = 0;
      for (let d = 0; d < draws; d++) {
        const s = sampleSubset(words, m, k, scratch);
        if (s.some((i) => i < t)) contaminated++;
      }
      const expected = 1 - certificate(t, m, k, 1).pClean;
      expect(Math.abs(contaminated / draws - expected)).toBeLessThanOrEqual(0.001);
    }
  });

  it('every subset of a small pool is equally likely (χ² over C(6,3)=20 cells)', () => {
    const words = new SeededWords('chi2');
    const counts = new Map<string, number>();
    const n = 200_000;
    for (let d = 0; d < n; d++) {
      const key = sampleSubset(words, 6, 3).sort().join(',');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    expect(counts.size).toBe(20);
    const e = n / 20;
    let chi2 = 0;
    for (const c of counts.values()) chi2 += (c - e) ** 2 / e;
    expect(chi2).toBeLessThan(43.8); // χ²(19) at p = 0.001
  });

  it('uniformBelow rejects the biased tail', () => {
    let calls = 0;
    const src = { nextUint32: () => (calls++ === 0 ? 0xffffffff : 7) };
    expect(uniformBelow(src, 3)).toBe(1); // 0xffffffff is in the rejected tail for n = 3
    expect(calls).toBe(2);
  });

  it('is deterministic for a seed', () => {
    const a = new SeededWords('x');
    const b = new SeededWords('x');
    for (let i = 0; i < 100; i++) expect(a.nextUint32()).toBe(b.nextUint32());
  });
});

describe('verdict aggregation', () => {
  it('Consistent Minority Effect: string vote picks the attacker, verdict vote does not (Fig. 4)', () => {
    const malicious = 'The CFO approval threshold is $50,000.';
    const responses = [
      malicious,
      "I don't know the CFO approval threshold from the memories provided.",
      malicious,
      'The memories do not say what the approval limit is.',
      'I could not find a policy on expense approval limits.',
    ];
    const judge = (r: string): Verdict => (r.includes('$50,000') ? 'malicious' : 'neither');
    const sv = stringVote(responses);
    expect(sv.response).toBe(malicious);
    expect(sv.count).toBe(2);
    const agg = aggregateVerdicts(responses.map(judge));
    expect(agg.verdict).toBe('neither');
    expect(agg.counts).toEqual({ correct: 0, malicious: 2, neither: 3 });
    expect(responses[agg.index]).not.toBe(malicious);
  });

  it('malicious wins only with ≥ ⌈n/2⌉ runs and a strict lead', () => {
    const v = (s: string): Verdict[] =>
      [...s].map((c) => (c === 'm' ? 'malicious' : c === 'c' ? 'correct' : 'neither'));
    expect(aggregateVerdicts(v('mmmcc')).verdict).toBe('malicious');
    expect(aggregateVerdicts(v('mmccn')).verdict).toBe('correct');
    expect(aggregateVerdicts(v('mmmccnn')).verdict).toBe('correct'); // plurality 3/7 < ⌈7/2⌉
    expect(aggregateVerdicts(v('mmmccc')).verdict).toBe('correct'); // even tie never to malicious
    expect(aggregateVerdicts(v('mmmccn')).verdict).toBe('malicious'); // 3 = ⌈6/2⌉ with a strict lead
    expect(aggregateVerdicts(v('nnc')).verdict).toBe('neither');
    expect(aggregateVerdicts([]).index).toBe(-1);
    const a = aggregateVerdicts(v('ncmcm'));
    expect(a.verdict).toBe('correct');
    expect(a.index).toBe(1);
  });

  it('malicious majority implies X ≥ ⌈n/2⌉ (the event Theorem 2 bounds)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<Verdict>('correct', 'malicious', 'neither'), {
          minLength: 1,
          maxLength: 12,
        }),
        (vs) => {
          if (aggregateVerdicts(vs).verdict === 'malicious') {
            expect(vs.filter((x) => x === 'malicious').length).toBeGreaterThanOrEqual(
              Math.ceil(vs.length / 2),
            );
          }
        },
      ),
    );
  });
});
