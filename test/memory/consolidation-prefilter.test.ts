/**
 * Consolidation without a candidate search when no candidate can matter (ADR 0084): the read
 * model keeps relation keys of the words of each held row's signed content; a write whose text
 * none of the principal's rows can be the same as or related to is a plain ADD whatever its
 * nearest memories are, so they are not searched for. The decision must be the one the full
 * path gives in every case: a differential run against a store without a read model (the full
 * path: the database search) over random writes, deletes, purges and expiries, and the index
 * kept with the rows (delete, supersede, remote changes, a tampered content column).
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { relationProbes, words } from '../../src/core/text/index.js';
import { committerOf } from '../../src/memory/log/commit.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import { type ReadModel, readModelOf, withReadModel } from '../../src/memory/read/read-model.js';
import type { RootStorage } from '../../src/ports/storage.js';
import { ManualClock, MemoryKeySource, SeededRandom } from '../../src/testing/doubles.js';
import { testMemory } from './helpers-memory.js';
import { mulberry32 } from '../../src/core/prng.js';

const D = 384;

/** A unit vector near one of a few directions (cosine ≈ 0.8 within a cluster, low across). */
function vec(r: () => number, cluster: number): Float32Array {
  const v = new Float32Array(D);
  let s = 0;
  for (let i = 0; i < D; i++) {
    v[i] = (i % 3 === cluster ? 0.09 : 0) + (r() - 0.5) * 0.08;
    s += (v[i] as number) ** 2;
  }
  const n = Math.sqrt(s);
  for (let i = 0; i < D; i++) v[i] = (v[i] as number) / n;
  return v;
}

/** The project's seeded PRNG (core/prng). */
const rng = mulberry32;

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

const TEMPLATES = [
  '{s} lives in {city}',
  '{s} moved to {city}',
  '{s} is {n} years old',
  'The meeting with {s} is at {time}',
  'The meeting with {s} is at {time} on Monday',
  '{s} likes {food}',
  "{s} doesn't like {food}",
  '{s} does not like {food}',
  '{s} is allergic to {food}',
  '{s} is not allergic to {food}',
  'My favourite colour is {color}',
  '{s} works at {org}',
  'Invoice {n} is due',
  '{s} plays chess on {day}',
  '{s} never plays chess on {day}',
];
const fill = (r: () => number): string =>
  pick(r, TEMPLATES)
    .replace('{s}', pick(r, ['Alice', 'Bob']))
    .replace('{city}', pick(r, ['Paris', 'Berlin', 'Rome']))
    .replace('{n}', pick(r, ['31', '32', '1001']))
    .replace('{time}', pick(r, ['10am', '11am']))
    .replace('{food}', pick(r, ['peanuts', 'tea']))
    .replace('{color}', pick(r, ['red', 'blue']))
    .replace('{org}', pick(r, ['Acme', 'Initech']))
    .replace('{day}', pick(r, ['Monday', 'Friday']));

type Outcome = string;

/**
 * One random history run on `storage`: writes (kinds, scopes, tiers, metadata, TTLs), deletes,
 * purges by source and clock jumps; the outcome of each step.
 */
async function history(storage: RootStorage, seed: number, steps: number): Promise<Outcome[]> {
  const clock = new ManualClock();
  const { mem } = await testMemory(storage, `prefilter-${seed}`, {}, clock);
  const alice = (await mem.createPrincipal('user', 'alice')).id;
  const bob = (await mem.createPrincipal('user', 'bob')).id;
  const op = (await mem.createPrincipal('operator', 'ops')).id;
  const r = rng(seed);
  const out: Outcome[] = [];
  const live: { id: string; principal: string }[] = [];
  for (let i = 0; i < steps; i++) {
    const x = r();
    const principal = x < 0.45 ? alice : x < 0.8 ? bob : op;
    const y = r();
    if (y < 0.08 && live.length > 0) {
      const k = Math.floor(r() * live.length);
      const victim = live[k]!;
      live.splice(k, 1);
      const res = await mem.delete(victim.id, { principal: victim.principal, reason: 'test' }).then(
        () => 'deleted',
        (e: { code?: string }) => `delete ${e.code}`,
      );
      out.push(res);
      continue;
    }
    if (y < 0.11) {
      const n = await mem.purge({ principal, source: `src:${Math.floor(r() * 4)}` });
      out.push(`purged ${n}`);
      continue;
    }
    if (y < 0.14) {
      clock.advance(3_000_000_000n);
      out.push('tick');
      continue;
    }
    const tier =
      principal === op
        ? 'OPERATOR'
        : pick(r, ['USER_VERIFIED', 'USER_OBSERVED', 'USER_OBSERVED', 'EXTERNAL_TOOL'] as const);
    const kind = pick(r, ['fact', 'fact', 'preference', 'turn']);
    const res = await mem
      .add(fill(r), {
        principal,
        tier,
        kind,
        source: `src:${Math.floor(r() * 4)}`,
        embedding: vec(r, Math.floor(r() * 2)),
        ...(r() < 0.2 ? { runId: 'r1' } : {}),
        ...(r() < 0.2 ? { agentId: 'a1' } : {}),
        ...(r() < 0.2 ? { metadata: { v: 1 } } : {}),
        ...(r() < 0.2 ? { ttlMs: 2_000 } : {}),
        verbatim: true,
      })
      .catch((e: { code?: string }) => ({ status: `error ${e.code}` }) as const);
    if (res.status === 'stored') {
      if (res.event !== 'NOOP') live.push({ id: res.memory.id, principal });
      out.push(`${res.event} ${res.memory.id}`);
    } else out.push(res.status);
  }
  return out;
}

describe('consolidation skips the candidate search when no candidate can matter', () => {
  it('an unrelated write does not search; a same or related one does, and decides as before', async () => {
    const storage = withReadModel(await MemoryBackend.open());
    const { mem } = await testMemory(storage, 'prefilter');
    const model = readModelOf(storage) as ReadModel;
    const alice = (await mem.createPrincipal('user', 'alice')).id;
    const r = rng(1);
    const e = vec(r, 0);
    for (const c of ['Bob lives in Paris', 'Ana drinks green tea every morning'])
      await mem.add(c, { principal: alice, embedding: e });
    const search = vi.spyOn(model, 'search');
    try {
      const add = await mem.add('Chen is learning the cello', { principal: alice, embedding: e });
      expect(add).toMatchObject({ status: 'stored', event: 'ADD' });
      expect(search).not.toHaveBeenCalled();
      const upd = await mem.add('Bob lives in Berlin', { principal: alice, embedding: e });
      expect(search).toHaveBeenCalledTimes(1);
      expect(upd).toMatchObject({ status: 'stored', event: 'UPDATE' });
      const noop = await mem.add('Ana drinks green tea every morning', {
        principal: alice,
        embedding: e,
      });
      expect(search).toHaveBeenCalledTimes(2);
      expect(noop).toMatchObject({ status: 'stored', event: 'NOOP' });
    } finally {
      search.mockRestore();
    }
  });

  it.each([11, 12, 13, 14])(
    'the same outcome at every step as the full path (no read model), seed %i',
    async (seed) => {
      const withModel = withReadModel(await MemoryBackend.open());
      const model = readModelOf(withModel) as ReadModel;
      const search = vi.spyOn(model, 'search');
      const a = await history(withModel, seed, 160);
      const b = await history(await MemoryBackend.open(), seed, 160);
      expect(a).toEqual(b);
      // Not vacuous: every kind of outcome occurs, and the search was skipped for some writes.
      const events = new Set(a.map((o) => o.split(' ')[0]));
      for (const ev of ['ADD', 'UPDATE', 'NOOP', 'deleted', 'purged', 'tick'])
        expect(events).toContain(ev);
      const writes = a.filter((o) => /^(ADD|UPDATE|NOOP) /.test(o)).length;
      expect(search.mock.calls.length).toBeLessThan(writes);
      expect(search.mock.calls.length).toBeGreaterThan(0);
    },
    60_000,
  );

  it('the relation keys follow the rows: delete, supersede, a remote delete', async () => {
    const storage = withReadModel(await MemoryBackend.open());
    const { mem, ledger, clock } = await testMemory(storage, 'prefilter-keys');
    const model = readModelOf(storage) as ReadModel;
    const alice = (await mem.createPrincipal('user', 'alice')).id;
    const e = vec(rng(2), 0);
    const may = (text: string): Promise<boolean | undefined> =>
      model.mayRelate(alice, relationProbes(words(text)), {
        nowNs: clock.nowNs(),
        dimensions: D,
        recordOf: (row) => ledger.unverifiedRecordOf(row),
      });
    const paris = await mem.add('Bob lives in Paris', { principal: alice, embedding: e });
    expect(await may('Bob lives in Rome')).toBe(true);
    expect(await may('Chen is learning the cello')).toBe(false);
    // Superseded: the old version's keys go, the new version's come.
    const berlin = await mem.add('Bob lives in Berlin', { principal: alice, embedding: e });
    expect(berlin).toMatchObject({ event: 'UPDATE' });
    expect(await may('Bob lives in Paris')).toBe(true); // related to "Berlin"
    if (paris.status !== 'stored' || berlin.status !== 'stored') throw new Error('not stored');
    await mem.delete(berlin.memory.id, { principal: alice, reason: 'test' });
    expect(await may('Bob lives in Rome')).toBe(false);
    // A change another process committed (the log follower's path).
    const tea = await mem.add('Ana drinks tea at 9am', { principal: alice, embedding: e });
    expect(await may('Ana drinks tea at 10am')).toBe(true);
    if (tea.status !== 'stored') throw new Error('not stored');
    const row = await storage.getEntry(tea.memory.id);
    model.applyRemote({ op: 'deleted', id: row!.id });
    expect(await may('Ana drinks tea at 10am')).toBe(false);
  });

  it('a loaded partition is indexed in batches: "cannot tell" until it is, then exact', async () => {
    const raw = await MemoryBackend.open();
    const { mem, ledger, clock } = await testMemory(raw, 'prefilter-load');
    const alice = (await mem.createPrincipal('user', 'alice')).id;
    const r = rng(4);
    for (let i = 0; i < 150; i++)
      await mem.add(`Note ${i} about the garden`, { principal: alice, embedding: vec(r, 0) });
    await mem.add('Bob lives in Paris', { principal: alice, embedding: vec(r, 0) });
    // Another model over the same rows (a restart): its partition loads 151 rows.
    const model = readModelOf(withReadModel(raw)) as ReadModel;
    const q = {
      nowNs: clock.nowNs(),
      dimensions: D,
      recordOf: (row: Parameters<typeof ledger.unverifiedRecordOf>[0]) =>
        ledger.unverifiedRecordOf(row),
    };
    const probe = (t: string): Promise<boolean | undefined> =>
      model.mayRelate(alice, relationProbes(words(t)), q);
    expect(await probe('Chen is learning the cello')).toBeUndefined(); // 64 of 151 indexed
    for (let i = 0; i < 20; i++) await new Promise((res) => setImmediate(res)); // idle turns
    expect(await probe('Chen is learning the cello')).toBe(false);
    expect(await probe('Bob lives in Berlin')).toBe(true);
  });

  it("keys come from the signed content, not the row's content column", async () => {
    const raw = await MemoryBackend.open();
    const clock = new ManualClock();
    const ledger = await Ledger.open({
      storage: raw,
      keys: new MemoryKeySource(),
      clock,
      random: new SeededRandom('prefilter-column'),
    });
    const p = await ledger.registerPrincipal('user', 'u');
    const w = await committerOf(ledger).write(
      { writer: p.id, content: 'Bob lives in Paris', tier: 'USER_OBSERVED' },
      { embedding: vec(rng(3), 0) },
    );
    const row = (await raw.getEntry(w.entry.id))!;
    // The same row in another store, its plaintext column rewritten at rest.
    const other = withReadModel(await MemoryBackend.open());
    const model = readModelOf(other) as ReadModel;
    const q = {
      nowNs: clock.nowNs(),
      dimensions: D,
      recordOf: (s: Parameters<typeof ledger.unverifiedRecordOf>[0]) =>
        ledger.unverifiedRecordOf(s),
    };
    // Not loaded yet: the synchronous form cannot answer (ADR 0088) and says so.
    expect(model.mayRelateNow(p.id, relationProbes(words('x')), q)).toBeNull();
    expect(await model.mayRelate(p.id, relationProbes(words('x')), q)).toBe(false); // loaded
    await other.putEntry({ ...row, content: 'Quarterly report goes to finance' });
    expect(await model.mayRelate(p.id, relationProbes(words('Bob lives in Rome')), q)).toBe(true);
    expect(
      await model.mayRelate(p.id, relationProbes(words('Quarterly report goes to finance')), q),
    ).toBe(false);
    // Loaded: it answers as `mayRelate` does, without a promise.
    expect(model.mayRelateNow(p.id, relationProbes(words('Bob lives in Rome')), q)).toBe(true);
    expect(
      model.mayRelateNow(p.id, relationProbes(words('Quarterly report goes to finance')), q),
    ).toBe(false);
    model.setServing(false);
    expect(model.mayRelateNow(p.id, relationProbes(words('Bob lives in Rome')), q)).toBeUndefined();
  });
});
