import { describe, expect, it } from 'vitest';
import {
  type Bm25Stats,
  LexicalIndex,
  bm25,
  combinedStats,
  queryTerms,
  termFrequencies,
  tokenize,
} from '../../../src/core/text/index.js';
import { mulberry32 } from '../../../src/core/prng.js';

/** The definition: BM25 of every held document, filtered, best first, ties by the smaller key. */
function reference(
  held: Map<number, string>,
  terms: readonly string[],
  k: number,
  accept: (key: number) => boolean,
  stats: Bm25Stats,
): { key: number; score: number }[] {
  const out: { key: number; score: number }[] = [];
  for (const [key, text] of held) {
    const tokens = tokenize(text);
    const score = bm25(terms, termFrequencies(tokens), tokens.length, stats);
    if (score > 0 && accept(key)) out.push({ key, score });
  }
  out.sort((a, b) => b.score - a.score || a.key - b.key);
  return out.slice(0, k);
}

const WORDS = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu'.split(' ');
function text(r: () => number): string {
  const n = 1 + Math.floor(r() * 8);
  return Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
}

describe('LexicalIndex (ADR 0074)', () => {
  it('returns exactly the reference BM25 ranking through adds, removals and re-slotting', () => {
    const r = mulberry32(21);
    const a = new LexicalIndex();
    const b = new LexicalIndex();
    const heldA = new Map<number, string>();
    const heldB = new Map<number, string>();
    let next = 0;
    for (let round = 0; round < 12; round++) {
      // Grow, then remove most (past half: postings compact, slots are handed out afresh).
      for (let i = 0; i < 300; i++) {
        const key = next++;
        const t = text(r);
        const [idx, held] = r() < 0.8 ? [a, heldA] : [b, heldB];
        idx.add(key, t);
        held.set(key, t);
      }
      for (const key of [...heldA.keys()]) {
        if (r() < (round % 3 === 2 ? 0.85 : 0.3)) {
          a.remove(key);
          heldA.delete(key);
        }
      }
      expect(a.n).toBe(heldA.size);
      const stats = combinedStats([a, b]);
      for (let q = 0; q < 20; q++) {
        const terms = queryTerms(text(r));
        const k = 1 + Math.floor(r() * 12);
        const odd = (key: number): boolean => key % 3 !== 0;
        expect(a.search(terms, k, odd, stats)).toEqual(reference(heldA, terms, k, odd, stats));
        expect(a.search(terms, k, () => true)).toEqual(reference(heldA, terms, k, () => true, a));
        for (const h of a.search(terms, k, () => true, stats))
          expect(a.score(h.key, terms, stats)).toBe(h.score);
      }
    }
  });

  it('reports score() of any keys asked alongside a search, bit for bit (ADR 0086)', () => {
    const r = mulberry32(86);
    const a = new LexicalIndex();
    const b = new LexicalIndex();
    const held: number[] = [];
    for (let key = 0; key < 2_000; key++) {
      // Long documents too (past the per-length table) and repeated words (tf > 1).
      const t = r() < 0.1 ? Array.from({ length: 40 }, () => text(r)).join(' ') : text(r);
      if (r() < 0.7) {
        a.add(key, t);
        held.push(key);
      } else b.add(key, t);
      if (key % 7 === 0 && held.length > 10) a.remove(held.splice(3, 1)[0] as number);
    }
    const stats = combinedStats([a, b]);
    let positive = 0;
    for (let q = 0; q < 200; q++) {
      const terms = queryTerms(`${text(r)} ${q % 5 === 0 ? 'absentword' : ''}`);
      // Held keys, removed ones, the other index's and unknown ones.
      const keys = Array.from({ length: 40 }, () => Math.floor(r() * 2_100));
      const also = { keys, scores: new Array<number>(keys.length) };
      const k = 1 + Math.floor(r() * 10);
      const odd = (key: number): boolean => key % 3 !== 0;
      expect(a.search(terms, k, odd, stats, also)).toEqual(a.search(terms, k, odd, stats));
      keys.forEach((key, i) => {
        const want = a.score(key, terms, stats);
        expect(Object.is(also.scores[i], want)).toBe(true);
        if (want > 0) positive++;
      });
    }
    expect(positive).toBeGreaterThan(1_000);
    // No search possible (k = 0): the scores are still score()'s.
    const also = { keys: [held[0] as number], scores: [NaN] };
    a.search(['alpha'], 0, () => true, stats, also);
    expect(also.scores[0]).toBe(a.score(held[0] as number, ['alpha'], stats));
  });

  it('asks accept only about documents that could enter the top k, and still fills it', () => {
    const idx = new LexicalIndex();
    for (let i = 0; i < 1000; i++) idx.add(i, i < 10 ? 'alpha alpha alpha beta' : 'alpha beta');
    const asked: number[] = [];
    // The ten best are refused: the next ten (ties: the smaller keys) fill the answer.
    const hits = idx.search(['alpha'], 10, (key) => (asked.push(key), key >= 10));
    expect(hits.map((h) => h.key)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect(asked.length).toBeLessThan(1000);
  });

  it('an accept that throws leaves no score behind for the next search', () => {
    const idx = new LexicalIndex();
    const held = new Map<number, string>();
    const r = mulberry32(5);
    for (let i = 0; i < 400; i++) {
      const t = text(r);
      idx.add(i, t);
      held.set(i, t);
    }
    const terms = ['alpha', 'beta', 'gamma'];
    let asked = 0;
    expect(() =>
      idx.search(terms, 5, () => {
        if (++asked === 3) throw new Error('filter failed');
        return true;
      }),
    ).toThrow('filter failed');
    expect(idx.search(terms, 7, () => true)).toEqual(reference(held, terms, 7, () => true, idx));
  });

  it('re-adding a removed key and a document without terms behave', () => {
    const idx = new LexicalIndex();
    idx.add(1, 'the and of'); // stop words only: held, matches nothing
    idx.add(2, 'alpha');
    idx.add(2, 'beta'); // already held: unchanged
    expect(idx.search(['beta'], 5, () => true)).toEqual([]);
    idx.remove(2);
    expect(idx.df('alpha')).toBe(0);
    idx.add(2, 'beta');
    expect(idx.search(['beta'], 5, () => true).map((h) => h.key)).toEqual([2]);
    expect(idx.search(['alpha'], 5, () => true)).toEqual([]);
    expect(idx.n).toBe(2);
  });
});
