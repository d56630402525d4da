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

  it('length-sorted batches in worker threads give the one-by-one vectors, in input order (ADR 0064)', async () => {
    // Lengths from 2 to ~60 tokens, interleaved, so every batch pads some of its texts.
    const texts = Array.from({ length: 13 }, (_, i) =>
      i % 3 === 0
        ? `Short ${i}.`
        : `Sentence ${i}: ${'the garden was amazing and the dog finally slept, '.repeat(1 + (i % 4))}`,
    );
    const one = new LocalMiniLmEmbedder({ threads: 0, batchSize: 1 });
    const pooled = new LocalMiniLmEmbedder({ threads: 2, batchSize: 8 });
    const ref: Float32Array[] = [];
    for (const t of texts) ref.push(...(await one.embed([t])));
    const got = await pooled.embed(texts);
    expect(got).toHaveLength(texts.length);
    let worst = 0;
    got.forEach((v, i) => {
      expect(v).toBeInstanceOf(Float32Array);
      const r = ref[i] as Float32Array;
      for (let j = 0; j < 384; j++)
        worst = Math.max(worst, Math.abs((v[j] as number) - (r[j] as number)));
    });
    expect(worst).toBeLessThan(1e-5);
    // Each vector is the text's own: the paraphrase-free texts are not swapped.
    expect(dot(got[0] as Float32Array, ref[0] as Float32Array)).toBeGreaterThan(0.9999);
    expect(dot(got[0] as Float32Array, ref[3] as Float32Array)).toBeLessThan(0.9999);
    // Inline and worker engines are the same engine: equal to the last bit on the same batch.
    const inline = await new LocalMiniLmEmbedder({ threads: 0, batchSize: 8 }).embed(texts);
    expect(inline.map((v) => Array.from(v))).toEqual(got.map((v) => Array.from(v)));
  });

  it('the worker pool is shared: a second embedder does not load the model again', async () => {
    const a = new LocalMiniLmEmbedder({ threads: 1 });
    await a.warm();
    const b = new LocalMiniLmEmbedder({ threads: 1 });
    await b.warm();
    // A load reads ~45 MB of weights and runs a warm-up pass (hundreds of ms); reuse is ~0.
    expect(b.stats().loadMs).toBeLessThan(Math.max(50, a.stats().loadMs / 4));
    const [va] = await a.embed(['same text']);
    const [vb] = await b.embed(['same text']);
    expect(Array.from(vb as Float32Array)).toEqual(Array.from(va as Float32Array));
  });

  it('rejects a batch size above 16, threads outside 0..4 and non-string input with INPUT_INVALID', async () => {
    expect(() => new LocalMiniLmEmbedder({ batchSize: 17 })).toThrowError(
      expect.objectContaining({ code: 'INPUT_INVALID' }),
    );
    for (const threads of [-1, 5, 1.5])
      expect(() => new LocalMiniLmEmbedder({ threads })).toThrowError(
        expect.objectContaining({ code: 'INPUT_INVALID' }),
      );
    const e = new LocalMiniLmEmbedder();
    await expect(e.embed([1 as unknown as string])).rejects.toMatchObject({
      code: 'INPUT_INVALID',
    });
  });
});
