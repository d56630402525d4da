import { describe, expect, it } from 'vitest';
import { DeterministicEmbedder } from '../../src/adapters/embeddings/deterministic.js';
import { EmbeddingCache } from '../../src/adapters/embeddings/cache.js';
import type { Embedder } from '../../src/adapters/embeddings/types.js';
import { cosine, dot, l2Norm } from '../../src/adapters/embeddings/vector.js';

describe('DeterministicEmbedder', () => {
  const e = new DeterministicEmbedder();

  it('gives 384-d unit vectors, identical for identical text', async () => {
    const [a, b, empty] = await e.embed(['User prefers dark mode', 'User prefers dark mode', '']);
    expect(a?.length).toBe(384);
    expect(l2Norm(a as Float32Array)).toBeCloseTo(1, 6);
    expect(l2Norm(empty as Float32Array)).toBeCloseTo(1, 6);
    expect(Array.from(a as Float32Array)).toEqual(Array.from(b as Float32Array));
  });

  it('scores texts that share words above texts that do not', () => {
    const q = e.embedOne('which theme does the user prefer');
    const near = e.embedOne('The user prefers the dark theme');
    const far = e.embedOne('Invoices are due on the first Monday');
    expect(dot(q, near)).toBeGreaterThan(dot(q, far));
    expect(cosine(q, near)).toBeGreaterThan(0.3);
  });

  it('rejects non-string input with INPUT_INVALID', async () => {
    await expect(e.embed([null as unknown as string])).rejects.toMatchObject({
      code: 'INPUT_INVALID',
    });
  });
});

/** Counts the texts it is asked to embed. */
function counting(inner: Embedder): Embedder & { seen: string[] } {
  const seen: string[] = [];
  return {
    name: inner.name,
    dimensions: inner.dimensions,
    seen,
    embed: async (texts) => {
      seen.push(...texts);
      return inner.embed(texts);
    },
  };
}

describe('EmbeddingCache', () => {
  it('serves repeats from the cache, dedupes within a call and reports model time', async () => {
    const inner = counting(new DeterministicEmbedder());
    const timings: number[] = [];
    const c = new EmbeddingCache(inner, { maxEntries: 10, onModelTime: (ms) => timings.push(ms) });
    expect(c.name).toBe(inner.name);
    const first = await c.embed(['a b', 'c d', 'a b']);
    expect(inner.seen).toEqual(['a b', 'c d']);
    const second = await c.embed(['c d', 'a b']);
    expect(inner.seen).toHaveLength(2);
    expect(Array.from(second[1] as Float32Array)).toEqual(Array.from(first[0] as Float32Array));
    const s = c.stats();
    expect(s).toMatchObject({ hits: 2, misses: 3, size: 2, modelCalls: 1 });
    expect(s.modelMs).toBeGreaterThanOrEqual(0);
    expect(timings).toHaveLength(1);
  });

  it('evicts the least recently used entry', async () => {
    const inner = counting(new DeterministicEmbedder());
    const c = new EmbeddingCache(inner, { maxEntries: 2 });
    await c.embed(['x']);
    await c.embed(['y']);
    await c.embed(['x']); // x is now most recent
    await c.embed(['z']); // evicts y
    inner.seen.length = 0;
    await c.embed(['x', 'z', 'y']);
    expect(inner.seen).toEqual(['y']);
  });

  it('hands out copies, so a caller mutating a vector cannot poison the cache', async () => {
    const c = new EmbeddingCache(new DeterministicEmbedder());
    const [v] = await c.embed(['stable']);
    (v as Float32Array).fill(0);
    const [w] = await c.embed(['stable']);
    expect(l2Norm(w as Float32Array)).toBeCloseTo(1, 6);
  });

  it('rejects a wrapped embedder that returns the wrong count (coded, reason response_invalid)', async () => {
    const broken: Embedder = { name: 'b', dimensions: 384, embed: async () => [] };
    const c = new EmbeddingCache(broken);
    await expect(c.embed(['x'])).rejects.toMatchObject({ details: { reason: 'response_invalid' } });
  });
});
