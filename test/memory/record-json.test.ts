/**
 * The cached JSON of search records (records.ts `memoryRecordJson`, server `searchJson`): the
 * text is always exactly JSON.stringify of what the caller holds — for cached records, for
 * records changed after they were made, for records of the same bytes under another entry or
 * leaf, and across principals (no cached text is ever another record's).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testMemory } from './helpers-memory.js';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import type { MemoryRecord, SearchResult } from '../../src/memory/api.js';
import { retentionConfig } from '../../src/memory/config.js';
import { withReadModel } from '../../src/memory/read/read-model.js';
import { memoryRecordJson, toMemoryRecord } from '../../src/memory/read/records.js';
import { searchJson } from '../../src/server/routes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup() {
  const storage = withReadModel(await MemoryBackend.open());
  const { mem, ledger, clock } = await testMemory(storage, 'record-json', {
    retention: retentionConfig({ ttlMs: { USER_OBSERVED: 3_600_000 } }),
  });
  cleanups.push(() => mem.close());
  const alice = (await mem.createPrincipal('user', 'alice')).id;
  const bob = (await mem.createPrincipal('user', 'bob')).id;
  const ops = (await mem.createPrincipal('operator', 'deploy')).id;
  return { mem, ledger, storage, clock, alice, bob, ops };
}

const plain = (r: SearchResult): string =>
  JSON.stringify({ results: r.results, context: r.context, seal: r.seal, dropped: r.dropped });

describe('cached search JSON', () => {
  it('is JSON.stringify of the result, search after search, with sources, supersedes, expiries and OPERATOR rows', async () => {
    const s = await setup();
    const first = await s.mem.add('the budget review is on Monday', {
      principal: s.alice,
      source: 'chat:1',
    });
    if (first.status !== 'stored') throw new Error(first.status);
    await s.mem.update(first.memory.id, 'the budget review moved to Tuesday', {
      principal: s.alice,
    });
    await s.mem.add('the budget has a "quoted" \\ part\nand ünïcödé 🚀', { principal: s.alice });
    await s.mem.add('operators say the budget is frozen', { principal: s.ops, tier: 'OPERATOR' });
    await s.mem.add('bob keeps his own budget', { principal: s.bob });
    for (let i = 0; i < 3; i++) {
      for (const p of [s.alice, s.bob]) {
        const r = await s.mem.search('budget', { principal: p, limit: 10 });
        expect(r.results.length).toBeGreaterThan(0);
        expect(searchJson(r)).toBe(plain(r));
        for (const h of r.results)
          expect(memoryRecordJson(h.memory)).toBe(JSON.stringify(h.memory));
        // Each principal's answer holds only what it may see (its own and OPERATOR rows).
        for (const h of r.results) expect([p, s.ops]).toContain(h.memory.ns);
      }
      s.clock.advance(120_000_000_000n); // renew-on-use moves the expiry: new expiresAt, same cached parts
    }
    const kinds = (await s.mem.search('budget', { principal: s.alice, limit: 10 })).results.map(
      (h) => h.memory,
    );
    expect(kinds.some((m) => m.source !== undefined)).toBe(true);
    expect(kinds.some((m) => m.supersedes !== undefined)).toBe(true);
    expect(kinds.some((m) => m.expiresAt !== undefined)).toBe(true);
    expect(kinds.some((m) => m.tier === 'OPERATOR')).toBe(true);
  });

  it('follows any change to a record after it was made (values, keys, key order, arrays)', async () => {
    const s = await setup();
    await s.mem.add('a note about the move', { principal: s.alice, source: 'chat:9' });
    const fresh = async (): Promise<MemoryRecord> => {
      const r = await s.mem.search('move', { principal: s.alice, limit: 1 });
      return r.results[0]!.memory;
    };
    const mutations: ((m: Record<string, unknown>) => void)[] = [
      (m) => (m.content = 'something else'),
      (m) => (m.bytes = 'AAAA'),
      (m) => (m.leafIndex = 99),
      (m) => (m.expiresAt = '2000-01-01T00:00:00.000Z'),
      (m) => delete m.expiresAt,
      (m) => delete m.source,
      (m) => (m.extra = 1),
      (m) => (m.parents = ['x']),
      (m) => (m.parents as string[]).push('y'), // the entry's own array, mutated in place
      (m) => {
        const c = m.content;
        delete m.content;
        m.content = c; // same values, another key order
      },
      (m) => (m.toJSON = () => 'custom'),
    ];
    for (const mutate of mutations) {
      const m = (await fresh()) as unknown as Record<string, unknown>;
      expect(memoryRecordJson(m as unknown as MemoryRecord)).toBe(JSON.stringify(m));
      mutate(m);
      expect(memoryRecordJson(m as unknown as MemoryRecord)).toBe(JSON.stringify(m));
      // The in-place push changed the entry's array: later records of it still come out right.
      const again = await fresh();
      expect(memoryRecordJson(again)).toBe(JSON.stringify(again));
    }
    // A copy is not a record toMemoryRecord made: stringified as it is.
    const copy = { ...(await fresh()), content: 'copy' };
    expect(memoryRecordJson(copy)).toBe(JSON.stringify(copy));
  });

  it('never reuses parts for another entry object, leaf index or changed entry values', async () => {
    const s = await setup();
    const r = await s.mem.add('a note to re-record', { principal: s.alice });
    if (r.status !== 'stored') throw new Error(r.status);
    const stored = (await s.storage.asPrincipal(s.alice).getEntry(r.memory.id))!;
    const v = await s.ledger.verifyStored(stored);
    if (!v.ok) throw new Error(v.code);
    const a = toMemoryRecord(v.entry, v.leafIndex, stored.bytes, 5n);
    const b = toMemoryRecord(v.entry, v.leafIndex + 7, stored.bytes, 6n);
    expect(b.leafIndex).toBe(v.leafIndex + 7);
    expect(memoryRecordJson(b)).toBe(JSON.stringify(b));
    const other = { ...v.entry, content: 'a different entry object, same bytes' };
    const c = toMemoryRecord(other, v.leafIndex, stored.bytes);
    expect(c.content).toBe('a different entry object, same bytes');
    expect(memoryRecordJson(c)).toBe(JSON.stringify(c));
    expect(memoryRecordJson(a)).toBe(JSON.stringify(a));
    (v.entry as { content: string }).content = 'the decoded entry changed in place';
    const d = toMemoryRecord(v.entry, v.leafIndex, stored.bytes);
    expect(d.content).toBe('the decoded entry changed in place');
    expect(memoryRecordJson(d)).toBe(JSON.stringify(d));
    // Values derived from the entry (times, leaf data) follow it too.
    (v.entry as { ts: bigint }).ts = 1_000_000_000_000_000_000n;
    const e = toMemoryRecord(v.entry, v.leafIndex, stored.bytes);
    expect(e.createdAtNs).toBe('1000000000000000000');
    expect(e.createdAt).toBe('2001-09-09T01:46:40.000Z');
    expect(memoryRecordJson(e)).toBe(JSON.stringify(e));
  });

  it("a result that is not the search path's plain hits is stringified as it is", async () => {
    const s = await setup();
    await s.mem.add('plain hits only', { principal: s.alice });
    const r = await s.mem.search('plain', { principal: s.alice, limit: 5 });
    const odd: SearchResult = {
      ...r,
      results: [
        { ...r.results[0]!, score: Number.NaN },
        { untrusted: false, score: 1, memory: r.results[0]!.memory },
        Object.assign(Object.create({ inherited: 1 }) as object, r.results[0]!) as never,
      ],
    };
    expect(searchJson(odd)).toBe(plain(odd));
  });
});
