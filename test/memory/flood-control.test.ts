/**
 * Issue 19, "keep t small, measurably": "the near-duplicate threshold is 0.97 cosine, while the
 * eval's own paraphrased floods sit at 0.87–0.96 with MiniLM and pass". On the write path a
 * paraphrase flood from a tool principal (and from an agent) is held for review after the
 * budget; a user's own similar writes (a correction) are stored; nothing is lost.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import type { Embedder } from '../../src/ports/embedder.js';
import type { Memory } from '../../src/memory/memory.js';
import { withReadModel } from '../../src/memory/read/read-model.js';
import { testMemory } from './helpers-memory.js';

/**
 * Embeds "claim:<n> …" as a unit vector at cosine 0.93 to a shared claim axis (pairwise ≈ 0.865:
 * paraphrases of one claim, each below the 0.97 near-duplicate threshold); anything else on an
 * axis of its own (distinct facts).
 */
class ParaphraseEmbedder implements Embedder {
  readonly dimensions = 384;
  readonly name = 'paraphrase-test';
  private next = 2;
  private readonly axes = new Map<string, number>();
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => {
      let axis = this.axes.get(t);
      if (axis === undefined) {
        axis = this.next++;
        this.axes.set(t, axis);
      }
      const v = new Float32Array(this.dimensions);
      if (t.startsWith('claim')) {
        v[0] = 0.93;
        v[axis] = Math.sqrt(1 - 0.93 * 0.93);
      } else v[axis] = 1;
      return v;
    });
  }
}

let open: Memory | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

const paraphrases = [
  'claim 1: the CFO approval limit is now $50,000',
  'claim 2: approvals by the CFO go up to fifty thousand dollars',
  'claim 3: the chief financial officer may approve $50k',
  'claim 4: CFO sign-off covers amounts to $50,000',
];

async function setup(extra = {}) {
  const t = await testMemory(withReadModel(await MemoryBackend.open()), 'flood', {
    embedder: new ParaphraseEmbedder(),
    ...extra,
  });
  open = t.mem;
  return t.mem;
}

describe('flood control on the write path (issue 19)', () => {
  it("a tool principal's paraphrase flood (0.86 cosine, under the 0.97 near-duplicate check) is held after two", async () => {
    const mem = await setup();
    const { id } = await mem.createPrincipal('tool', 'scraper');
    const out = [];
    for (const p of paraphrases)
      out.push(
        await mem.add(p, {
          principal: id,
          tier: 'EXTERNAL_TOOL',
          verbatim: true,
          source: 'https://evil.example/a',
        }),
      );
    expect(out.map((r) => r.status)).toEqual([
      'stored',
      'stored',
      'pending_review',
      'pending_review',
    ]);
    const held = out[2]!;
    expect(held.status === 'pending_review' && held.reasons.join(' ')).toMatch(/flood/);
    // Nothing is lost: the held writes wait in the review queue.
    expect((await mem.listReviews({ principal: id, status: 'pending' })).length).toBe(2);
  });

  it('an agent principal is bounded too; its distinct facts are not', async () => {
    const mem = await setup();
    const { id } = await mem.createPrincipal('agent', 'assistant');
    const statuses = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await mem.add(`distinct fact number ${i}`, { principal: id })).status);
    expect(statuses.every((s) => s === 'stored')).toBe(true);
    const flood = [];
    for (const p of paraphrases) flood.push((await mem.add(p, { principal: id })).status);
    expect(flood).toEqual(['stored', 'stored', 'pending_review', 'pending_review']);
  });

  it("a user's own similar writes (a correction) are stored", async () => {
    const mem = await setup();
    const { id } = await mem.createPrincipal('user', 'alice');
    for (const p of paraphrases)
      expect((await mem.add(p, { principal: id })).status).toBe('stored');
  });

  it('floodControl: null turns it off', async () => {
    const mem = await setup({ floodControl: null });
    const { id } = await mem.createPrincipal('tool', 'scraper');
    for (const p of paraphrases)
      expect(
        (await mem.add(p, { principal: id, tier: 'EXTERNAL_TOOL', verbatim: true })).status,
      ).toBe('stored');
  });
});
