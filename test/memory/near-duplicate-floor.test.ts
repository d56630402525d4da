/**
 * The near-duplicate check asks the read model only for hits that can reach its threshold
 * (`minScore` = threshold − `indexScoreSlack`): the verdict must be the one of the unfloored
 * search it replaced — the slack bounds |index score − cosine| (tested on its own), and the
 * verdicts are compared on entries built to sit within float32 rounding of the threshold.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { testMemory } from './helpers-memory.js';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { cosine } from '../../src/core/smsr/near-duplicate.js';
import { createVectorIndex } from '../../src/core/vector/index.js';
import { retentionConfig } from '../../src/memory/config.js';
import { type ReadModel, readModelOf, withReadModel } from '../../src/memory/read/read-model.js';
import { findNearDuplicate, indexScoreSlack } from '../../src/memory/write/write.js';
import { rng } from '../core/vector/reference.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const unit = (r: () => number, d: number): Float64Array => {
  const v = new Float64Array(d);
  let n = 0;
  for (let i = 0; i < d; i++) {
    v[i] = r() * 2 - 1;
    n += (v[i] as number) ** 2;
  }
  for (let i = 0; i < d; i++) v[i] = (v[i] as number) / Math.sqrt(n);
  return v;
};

/** A float32 vector at cosine ≈ c to unit `q` (plus `scale`: stored vectors need not be unit). */
function at(q: Float64Array, c: number, r: () => number, scale = 1): Float32Array {
  const d = q.length;
  const n = unit(r, d);
  let dot = 0;
  for (let i = 0; i < d; i++) dot += (n[i] as number) * (q[i] as number);
  let nn = 0;
  for (let i = 0; i < d; i++) {
    n[i] = (n[i] as number) - dot * (q[i] as number);
    nn += (n[i] as number) ** 2;
  }
  const s = Math.sqrt(Math.max(0, 1 - c * c)) / Math.sqrt(nn);
  return Float32Array.from(q, (x, i) => scale * (c * x + s * (n[i] as number)));
}

describe('indexScoreSlack', () => {
  it('bounds |vector index score − cosine| (SIMD and JavaScript kernels, any width, unnormalised input, near-parallel pairs)', () => {
    let worst = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.constantFrom(3, 16, 384, 1000, 4096),
        fc.double({ min: -1, max: 1, noNaN: true }),
        fc.constantFrom(1, 1e-3, 37.5),
        fc.boolean(),
        (seed, d, c, scale, simd) => {
          const r = rng(seed);
          const q = unit(r, d);
          const qf = Float32Array.from(q, (x) => x * scale);
          const ix = createVectorIndex(d, simd ? {} : { simd: false });
          const rows = [
            at(q, c, r, scale),
            at(q, 0.97, r),
            at(q, 0.9999, r, 1 / scale),
            at(q, -c, r),
          ];
          rows.forEach((v, k) => ix.add(k, v));
          for (const h of ix.search(qf, rows.length)) {
            const err = Math.abs(h.score - cosine(qf, rows[h.key] as Float32Array));
            worst = Math.max(worst, err / indexScoreSlack(d));
            expect(err).toBeLessThanOrEqual(indexScoreSlack(d));
          }
        },
      ),
      { numRuns: 300 },
    );
    // The bound is not loose to the point of pruning nothing useful either.
    expect(indexScoreSlack(384)).toBeLessThan(1e-4);
    expect(worst).toBeGreaterThan(0);
  });
});

describe('findNearDuplicate with the floored model search', () => {
  it('gives the verdict of the unfloored search: entries within float32 rounding of the threshold, more than five above it, deleted ones, another principal', async () => {
    const storage = withReadModel(await MemoryBackend.open());
    const { mem, ledger, clock } = await testMemory(storage, 'near-dup-floor', {
      retention: retentionConfig({ nearDuplicateThreshold: null }),
    });
    cleanups.push(() => mem.close());
    const model = readModelOf(storage) as ReadModel;
    const alice = (await mem.createPrincipal('user', 'alice')).id;
    const bob = (await mem.createPrincipal('user', 'bob')).id;
    const d = 384;
    const r = rng(77);
    const view = storage.asPrincipal(alice);

    /** What findNearDuplicate answered before the floor: the unfloored top 5, then the same steps. */
    const reference = async (embedding: Float32Array, threshold: number) => {
      const hits = (await model.search(alice, { embedding, nowNs: clock.nowNs(), limit: 5 })) ?? [];
      const scored = hits
        .map((h) => ({
          entry: h.entry,
          similarity: cosine(embedding, h.entry.embedding as Float32Array),
        }))
        .filter((h) => h.similarity >= threshold && h.entry.owner === alice)
        .sort((a, b) => b.similarity - a.similarity);
      for (const h of scored) {
        if (h.entry.deleted === true || h.entry.supersededBy !== undefined) continue;
        const v = await ledger.verifyStored(h.entry);
        if (v.ok && v.entry.ns === alice) return { id: h.entry.id, similarity: h.similarity };
      }
      return undefined;
    };

    let found = 0;
    let none = 0;
    for (let round = 0; round < 12; round++) {
      const q = unit(r, d);
      const threshold = round % 3 === 0 ? 0.97 : 0.5 + r() * 0.49;
      // Cosines straddling the threshold by a few float32 ulps, a few clearly above / below.
      // Every other round only the former: the verdict then hangs on the float32 rounding.
      const near = [-3e-7, -1e-7, -2e-8, 0, 2e-8, 1e-7, 3e-7];
      const deltas = round % 2 === 0 ? [...near, -1e-4, 1e-4, -0.2] : near;
      const ids: string[] = [];
      for (const [k, delta] of deltas.entries()) {
        const c = Math.min(1, threshold + delta);
        const v = at(q, c, r, k % 2 === 0 ? 1 : 3);
        const res = await mem.add(`alice ${round}-${k}`, {
          principal: alice,
          embedding: v,
          verbatim: true,
        });
        if (res.status === 'stored') ids.push(res.memory.id);
        // Bob's copy never counts for Alice.
        if (k === 3)
          await mem.add(`bob ${round}-${k}`, { principal: bob, embedding: v, verbatim: true });
      }
      if (round % 4 === 1 && ids[4] !== undefined)
        await mem.delete(ids[4], { principal: alice, reason: 'x' });
      // The query itself, a copy of it at another scale, and one near nothing stored.
      for (const probe of [q, at(q, 1, r, 2), unit(r, d)]) {
        const embedding = Float32Array.from(probe);
        // Thresholds at exactly the cosines of the nearest entries too: the verdict then hangs
        // on a hit whose index score may round either side of its cosine.
        const near =
          (await model.search(alice, { embedding, nowNs: clock.nowNs(), limit: 5 })) ?? [];
        const cosines = near.map((h) => cosine(embedding, h.entry.embedding as Float32Array));
        for (const th of [threshold, threshold + 1e-7, threshold - 1e-7, ...cosines]) {
          const want = await reference(embedding, th);
          const got = await findNearDuplicate(view, ledger, {
            principal: alice,
            embedding,
            threshold: th,
            nowNs: clock.nowNs(),
            model,
          });
          expect(got).toEqual(want);
          if (want === undefined) none++;
          else found++;
        }
      }
    }
    expect(found).toBeGreaterThan(0);
    expect(none).toBeGreaterThan(0);
  });
});
