/**
 * Issue 19, "keep t small, measurably" — measured with the real local model (all-MiniLM-L6-v2,
 * `LocalMiniLmEmbedder`), not a toy embedder: the issue's finding is that "the eval's own
 * paraphrased floods sit at 0.87–0.96 with MiniLM and pass" the 0.97 near-duplicate check.
 * Stop 25 added the flood stage (ADR 0056) but tested it with an embedder that places
 * paraphrases at 0.865 by construction; this runs the SMSR eval's own attack texts
 * (`attackTexts`: the flooding paraphrases, the "subtle" drafts and the "bypass" revisions) for
 * every scenario through the write path as a tool principal, one source and one hour per flood,
 * and counts what each flood places. It also writes the scenarios' distinct correct facts as an
 * agent (never held) and prints the measured cosines.
 */
import { describe, expect, it } from 'vitest';
import { LocalMiniLmEmbedder } from '../../src/adapters/embeddings/local-minilm.js';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { cosine } from '../../src/core/smsr/near-duplicate.js';
import { type AttackClass, SCENARIOS, attackTexts } from '../../src/eval/smsr/scenarios.js';
import { withReadModel } from '../../src/memory/read/read-model.js';
import { testMemory } from './helpers-memory.js';

const T = 4; // the three flooding paraphrases and one copy; four revisions for bypass
// (`unsigned-subtle` drafts are held by the instruction screen before flood control sees them.)
const CLASSES: readonly AttackClass[] = ['authenticated-flooding', 'bypass'];
const HOUR_NS = 3_600_000_000_000n;

describe('flood control with the real MiniLM model (issue 19)', () => {
  it("the SMSR eval's paraphrase floods place at most 2 per source per hour; distinct facts are never held", async () => {
    const embedder = new LocalMiniLmEmbedder();
    const { mem, clock } = await testMemory(
      withReadModel(await MemoryBackend.open()),
      'flood-minilm',
      { embedder },
    );
    try {
      const tool = (await mem.createPrincipal('tool', 'scraper')).id;
      const agent = (await mem.createPrincipal('agent', 'assistant')).id;
      const placed: Record<string, number[]> = {};
      const cos: Record<string, { min: number; max: number }> = {};
      for (const cls of CLASSES) {
        placed[cls] = [];
        cos[cls] = { min: 1, max: -1 };
        for (const s of SCENARIOS) {
          clock.advance(2n * HOUR_NS); // a fresh window: each flood is measured on its own
          const texts = attackTexts(s, cls, T);
          const vs = await embedder.embed([...new Set(texts)]);
          for (let i = 0; i < vs.length; i++)
            for (let j = i + 1; j < vs.length; j++) {
              const c = cosine(vs[i]!, vs[j]!);
              cos[cls]!.min = Math.min(cos[cls]!.min, c);
              cos[cls]!.max = Math.max(cos[cls]!.max, c);
            }
          let n = 0;
          for (const text of texts) {
            const r = await mem.add(text, {
              principal: tool,
              tier: 'EXTERNAL_TOOL',
              verbatim: true,
              source: `https://flood.example/${s.id}/${cls}`,
            });
            if (r.status === 'stored' && r.event !== 'NOOP') n++;
          }
          placed[cls]!.push(n);
        }
      }
      // What an attacker still places per source per hour, and the pairwise cosines measured.
      console.log(
        'flood-control MiniLM:',
        JSON.stringify(
          Object.fromEntries(
            CLASSES.map((c) => [
              c,
              {
                maxPlaced: Math.max(...placed[c]!),
                meanPlaced: placed[c]!.reduce((a, b) => a + b, 0) / placed[c]!.length,
                cosine: cos[c],
              },
            ]),
          ),
        ),
      );
      // Measured: the flooding paraphrases span 0.81–0.98 with MiniLM (the issue said 0.87–0.96),
      // so a 0.85 similarity let a third paraphrase through for some scenarios (t = 3, not 2).
      expect(cos['authenticated-flooding']!.min).toBeLessThan(0.85);
      for (const cls of CLASSES) expect(Math.max(...placed[cls]!), cls).toBeLessThanOrEqual(2);
      // Nothing lost: every flood write past the budget waits for review.
      const pending = await mem.listReviews({ principal: tool, status: 'pending' });
      expect(pending.length).toBeGreaterThan(0);
      expect(pending.every((p) => p.reasons.join(' ').includes('flood'))).toBe(true);

      // An agent's distinct facts (one correct fact per scenario) within one hour: all stored.
      clock.advance(2n * HOUR_NS);
      for (const s of SCENARIOS) {
        const r = await mem.add(`${s.subject} is ${s.correct}.`, { principal: agent });
        expect(r.status, s.id).toBe('stored');
      }
    } finally {
      await mem.close();
    }
  }, 600_000);
});
