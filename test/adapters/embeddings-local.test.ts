import { describe, expect, it } from 'vitest';
import { LocalMiniLmEmbedder } from '../../src/adapters/embeddings/local-minilm.js';
import { dot, l2Norm } from '../../src/adapters/embeddings/vector.js';

describe('LocalMiniLmEmbedder (the real all-MiniLM-L6-v2 weights)', () => {
  it('embeds 3 sentences: 384-d unit vectors, paraphrase closer than unrelated', async () => {
    const e = new LocalMiniLmEmbedder();
    expect(e.stats().loadMs).toBe(0); // lazy: nothing loaded yet
    const sentences = [
      'The cat sat on the mat.',
      'A kitten was sitting on the rug.',
      'Quarterly revenue rose by ten percent.',
    ];
    const t0 = performance.now();
    const [a, b, c] = await e.embed(sentences);
    const total = performance.now() - t0;
    const s = e.stats();
    // Timings for the report (the model's cost, apart from search).
    console.log(
      `minilm: load ${s.loadMs.toFixed(0)} ms, ${(s.modelMs / s.texts).toFixed(1)} ms/sentence, first call ${total.toFixed(0)} ms`,
    );
    for (const v of [a, b, c]) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v?.length).toBe(384);
      expect(l2Norm(v as Float32Array)).toBeCloseTo(1, 4);
    }
    const para = dot(a as Float32Array, b as Float32Array);
    const unrelated = dot(a as Float32Array, c as Float32Array);
    expect(para).toBeGreaterThan(unrelated + 0.3);
    expect(e.name).toBe('local:minilm-l6-v2');
    expect(e.dimensions).toBe(384);
  });

  it('is deterministic and chunks a batch in input order', async () => {
    const e = new LocalMiniLmEmbedder({ batchSize: 4 });
    const texts = Array.from({ length: 9 }, (_, i) => `sentence number ${i} about topic ${i % 3}`);
    const all = await e.embed(texts);
    expect(all).toHaveLength(9);
    const again = await e.embed([texts[7] as string]);
    expect(Array.from(again[0] as Float32Array)).toEqual(Array.from(all[7] as Float32Array));
    expect(await e.embed([])).toEqual([]);
  });

  it('rejects a batch size above 16 and non-string input with INPUT_INVALID', async () => {
    expect(() => new LocalMiniLmEmbedder({ batchSize: 17 })).toThrowError(
      expect.objectContaining({ code: 'INPUT_INVALID' }),
    );
    const e = new LocalMiniLmEmbedder();
    await expect(e.embed([1 as unknown as string])).rejects.toMatchObject({
      code: 'INPUT_INVALID',
    });
  });
});
