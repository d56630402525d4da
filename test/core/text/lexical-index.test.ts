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

/** A held document for the reference: its term frequencies and length. */
interface HeldDoc {
  readonly tf: Map<string, number>;
  readonly len: number;
}

/**
 * The definition, over pre-counted documents: BM25 of every held document (each score in query
 * order), filtered, best first, ties by the smaller key.
 */
function exhaustive(
  held: Map<number, HeldDoc>,
  terms: readonly string[],
  k: number,
  accept: (key: number) => boolean,
  stats: Bm25Stats,
): { key: number; score: number }[] {
  const out: { key: number; score: number }[] = [];
  for (const [key, d] of held) {
    const score = bm25(terms, d.tf, d.len, stats);
    if (score > 0 && accept(key)) out.push({ key, score });
  }
  out.sort((a, b) => b.score - a.score || a.key - b.key);
  return out.slice(0, k);
}

/** The definition over held texts: each tokenised and counted, then {@link exhaustive}. */
function reference(
  held: Map<number, string>,
  terms: readonly string[],
  k: number,
  accept: (key: number) => boolean,
  stats: Bm25Stats,
): { key: number; score: number }[] {
  const docs = new Map<number, HeldDoc>();
  for (const [key, text] of held) {
    const tokens = tokenize(text);
    docs.set(key, { tf: termFrequencies(tokens), len: tokens.length });
  }
  return exhaustive(docs, terms, k, accept, stats);
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

  describe('MaxScore pruning (ADR 0090)', () => {
    /** Same keys in the same order and the same float64 scores (Object.is, not ≈). */
    function expectSame(
      got: readonly { key: number; score: number }[],
      want: readonly { key: number; score: number }[],
    ): void {
      expect(got.map((h) => h.key)).toEqual(want.map((h) => h.key));
      got.forEach((h, i) => expect(Object.is(h.score, want[i]?.score)).toBe(true));
    }

    /** Zipf-ish vocabulary: word i drawn with weight ~ 1/(i+1); a few words in most documents. */
    const V = 300;
    function zipfWord(r: () => number): string {
      return `w${Math.floor(Math.exp(r() * Math.log(V + 1)) - 1)}`;
    }
    function zipfText(r: () => number): string {
      const x = r();
      // Mostly short memories; some long ones, some past the per-length table (256 tokens).
      const n =
        x < 0.85
          ? 1 + Math.floor(r() * 12)
          : x < 0.97
            ? 20 + Math.floor(r() * 60)
            : 250 + Math.floor(r() * 150);
      const words: string[] = [];
      // Common words in most documents (long posting lists), the rest Zipf-drawn (repeats).
      if (r() < 0.7) words.push('common');
      if (r() < 0.5) words.push('frequent');
      for (let i = 0; i < n; i++) words.push(zipfWord(r));
      return words.join(' ');
    }
    function query(r: () => number): string[] {
      const n = 2 + Math.floor(r() * 5);
      const terms: string[] = [];
      for (let i = 0; i < n; i++) terms.push(r() < 0.25 ? 'common' : zipfWord(r));
      if (r() < 0.1) terms.push('absentword');
      // Mostly distinct (what queryTerms gives), sometimes a repeated term: summed twice, as
      // score() and the reference do.
      return r() < 0.9 ? [...new Set(terms)] : terms;
    }
    const count = (text: string): HeldDoc => {
      const tokens = tokenize(text);
      return { tf: termFrequencies(tokens), len: tokens.length };
    };

    it('returns exactly the exhaustive ranking over random skewed corpora, bit for bit', () => {
      let pruned = 0;
      let searches = 0;
      let prunedWork = 0;
      let prunedLive = 0;
      for (let corpus = 0; corpus < 8; corpus++) {
        const r = mulberry32(900 + corpus);
        const a = new LexicalIndex();
        const b = new LexicalIndex();
        const heldA = new Map<number, HeldDoc>();
        const heldB = new Map<number, HeldDoc>();
        // Keys in add order for half the corpora (the read model's log order), scattered for
        // the others (ties then need the key comparison).
        const scattered = corpus % 2 === 1;
        let next = 0;
        const newKey = (): number => (scattered ? (next++ * 7919) % 100_003 : next++);
        for (let round = 0; round < 6; round++) {
          for (let i = 0; i < 350; i++) {
            const key = newKey();
            const t = zipfText(r);
            if (r() < 0.8) {
              a.add(key, t);
              heldA.set(key, count(t));
            } else {
              b.add(key, t);
              heldB.set(key, count(t));
            }
          }
          // Remove a share; every third round most (postings compact, slots are handed out
          // afresh); sometimes re-add a removed key with a new text.
          const heavy = round % 3 === 2;
          for (const key of [...heldA.keys()]) {
            if (r() < (heavy ? 0.8 : 0.2)) {
              a.remove(key);
              heldA.delete(key);
              if (r() < 0.05) {
                const t = zipfText(r);
                a.add(key, t);
                heldA.set(key, count(t));
              }
            }
          }
          expect(a.n).toBe(heldA.size);
          const stats = r() < 0.5 ? combinedStats([a, b]) : a;
          for (let q = 0; q < 30; q++) {
            const terms = query(r);
            const k = r() < 0.15 ? 200 + Math.floor(r() * 2_000) : 1 + Math.floor(r() * 40);
            const share = r() * 0.6;
            const salt = Math.floor(r() * 1_000);
            const accept = (key: number): boolean => ((key * 31 + salt) % 1_000) / 1_000 >= share;
            // Held keys, removed ones, the other index's and unknown ones.
            const keys = Array.from({ length: 12 }, () =>
              r() < 0.5 ? Math.floor(r() * next * (scattered ? 7919 : 1)) : newKey() + 5,
            );
            const also = { keys, scores: new Array<number>(keys.length).fill(NaN) };
            const got = a.search(terms, k, accept, stats, also);
            expectSame(got, exhaustive(heldA, terms, k, accept, stats));
            keys.forEach((key, i) =>
              expect(Object.is(also.scores[i], a.score(key, terms, stats))).toBe(true),
            );
            searches++;
            if (a.lastSearch.pruned) {
              pruned++;
              prunedWork += a.lastSearch.scored;
              prunedLive += terms.reduce((x, t) => x + a.df(t), 0);
            }
          }
        }
      }
      // The pruned path ran for most searches, and scored fewer postings than it walked past.
      expect(pruned).toBeGreaterThan(searches / 2);
      expect(prunedWork).toBeLessThan(prunedLive * 0.8);
    });

    it('prunes on names-and-topics text: a fraction of the postings scored, same answer', () => {
      const PEOPLE = ['Ana', 'Ben', 'Chen', 'Dara', 'Eli', 'Farah', 'Goran', 'Hana'];
      const TOPICS = ['quarterly budget', 'database migration', 'hiring plan', 'school trip'];
      const FACTS = ['is worried about the', 'wants reminders about the', 'moved the'];
      const idx = new LexicalIndex();
      const held = new Map<number, HeldDoc>();
      for (let i = 0; i < 6_000; i++) {
        const t = `${PEOPLE[i % 8]} ${FACTS[(i >> 3) % 3]} ${TOPICS[(i * 7) % 4]} (note ${i})`;
        idx.add(i, t);
        held.set(i, count(t));
      }
      const terms = queryTerms('what does Ana think about the quarterly budget?');
      const live = terms.reduce((x, t) => x + idx.df(t), 0);
      const also = { keys: [0, 8, 5_999, 77_777], scores: [NaN, NaN, NaN, NaN] };
      const hits = idx.search(terms, 30, () => true, idx, also);
      expectSame(
        hits,
        exhaustive(held, terms, 30, () => true, idx),
      );
      also.keys.forEach((key, i) =>
        expect(Object.is(also.scores[i], idx.score(key, terms, idx))).toBe(true),
      );
      expect(idx.lastSearch.pruned).toBe(true);
      expect(idx.lastSearch.scored).toBeLessThan(live / 2);
      // One term, or k past every match: the exhaustive walk, every live posting scored.
      idx.search(['ana'], 30, () => true);
      expect(idx.lastSearch).toEqual({ scored: idx.df('ana'), pruned: false });
      expectSame(
        idx.search(terms, live + 1, () => true),
        exhaustive(held, terms, live + 1, () => true, idx),
      );
      expect(idx.lastSearch.pruned).toBe(false);
    });

    it('keeps its bounds valid through removals and compaction (largest tf, shortest document)', () => {
      const idx = new LexicalIndex();
      const held = new Map<number, HeldDoc>();
      const add = (key: number, t: string): void => {
        idx.add(key, t);
        held.set(key, count(t));
      };
      // The short, high-frequency documents that set the bounds go first; once removed (and
      // the postings compacted) the bounds tighten, and the rest must still rank exactly.
      for (let i = 0; i < 20; i++) add(i, 'alpha alpha alpha alpha beta');
      for (let i = 20; i < 400; i++)
        add(i, `alpha beta ${'gamma '.repeat(i % 9)}${i % 3 === 0 ? 'alpha' : ''}`);
      for (const removeUpTo of [0, 10, 20, 250]) {
        for (let i = 0; i < removeUpTo; i++) {
          idx.remove(i);
          held.delete(i);
        }
        for (const k of [1, 5, 30]) {
          const terms = ['alpha', 'beta', 'gamma'];
          expectSame(
            idx.search(terms, k, () => true),
            exhaustive(held, terms, k, () => true, idx),
          );
          expect(idx.lastSearch.pruned).toBe(true);
        }
      }
    });

    it('an accept that throws mid-walk leaves the next search exact', () => {
      const r = mulberry32(77);
      const idx = new LexicalIndex();
      const held = new Map<number, HeldDoc>();
      for (let i = 0; i < 2_000; i++) {
        const t = zipfText(r);
        idx.add(i, t);
        held.set(i, count(t));
      }
      const terms = ['common', 'w1', 'w2'];
      let asked = 0;
      expect(() =>
        idx.search(terms, 10, () => {
          if (++asked === 4) throw new Error('filter failed');
          return true;
        }),
      ).toThrow('filter failed');
      expect(idx.lastSearch.pruned).toBe(false); // not recorded: the search did not finish
      expectSame(
        idx.search(terms, 10, () => true),
        exhaustive(held, terms, 10, () => true, idx),
      );
      expect(idx.lastSearch.pruned).toBe(true);
    });
  });
});
