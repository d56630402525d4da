/**
 * The investigation listing (issue 24, console part) on the real ledger over PGlite and the
 * in-memory backend: an operator lists every principal's entries newest first, in every state,
 * filtered, in keyset pages, each re-verified — a tampered row is listed with its reason code,
 * never dropped — and each call is audited; anyone else gets its own scope only. `getAll`'s
 * failing rows are named instead of vanishing.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import type { InvestigateOptions, InvestigationRow } from '../../src/memory/api.js';
import type { Memory } from '../../src/memory/memory.js';
import type { RootStorage, StoredEntry } from '../../src/ports/storage.js';
import type { ManualClock } from '../../src/testing/doubles.js';
import { outcome } from '../helpers/outcome.js';
import { testMemory } from './helpers-memory.js';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

interface World {
  mem: Memory;
  storage: RootStorage;
  clock: ManualClock;
  alice: string;
  bob: string;
  ops: string;
  /** Entry ids by name, in write order. */
  e: Record<string, string>;
  /** Alter a stored row in place (as whoever holds the database). */
  tamper(id: string, sql: 'bytes' | 'kind'): Promise<void>;
}

async function world(backend: 'pglite' | 'memory'): Promise<World> {
  let db: PGlite | undefined;
  let storage: RootStorage;
  if (backend === 'pglite') {
    db = await PGlite.create({ extensions: { vector } });
    storage = await PgliteBackend.open({ instance: db });
  } else storage = await MemoryBackend.open();
  const { mem, clock } = await testMemory(storage, `investigate-${backend}`);
  cleanups.push(() => mem.close());
  const alice = (await mem.createPrincipal('user', 'alice')).id;
  const bob = (await mem.createPrincipal('user', 'bob')).id;
  const ops = (await mem.createPrincipal('operator', 'security')).id;
  const e: Record<string, string> = {};
  const add = async (
    name: string,
    content: string,
    principal: string,
    extra: Record<string, unknown> = {},
  ) => {
    clock.advance(1_000_000_000n);
    const r = await mem.add(content, { principal, tier: 'USER_VERIFIED', ...extra } as never);
    if (r.status !== 'stored') throw new Error(`${name} not stored: ${r.status}`);
    e[name] = r.memory.id;
  };
  await add('a1', "Alice's manager is Dana Okafor", alice, { source: 'chat:s1:t1' });
  await add('b1', 'Bob prefers window seats', bob, { kind: 'preference' });
  await add('a2', 'The quarterly report is due on the 14th', alice, {
    tier: 'EXTERNAL_WEB',
    source: 'https://intranet.example.test/cal',
  });
  await add('a3', 'Alice lives in Lisbon', alice, { ttlMs: 5000 });
  await add('b2', 'Bob met the Quarterly Auditor', bob);
  await add('a4', 'Alice drinks tea', alice);
  await add('op1', 'Operator note: rotate keys monthly', ops, { tier: 'OPERATOR' });
  await add('a5', 'Alice moved her report deadline', alice);
  clock.advance(1_000_000_000n);
  const upd = await mem.update(e.a5!, 'Alice moved the report deadline to the 12th', {
    principal: alice,
    reason: 'typo',
  });
  // The new version's own row (issue 20: `id` is the memory's stable id, the first version's).
  e.a5v2 = upd.versionId;
  await mem.delete(e.a4!, { principal: alice, reason: 'wrong' });
  clock.advance(10_000_000_000n); // a3 expired
  const tamper = async (id: string, what: 'bytes' | 'kind'): Promise<void> => {
    if (db !== undefined) {
      await db.query(
        what === 'bytes'
          ? `UPDATE entries SET bytes = overlay(bytes placing '\\x58'::bytea from 40 for 1) WHERE id = $1`
          : `UPDATE entries SET kind = 'preference' WHERE id = $1`,
        [id],
      );
      return;
    }
    // The in-memory store's committed row, altered in place.
    const s = (storage as unknown as { sh: { s: { entries: Map<string, StoredEntry> } } }).sh.s;
    const row = s.entries.get(id)!;
    if (what === 'bytes') {
      const b = row.bytes.slice();
      b[39] = 0x58;
      s.entries.set(id, { ...row, bytes: b });
    } else s.entries.set(id, { ...row, kind: 'preference' });
  };
  return { mem, storage, clock, alice, bob, ops, e, tamper };
}

const ids = (rows: readonly InvestigationRow[]): string[] => rows.map((r) => r.id);

async function everyPage(mem: Memory, o: InvestigateOptions): Promise<InvestigationRow[]> {
  const out: InvestigationRow[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 50; i++) {
    const p = await mem.investigate({ ...o, ...(cursor === undefined ? {} : { cursor }) });
    out.push(...p.rows);
    if (p.nextCursor === undefined) return out;
    cursor = p.nextCursor;
  }
  throw new Error('paging did not end');
}

describe.each(['pglite', 'memory'] as const)('investigation listing (%s)', (backend) => {
  // One world for the tests that only read (a PGlite world costs seconds); the others make their own.
  let shared: Promise<World> | undefined;
  const readOnly = (): Promise<World> => (shared ??= world(backend));
  const operatorAudits = async (w: World): Promise<number> =>
    (await w.storage.listAudit({ limit: 1000, actionPrefix: 'operator.' })).length;

  it(
    'an operator sees every principal newest first, in every state, paged by cursor, and each call is audited',
    { timeout: 180_000 },
    async () => {
      const w = await world(backend);
      const all = await w.mem.investigate({ principal: w.ops, limit: 200 });
      expect(all.scope).toBe('all');
      expect(all.nextCursor).toBeUndefined();
      const newestFirst = ['a5v2', 'a5', 'op1', 'a4', 'b2', 'a3', 'a2', 'b1', 'a1'].map(
        (n) => w.e[n],
      );
      expect(ids(all.rows)).toEqual(newestFirst);
      const status = Object.fromEntries(all.rows.map((r) => [r.id, r.status]));
      expect(status[w.e.a4!]).toBe('deleted');
      expect(status[w.e.a5!]).toBe('superseded');
      expect(status[w.e.a3!]).toBe('expired');
      expect(status[w.e.b2!]).toBe('live');
      // Each row is its version's own record (a memory's `id` is its stable id, issue 20).
      expect(all.rows.every((r) => r.verified && r.memory?.versionId === r.id)).toBe(true);
      // Pages of 2 concatenate to the same list, none repeated.
      expect(ids(await everyPage(w.mem, { principal: w.ops, limit: 2 }))).toEqual(newestFirst);
      // A write between two pages does not shift the next page.
      const first = await w.mem.investigate({ principal: w.ops, limit: 3 });
      await w.mem.add('a late write', { principal: w.bob, tier: 'USER_VERIFIED' });
      const second = await w.mem.investigate({
        principal: w.ops,
        limit: 3,
        cursor: first.nextCursor!,
      });
      expect([...ids(first.rows), ...ids(second.rows)]).toEqual(newestFirst.slice(0, 6));
      // Audited, with the filters used.
      const audit = await w.storage.listAudit({ limit: 100, actionPrefix: 'operator.investigate' });
      expect(audit.length).toBe(8); // all, 5 pages of 2, first, second
      expect(audit.every((a) => a.actor === w.ops)).toBe(true);
      expect(audit.at(-1)!.details.filters).toEqual({ limit: 3, cursor: first.nextCursor });
    },
  );

  it(
    'filters: owner, tier, kind, source, label, state, text, time range — in the store and on the signed record',
    { timeout: 180_000 },
    async () => {
      const w = await readOnly();
      const q = async (o: Omit<InvestigateOptions, 'principal'>): Promise<string[]> =>
        ids((await w.mem.investigate({ principal: w.ops, limit: 200, ...o })).rows);
      const E = w.e as Record<string, string>;
      expect(await q({ owner: w.bob })).toEqual([E.b2, E.b1]);
      expect(await q({ tiers: ['EXTERNAL_WEB', 'OPERATOR'] })).toEqual([E.op1, E.a2]);
      expect(await q({ kinds: ['preference'] })).toEqual([E.b1]);
      expect(await q({ source: 'chat:s1:t1' })).toEqual([E.a1]);
      expect(await q({ labels: ['EXTERNAL'] })).toEqual([E.a2]);
      expect(await q({ statuses: ['deleted', 'superseded'] })).toEqual([E.a5, E.a4]);
      expect(await q({ statuses: ['expired'] })).toEqual([E.a3]);
      expect(await q({ query: 'QUARTERLY' })).toEqual([E.b2, E.a2]);
      expect(await q({ query: 'quarterly auditor', owner: w.bob })).toEqual([E.b2]);
      const at = (await w.mem.investigate({ principal: w.ops, owner: w.bob, limit: 1 })).rows[0]!
        .memory!.createdAt;
      expect(await q({ from: at })).toEqual([E.a5v2, E.a5, E.op1, E.a4, E.b2]);
      expect(await q({ to: at, owner: w.bob })).toEqual([E.b1]);
      // A label filter with a small page still pages through every match.
      expect(
        ids(await everyPage(w.mem, { principal: w.ops, labels: ['TRUSTED'], limit: 1 })),
      ).toEqual((await q({})).filter((id) => id !== E.a2));
      // Semantic: live entries ranked by meaning, one page.
      const sem = await w.mem.investigate({
        principal: w.ops,
        query: 'Bob prefers window seats',
        semantic: true,
        limit: 3,
      });
      expect(sem.rows[0]!.id).toBe(E.b1);
      expect(sem.rows[0]!.score).toBeGreaterThan(0.99);
      expect(sem.nextCursor).toBeUndefined();
    },
  );

  it(
    'a tampered row is listed with its reason — to the operator with what it claims, to its owner without — and getAll names it',
    { timeout: 180_000 },
    async () => {
      const w = await world(backend);
      await w.tamper(w.e.a1!, 'bytes');
      const page = await w.mem.investigate({ principal: w.ops, limit: 200 });
      const bad = page.rows.find((r) => r.id === w.e.a1)!;
      expect(bad).toMatchObject({
        verified: false,
        failure: { id: w.e.a1, code: 'MAC_INVALID', stage: 'mac' },
      });
      expect(bad.memory).toBeUndefined();
      expect(bad.stored).toMatchObject({
        owner: w.alice,
        tier: 'USER_VERIFIED',
        source: 'chat:s1:t1',
      });
      expect(page.rows.filter((r) => !r.verified).map((r) => r.id)).toEqual([w.e.a1]);
      const audit = await w.storage.listAudit({ limit: 10, actionPrefix: 'operator.investigate' });
      expect(audit.at(-1)!.details.unverified).toEqual([w.e.a1]);
      // The owner sees the failure too, but not the unverified columns.
      const own = await w.mem.investigate({ principal: w.alice, limit: 200 });
      const mine = own.rows.find((r) => r.id === w.e.a1)!;
      expect(mine).toMatchObject({ verified: false, failure: { code: 'MAC_INVALID' } });
      expect(mine.stored).toBeUndefined();
      // getAll used to drop it without a word: now it is named with its code.
      const listed = await w.mem.getAllChecked({ principal: w.alice });
      expect(listed.unverified).toEqual([{ id: w.e.a1, code: 'MAC_INVALID', stage: 'mac' }]);
      expect(listed.memories.map((m) => m.id)).not.toContain(w.e.a1);
      expect((await w.mem.getAll({ principal: w.alice })).map((m) => m.id)).toEqual(
        listed.memories.map((m) => m.id),
      );
      // The entry view of the operator shows the failure, no proof.
      const opened = await w.mem.investigateEntry(w.e.a1!, { principal: w.ops });
      expect(opened.row.failure?.code).toBe('MAC_INVALID');
      expect(opened.proof).toBeUndefined();
    },
  );

  it(
    'a stored column edited so a filter matches is a failure (columns), not a result',
    { timeout: 180_000 },
    async () => {
      const w = await world(backend);
      await w.tamper(w.e.a2!, 'kind');
      const rows = (await w.mem.investigate({ principal: w.ops, kinds: ['preference'], limit: 50 }))
        .rows;
      expect(rows.map((r) => [r.id, r.verified, r.failure?.stage])).toEqual([
        [w.e.a2, false, 'columns'],
        [w.e.b1, true, undefined],
      ]);
    },
  );

  it(
    'anyone else: its own scope only, another owner is AUTH_FORBIDDEN, not audited',
    { timeout: 180_000 },
    async () => {
      const w = await readOnly();
      const before = await operatorAudits(w);
      const own = await w.mem.investigate({ principal: w.alice, limit: 200 });
      expect(own.scope).toBe('own');
      expect(ids(own.rows)).toEqual(
        ['a5v2', 'a5', 'op1', 'a4', 'a3', 'a2', 'a1'].map((n) => w.e[n]),
      );
      expect(await outcome(w.mem.investigate({ principal: w.alice, owner: w.bob }))).toBe(
        'AUTH_FORBIDDEN',
      );
      expect(
        ids((await w.mem.investigate({ principal: w.alice, owner: w.alice })).rows),
      ).not.toContain(w.e.op1);
      expect(ids((await w.mem.investigate({ principal: w.alice, query: 'Bob' })).rows)).toEqual([]);
      const sem = await w.mem.investigate({
        principal: w.alice,
        query: 'Bob prefers window seats',
        semantic: true,
      });
      expect(sem.rows.every((r) => r.memory?.ns === w.alice || r.memory?.tier === 'OPERATOR')).toBe(
        true,
      );
      expect(await outcome(w.mem.investigateEntry(w.e.b1!, { principal: w.alice }))).toBe(
        'STORAGE_NOT_FOUND',
      );
      expect(await operatorAudits(w)).toBe(before);
    },
  );

  it(
    "the operator opens another principal's entry (after approval it lives in the user's scope)",
    { timeout: 180_000 },
    async () => {
      const w = await readOnly();
      // The principal-scoped read is a 404 for the operator: the reason the console had a dead link.
      expect(await w.mem.get(w.e.a5v2!, { principal: w.ops })).toBeUndefined();
      const opened = await w.mem.investigateEntry(w.e.a5v2!, { principal: w.ops });
      expect(opened.scope).toBe('all');
      expect(opened.row).toMatchObject({
        verified: true,
        status: 'live',
        memory: { id: w.e.a5, versionId: w.e.a5v2, ns: w.alice },
      });
      expect(opened.proof?.leafIndex).toBe(opened.row.leafIndex);
      expect(opened.lineage?.root).toBe(w.e.a5v2);
      // …with its history, as its owner reads it (issue 24: the console could show none for
      // another principal's entry; the owner-scoped history route is a 404 for the operator).
      expect(await outcome(w.mem.history(w.e.a5v2!, { principal: w.ops }))).toBe(
        'STORAGE_NOT_FOUND',
      );
      expect(opened.history).toEqual(await w.mem.history(w.e.a5!, { principal: w.alice }));
      expect(opened.history?.map((e) => e.action).slice(0, 2)).toEqual(['add', 'update']);
      const audit = await w.storage.listAudit({
        limit: 1000,
        actionPrefix: 'operator.investigate',
      });
      expect(audit.at(-1)).toMatchObject({ actor: w.ops, subject: w.e.a5v2 });
      expect(await outcome(w.mem.investigateEntry('no-such-entry', { principal: w.ops }))).toBe(
        'STORAGE_NOT_FOUND',
      );
    },
  );

  it('bad input is a coded error and neither reads nor audits', { timeout: 180_000 }, async () => {
    const w = await readOnly();
    const before = await operatorAudits(w);
    for (const bad of [
      { limit: 0 },
      { limit: 201 },
      { cursor: 'abc' },
      { cursor: '-1' },
      { from: 'yesterday' },
      { query: '' },
      { query: 'a\0b' },
      { source: 'x\0' },
      { semantic: true },
      { semantic: true, query: 'x', cursor: '3' },
      { statuses: ['gone'] },
    ] as Partial<InvestigateOptions>[]) {
      expect(
        await outcome(w.mem.investigate({ principal: w.ops, ...bad } as InvestigateOptions)),
        JSON.stringify(bad),
      ).toBe('INPUT_INVALID');
    }
    expect(await outcome(w.mem.investigate({ principal: '' }))).toBe('AUTH_REQUIRED');
    expect(await operatorAudits(w)).toBe(before);
  });
});
