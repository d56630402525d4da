/**
 * Consolidation verifies its candidates only when they can change the decision (ADR 0081):
 * a write related to none of its nearest memories is an ADD whichever of them verify, so they
 * are not verified (a MAC per row, at least, on every write); a write that is the same as or
 * related to one verifies them all and decides on the verified ones, exactly as before. The
 * shortcut is judged on the records the rows' bytes decode to — a tampered row never gets a
 * decision from it that verification would not give.
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import {
  type Existing,
  type NewFact,
  addsWhateverVerifies,
  decide,
  verifiedCandidates,
} from '../../src/memory/write/consolidate.js';
import { committerOf } from '../../src/memory/log/commit.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import { withReadModel } from '../../src/memory/read/read-model.js';
import type { SearchHit, StoredEntry } from '../../src/ports/storage.js';
import { ManualClock, MemoryKeySource, SeededRandom } from '../../src/testing/doubles.js';
import { testMemory } from './helpers-memory.js';

/** One embedding for every write: each earlier memory is a candidate of the next (cosine 1). */
const SAME = (() => {
  const v = new Float32Array(384);
  v[0] = 0.6;
  v[1] = 0.8;
  return v;
})();

const UNRELATED = [
  'Ana drinks green tea every morning',
  'Ben plays chess on Thursdays',
  'The garage door code changed last spring',
  'Chen is learning the cello',
  'The quarterly report goes to finance',
];

describe('consolidation verifies candidates only when they can change the decision', () => {
  it('an unrelated write is an ADD with no candidate verified; a same or related one verifies them', async () => {
    const { mem, ledger } = await testMemory(
      withReadModel(await MemoryBackend.open()),
      'cons-verify',
    );
    const alice = (await mem.createPrincipal('user', 'alice')).id;
    const ids: string[] = [];
    for (const c of UNRELATED) {
      const r = await mem.add(c, { principal: alice, embedding: SAME });
      expect(r).toMatchObject({ status: 'stored', event: 'ADD' });
      if (r.status === 'stored') ids.push(r.memory.id);
    }
    const spy = vi.spyOn(ledger, 'verifyMany');
    try {
      // Five candidates at cosine 1, none the same or related: ADD, nothing verified.
      const add = await mem.add('Dara repaints the fence in June', {
        principal: alice,
        embedding: SAME,
      });
      expect(add).toMatchObject({ status: 'stored', event: 'ADD' });
      expect(spy).not.toHaveBeenCalled();
      // The same content: the candidates are verified and the verified one is the NOOP.
      const same = await mem.add('Ben plays chess on Thursdays', {
        principal: alice,
        embedding: SAME,
      });
      expect(spy).toHaveBeenCalled();
      expect(same).toMatchObject({ status: 'stored', event: 'NOOP' });
      if (same.status === 'stored') expect(same.memory.id).toBe(ids[1]);
      spy.mockClear();
      // A correction (negation): verified, then the UPDATE of the memory it corrects.
      const upd = await mem.add('Chen is not learning the cello', {
        principal: alice,
        embedding: SAME,
      });
      expect(spy).toHaveBeenCalled();
      expect(upd).toMatchObject({ status: 'stored', event: 'UPDATE' });
      if (upd.status === 'stored') expect(upd.memory.id).toBe(ids[3]);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('addsWhateverVerifies', () => {
  async function rows(contents: readonly string[]) {
    const storage = await MemoryBackend.open();
    const ledger = await Ledger.open({
      storage,
      keys: new MemoryKeySource(),
      clock: new ManualClock(),
      random: new SeededRandom('adds-whatever-verifies'),
    });
    const p = await ledger.registerPrincipal('user', 'u');
    const out: StoredEntry[] = [];
    for (const content of contents) {
      const r = await committerOf(ledger).write({ writer: p.id, content, tier: 'USER_OBSERVED' });
      out.push((await storage.getEntry(r.entry.id))!);
    }
    return { ledger, principal: p.id, rows: out };
  }
  const fact = (principal: string, content: string): NewFact => ({
    principal,
    content,
    kind: 'fact',
    tier: 'USER_OBSERVED',
    label: 'TRUSTED',
    embedding: SAME,
  });
  const hit = (entry: StoredEntry, i: number): SearchHit => ({ entry, vectorScore: 0.9 - i / 100 });

  it('a row whose MAC fails is never the reason for a NOOP or UPDATE: verification drops it', async () => {
    const { ledger, principal, rows: rs } = await rows(['Alice is allergic to peanuts']);
    const row = rs[0]!;
    const tampered: StoredEntry = { ...row, mac: row.mac.map((b, i) => (i === 0 ? b ^ 1 : b)) };
    const f = fact(principal, 'Alice is allergic to peanuts');
    // The bytes decode to the same content: the shortcut does not take it ...
    expect(addsWhateverVerifies(ledger, f, [hit(tampered, 0)])).toBe(false);
    // ... and verification drops the row, so the decision is ADD, as it was before.
    const verified = await verifiedCandidates(ledger, f, [hit(tampered, 0)]);
    expect(verified).toEqual([]);
    expect(decide(f, verified)).toEqual({ event: 'ADD' });
    // The genuine row: the NOOP.
    const ok = await verifiedCandidates(ledger, f, [hit(row, 0)]);
    expect(decide(f, ok)).toMatchObject({ event: 'NOOP' });
  });

  it('true only if every subset of the candidates that could verify decides a plain ADD', async () => {
    const pool = [
      'Alice is allergic to peanuts',
      'Alice is not allergic to peanuts',
      'Ben plays chess on Thursdays',
      'Ben plays chess on Fridays',
      'The garage door code changed last spring',
      'Chen is learning the cello',
      'The meeting with Dara is at 10am',
    ];
    const { ledger, principal, rows: rs } = await rows(pool);
    const facts = [
      ...pool,
      'Alice is allergic to walnuts',
      'The meeting with Dara is at 11am',
      'Ben does not play chess on Thursdays',
      'Eli bakes bread on Sundays',
      'Farah flies to Lisbon in May',
    ];
    const rand = new SeededRandom('subsets');
    let trues = 0;
    let falses = 0;
    for (let trial = 0; trial < 300; trial++) {
      const r = rand.randomBytes(8);
      const n = 1 + ((r[0] as number) % 5);
      const picked = [...new Set(Array.from({ length: n }, (_, i) => (r[i + 1] as number) % 7))];
      const hits = picked.map((k, i) => hit(rs[k]!, i));
      const f = fact(principal, facts[(r[7] as number) % facts.length] as string);
      const quick = addsWhateverVerifies(ledger, f, hits);
      if (!quick) {
        falses++;
        continue;
      }
      trues++;
      const all = await verifiedCandidates(ledger, f, hits);
      // Every subset of the verified candidates (what any verification outcome leaves).
      for (let mask = 0; mask < 1 << all.length; mask++) {
        const sub: Existing[] = all.filter((_, i) => (mask & (1 << i)) !== 0);
        expect(decide(f, sub)).toEqual({ event: 'ADD' });
      }
    }
    // Both answers occur (the property is not vacuous).
    expect(trues).toBeGreaterThan(20);
    expect(falses).toBeGreaterThan(20);
  });
});
