/**
 * The ledger's group commit persists a batch with one `putEntries` call per run of entries,
 * callbacks (tombstones) in between, on every backend: many concurrent writes and a tombstone
 * all land, at their leaf indices, and verify.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import pg from 'pg';
import { PgBackend } from '../../src/adapters/pg/index.js';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import { systemClock, systemRandom } from '../../src/adapters/system/index.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import type { StorageBackend } from '../../src/ports/storage.js';
import { MemoryKeySource } from '../../src/testing/doubles.js';
import { committerOf } from '../../src/memory/log/commit.js';

const emb = (i: number): Float32Array => {
  const v = new Float32Array(384).fill(0.01);
  v[i % 384] = 1;
  return v;
};

async function concurrentWritesAndTombstone(storage: StorageBackend): Promise<void> {
  const ledger = await Ledger.open({
    storage,
    keys: new MemoryKeySource(),
    clock: systemClock,
    random: systemRandom,
  });
  const p = await ledger.registerPrincipal('user', 'batch');
  const first = await committerOf(ledger).write({
    writer: p.id,
    content: 'doomed',
    tier: 'USER_OBSERVED',
  });
  const write = (i: number) =>
    committerOf(ledger).write(
      { writer: p.id, content: `note ${i}`, tier: 'USER_OBSERVED' },
      { embedding: emb(i) },
    );
  const before = Array.from({ length: 60 }, (_, i) => write(i));
  const tomb = committerOf(ledger).tombstone(first.entry.id, 'test', p.id);
  const after = Array.from({ length: 60 }, (_, i) => write(60 + i));
  const receipts = await Promise.all([...before, ...after]);
  const t = await tomb;
  const indices = [...receipts.map((r) => r.leafIndex), t.leafIndex, first.leafIndex];
  expect(new Set(indices).size).toBe(122);
  expect(await storage.logSize()).toBe(123); // + the signed registration (ADR 0033)
  expect((await storage.getEntry(first.entry.id))?.deleted).toBe(true);
  for (const r of receipts) {
    const stored = await storage.getEntry(r.entry.id);
    expect(stored?.leafIndex).toBe(r.leafIndex);
    expect(stored?.embedding?.length).toBe(384);
  }
  for (const r of receipts.slice(0, 5))
    expect((await ledger.verifyEntry(r.entry.id)).ok).toBe(true);
  await ledger.close();
}

describe('ledger group commit with batched persistence', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create({ extensions: { vector } });
  });
  afterAll(async () => {
    await db.close();
  });
  it('in memory', async () => {
    await concurrentWritesAndTombstone(await MemoryBackend.open());
  });
  it('PGlite (binary-parameter commit path)', async () => {
    await concurrentWritesAndTombstone(await PgliteBackend.open({ instance: db }));
  });
});

const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
describe.skipIf(url === undefined)('ledger group commit on the PostgreSQL server', () => {
  const schema = `mw_ledger_batch_${process.pid}`;
  afterAll(async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
  });
  it('multi-row inserts of leaves, nodes and entries', async () => {
    await concurrentWritesAndTombstone(await PgBackend.open({ connectionString: url!, schema }));
  });
});
