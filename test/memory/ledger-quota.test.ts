/**
 * The daily write quota is consumed inside the ledger's group-commit transaction (ADR 0021),
 * on every backend: a batch mixing admitted and refused writes commits exactly the admitted
 * ones, in queue order; a refused write leaves no leaf, no entry and no count; a write refused
 * for a later reason counts nothing; and on one PostgreSQL server two Memory instances on two
 * pools (what two `memwarden serve` processes are) racing one principal's last slots admit
 * exactly the limit between them.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DeterministicEmbedder } from '../../src/adapters/embeddings/deterministic.js';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { PgBackend } from '../../src/adapters/pg/index.js';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import { systemClock, systemRandom } from '../../src/adapters/system/index.js';
import { isMemwardenError } from '../../src/core/errors.js';
import { dayKey, retentionConfig } from '../../src/memory/config.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import type { Receipt } from '../../src/memory/log/commit.js';
import { Memory } from '../../src/memory/memory.js';
import { auditStore } from '../../src/memory/log/store-audit.js';
import type { RootStorage } from '../../src/ports/storage.js';
import { MemoryKeySource } from '../../src/testing/doubles.js';
import { committerOf } from '../../src/memory/log/commit.js';

const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
const schemas: string[] = [];
const closers: (() => Promise<void>)[] = [];

afterAll(async () => {
  while (closers.length > 0) await closers.pop()!();
  if (url === undefined || schemas.length === 0) return;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  for (const s of schemas) await c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await c.end();
});

function pgSchema(tag: string): string {
  const s = `mwq_${tag}_${process.pid}_${Date.now().toString(36)}`;
  schemas.push(s);
  return s;
}

const backends: Record<string, (() => Promise<RootStorage>) | undefined> = {
  memory: () => MemoryBackend.open(),
  pglite: () => PgliteBackend.open({}),
  postgres:
    url === undefined
      ? undefined
      : () => PgBackend.open({ connectionString: url, schema: pgSchema('b'), maxConnections: 4 }),
};

/** The outcome of a write: its receipt or its error code. */
async function outcome(p: Promise<Receipt>): Promise<Receipt | string> {
  try {
    return await p;
  } catch (e) {
    return isMemwardenError(e) ? e.code : `RAW:${String(e)}`;
  }
}

const emb = (i: number): Float32Array => {
  const v = new Float32Array(384).fill(0.01);
  v[i % 384] = 1;
  return v;
};

for (const [name, open] of Object.entries(backends)) {
  describe.skipIf(open === undefined)(`quota in the group commit on ${name}`, () => {
    it(
      'a batch mixing admitted and refused writes commits exactly the admitted ones, in order',
      { timeout: 120_000 },
      async () => {
        const storage = await open!();
        const ledger = await Ledger.open({
          storage,
          keys: new MemoryKeySource(),
          clock: systemClock,
          random: systemRandom,
        });
        closers.push(() => ledger.close());
        const a = await ledger.registerPrincipal('user', 'a');
        const b = await ledger.registerPrincipal('user', 'b');
        const day = dayKey(systemClock.nowNs());
        // a has 2 of 6 used today.
        for (let i = 0; i < 2; i++) await storage.consumeQuota(a.id, 'USER_OBSERVED', day, 6);
        // Resolve both writers first (a cached writer queues its write synchronously after
        // signing, so the calls below reach the queue in call order).
        await committerOf(ledger).write({ writer: a.id, content: 'warm a', tier: 'USER_OBSERVED' });
        await committerOf(ledger).write({ writer: b.id, content: 'warm b', tier: 'USER_OBSERVED' });
        const before = await storage.logSize();
        // Queued together (the group commit takes them in few batches): 10 writes of a against a
        // limit of 6, 8 of b against 100, interleaved, and 3 of a in another tier (own row).
        const calls: { who: 'a' | 'b' | 'av'; p: Promise<Receipt | string> }[] = [];
        for (let i = 0; i < 10; i++) {
          calls.push({
            who: 'a',
            p: outcome(
              committerOf(ledger).write(
                { writer: a.id, content: `a ${i}`, tier: 'USER_OBSERVED' },
                { embedding: emb(i), quota: { dayKey: day, limit: 6 } },
              ),
            ),
          });
          if (i < 8)
            calls.push({
              who: 'b',
              p: outcome(
                committerOf(ledger).write(
                  { writer: b.id, content: `b ${i}`, tier: 'USER_OBSERVED' },
                  { embedding: emb(100 + i), quota: { dayKey: day, limit: 100 } },
                ),
              ),
            });
          if (i < 3)
            calls.push({
              who: 'av',
              p: outcome(
                committerOf(ledger).write(
                  { writer: a.id, content: `av ${i}`, tier: 'USER_VERIFIED' },
                  { quota: { dayKey: day, limit: 2 } },
                ),
              ),
            });
        }
        const results = await Promise.all(calls.map((c) => c.p));
        const of = (who: string) => results.filter((_, i) => calls[i]!.who === who);
        const receipts = (xs: (Receipt | string)[]) =>
          xs.filter((x): x is Receipt => typeof x !== 'string');
        // Exactly limit − used of a, the first four in queue order; every other one coded.
        expect(of('a').map((x) => (typeof x === 'string' ? x : 'OK'))).toEqual([
          ...Array<string>(4).fill('OK'),
          ...Array<string>(6).fill('QUOTA_EXCEEDED'),
        ]);
        expect(of('av').map((x) => (typeof x === 'string' ? x : 'OK'))).toEqual([
          'OK',
          'OK',
          'QUOTA_EXCEEDED',
        ]);
        expect(of('b').every((x) => typeof x !== 'string')).toBe(true);
        // The counts are exactly what was admitted.
        expect(await storage.quotaUsed(a.id, 'USER_OBSERVED', day)).toBe(6);
        expect(await storage.quotaUsed(a.id, 'USER_VERIFIED', day)).toBe(2);
        expect(await storage.quotaUsed(b.id, 'USER_OBSERVED', day)).toBe(8);
        // Admitted writes: durable, each at its own leaf, in queue order.
        const ok = receipts(results);
        expect(ok).toHaveLength(4 + 2 + 8);
        expect(await storage.logSize()).toBe(before + ok.length);
        for (const who of ['a', 'b', 'av']) {
          const idx = receipts(of(who)).map((r) => r.leafIndex);
          expect(idx).toEqual([...idx].sort((x, y) => x - y));
        }
        const inQueueOrder = ok.map((r) => r.leafIndex);
        expect(inQueueOrder).toEqual([...inQueueOrder].sort((x, y) => x - y));
        for (const r of ok) {
          expect((await storage.getLeaf(r.leafIndex))?.entryId).toBe(r.entry.id);
          expect((await storage.getEntry(r.entry.id))?.leafIndex).toBe(r.leafIndex);
        }
        // Refused writes: no leaf (every leaf belongs to an admitted entry) and no row.
        const leaves = await storage.getLeaves(before, before + ok.length + 20);
        expect(leaves.map((l) => l.entryId).sort()).toEqual(ok.map((r) => r.entry.id).sort());
        const rows = await storage.listEntries({ afterLeafIndex: before - 1, limit: 100 });
        expect(rows.map((e) => e.content).sort()).toEqual(ok.map((r) => r.entry.content).sort());
        // A refusal is remembered briefly: the next write over the same quota is refused before
        // it is signed (nothing queued, nothing counted).
        expect(
          await outcome(
            committerOf(ledger).write(
              { writer: a.id, content: 'again', tier: 'USER_OBSERVED' },
              { quota: { dayKey: day, limit: 6 } },
            ),
          ),
        ).toBe('QUOTA_EXCEEDED');
        // A higher limit (e.g. raised by the operator) is decided by the commit again.
        expect(
          typeof (await outcome(
            committerOf(ledger).write(
              { writer: a.id, content: 'raised', tier: 'USER_OBSERVED' },
              { quota: { dayKey: day, limit: 7 } },
            ),
          )),
        ).not.toBe('string');
        expect(await storage.quotaUsed(a.id, 'USER_OBSERVED', day)).toBe(7);
        // The log verifies.
        await ledger.checkpoint();
        const report = await auditStore(ledger);
        expect(report.findings).toEqual([]);
        expect(report.ok).toBe(true);
      },
    );

    it(
      'Memory.add: a write refused for a later reason consumes no quota',
      { timeout: 60_000 },
      async () => {
        const storage = await open!();
        const ledger = await Ledger.open({
          storage,
          keys: new MemoryKeySource(),
          clock: systemClock,
          random: systemRandom,
        });
        const mem = new Memory({
          ledger,
          storage,
          embedder: new DeterministicEmbedder(),
          clock: systemClock,
          random: systemRandom,
          retention: retentionConfig({
            quotaPerDay: { USER_OBSERVED: 3 },
            nearDuplicateThreshold: null,
          }),
        });
        closers.push(() => mem.close());
        const p = await mem.createPrincipal('user', 'p');
        const day = dayKey(systemClock.nowNs());
        await mem.add('first note', { principal: p.id });
        expect(await storage.quotaUsed(p.id, 'USER_OBSERVED', day)).toBe(1);
        // The writer's key is revoked: the ledger refuses the write after the write path's checks.
        await ledger.revokeKey(p.kid, 'test');
        const e = await mem.add('second note', { principal: p.id }).then(
          () => 'OK',
          (x: unknown) => (isMemwardenError(x) ? x.code : String(x)),
        );
        expect(e).toBe('KEY_REVOKED');
        expect(await storage.quotaUsed(p.id, 'USER_OBSERVED', day)).toBe(1);
      },
    );
  });
}

describe.skipIf(url === undefined)('quota across processes on one PostgreSQL', () => {
  it(
    'two Memory instances on two pools race one principal’s last slots: exactly the limit is admitted',
    { timeout: 180_000 },
    async () => {
      const schema = pgSchema('race');
      const keys = new MemoryKeySource(); // both "processes" hold the host keys (one key file)
      const LIMIT = 40;
      const mk = async () => {
        const storage = await PgBackend.open({ connectionString: url!, schema, maxConnections: 4 });
        const ledger = await Ledger.open({
          storage,
          keys,
          clock: systemClock,
          random: systemRandom,
        });
        const mem = new Memory({
          ledger,
          storage,
          embedder: new DeterministicEmbedder(),
          clock: systemClock,
          random: systemRandom,
          retention: retentionConfig({
            quotaPerDay: { USER_OBSERVED: LIMIT },
            nearDuplicateThreshold: null,
          }),
        });
        closers.push(() => mem.close());
        return { storage, ledger, mem };
      };
      const x = await mk();
      const y = await mk();
      const p = await x.mem.createPrincipal('agent', 'racer');
      const other = await y.mem.createPrincipal('agent', 'bystander');
      const day = dayKey(systemClock.nowNs());
      // 30 of 40 already used: 10 slots left, 2 × 25 writes race for them.
      for (let i = 0; i < 30; i++) await x.storage.consumeQuota(p.id, 'USER_OBSERVED', day, LIMIT);
      const before = await x.storage.logSize();
      const tries: Promise<string>[] = [];
      const bystander: Promise<string>[] = [];
      const code = (q: Promise<unknown>) =>
        q.then(
          () => 'OK',
          (e: unknown) => (isMemwardenError(e) ? e.code : `RAW:${String(e)}`),
        );
      for (let i = 0; i < 25; i++) {
        tries.push(
          code(x.mem.add(`x fact ${i} about the race`, { principal: p.id, embedding: emb(i) })),
        );
        tries.push(
          code(
            y.mem.add(`y fact ${i} about the race`, { principal: p.id, embedding: emb(200 + i) }),
          ),
        );
        if (i % 5 === 0)
          bystander.push(
            code(
              y.mem.add(`bystander fact ${i}`, { principal: other.id, embedding: emb(300 + i) }),
            ),
          );
      }
      const got = await Promise.all(tries);
      expect(got.filter((c) => c === 'OK')).toHaveLength(10);
      expect(got.filter((c) => c === 'QUOTA_EXCEEDED')).toHaveLength(40);
      // The other principal's writes in the same batches are unaffected.
      expect(await Promise.all(bystander)).toEqual(Array<string>(5).fill('OK'));
      expect(await x.storage.quotaUsed(p.id, 'USER_OBSERVED', day)).toBe(LIMIT);
      // Nothing of a refused write is stored: exactly 10 + 5 new leaves and entries.
      expect(await y.storage.logSize()).toBe(before + 15);
      const mine = await x.mem.getAll({ principal: p.id, limit: 100 });
      expect(mine).toHaveLength(10);
      // One log, and it verifies.
      await y.ledger.checkpoint();
      const report = await auditStore(x.ledger);
      expect(report.findings).toEqual([]);
      expect(report.ok).toBe(true);
      expect(report.logSize).toBe(before + 15);
    },
  );
});
