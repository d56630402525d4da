/**
 * Issue 20's conversation write rate (ADR 0064): `add(messages)` embeds all the turns of a
 * call in ONE call to the embedder (which then batches them), and the write path reuses those
 * vectors for screening and storage — no turn is embedded twice. Checked with a counting
 * wrapper around the real local model on PGlite with detection on (`Memory.open`'s default stack).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { LocalMiniLmEmbedder } from '../../src/adapters/embeddings/local-minilm.js';
import type { Embedder } from '../../src/adapters/embeddings/types.js';
import { Memory } from '../../src/index.js';

const model = new LocalMiniLmEmbedder();
const calls: number[] = [];
const counting: Embedder = {
  name: model.name,
  dimensions: model.dimensions,
  embed: async (texts) => {
    calls.push(texts.length);
    return model.embed(texts);
  },
};

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  while (closers.length > 0) await closers.pop()!();
});

describe('add(messages) with the local model', () => {
  it('a 24-turn conversation is one batched embed call of 24 texts', async () => {
    // Memory.open's default stack: PGlite, the read model, per-principal detection.
    const mem = await Memory.open({ ephemeral: true, embedder: counting });
    closers.push(() => mem.close());
    const principal = (await mem.createPrincipal('user', 'alice')).id;
    // The first write of a principal may calibrate its detectors (their own embeddings).
    await mem.add([{ role: 'user', content: 'warm up' }], { principal, infer: false });
    calls.length = 0;
    const topics = ['the garden', 'my sister', 'the new job', 'our trip to Lisbon'];
    const turns = Array.from({ length: 24 }, (_, i) => ({
      role: 'user' as const,
      name: i % 2 === 0 ? 'Caroline' : 'Melanie',
      content: `Hey! ${topics[i % 4]} was on my mind on day ${i}, and we talked for ${i + 2} hours.`,
    }));
    const r = await mem.add(turns, { principal, infer: false });
    expect(r.held).toEqual([]);
    expect(r.results.map((x) => x.event)).toEqual(Array(24).fill('ADD'));
    expect(calls).toEqual([24]);
  }, 120_000);
});
