/**
 * The log is sequenced in PostgreSQL (ADR 0011): two ledgers on two connection pools sharing
 * one schema (what two `memwarden serve` processes are) write concurrently; the result is one
 * log — every write its own leaf, the stored tree recomputes, each ledger proves the other's
 * entries — and a stale append is refused. The child-process version is
 * test/server/scale-out.test.ts. Needs MEMWARDEN_TEST_DATABASE_URL (fails under CI without).
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PgBackend } from '../../src/adapters/pg/index.js';
import { systemClock, systemRandom } from '../../src/adapters/system/index.js';
import { isMemwardenError } from '../../src/core/errors.js';
import { verifyConsistency, verifyInclusion } from '../../src/core/merkle/index.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import type { Receipt } from '../../src/memory/log/commit.js';
import { MemoryKeySource } from '../../src/testing/doubles.js';
import { committerOf } from '../../src/memory/log/commit.js';

const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

describe('log sequencing on PostgreSQL: test database configured', () => {
  it.runIf(url === undefined && ci)('MEMWARDEN_TEST_DATABASE_URL is set under CI', () => {
    throw new Error('CI must run the server backend: set MEMWARDEN_TEST_DATABASE_URL');
  });
});

describe.skipIf(url === undefined)('log sequencing on PostgreSQL', () => {
  const schema = `mwseq_${process.pid}_${Date.now().toString(36)}`;
  const open: PgBackend[] = [];
  const backend = async () => {
    const b = await PgBackend.open({ connectionString: url!, schema, maxConnections: 4 });
    open.push(b);
    return b;
  };
  afterAll(async () => {
    for (const b of open) await b.close();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
  });

  it('two ledgers on two pools write one log', { timeout: 120_000 }, async () => {
    const keys = new MemoryKeySource();
    const [sa, sb] = [await backend(), await backend()];
    const a = await Ledger.open({ storage: sa, keys, clock: systemClock, random: systemRandom });
    const b = await Ledger.open({ storage: sb, keys, clock: systemClock, random: systemRandom });
    const ua = await a.registerPrincipal('user', 'a');
    const ub = await b.registerPrincipal('user', 'b');
    const receipts: Receipt[] = [];
    const checkpoints = [];
    for (let round = 0; round < 4; round++) {
      const ws = [];
      for (let i = 0; i < 60; i++) {
        ws.push(
          committerOf(a).write({
            writer: ua.id,
            content: `a ${round}.${i}`,
            tier: 'USER_OBSERVED',
          }),
        );
        ws.push(
          committerOf(b).write({
            writer: ub.id,
            content: `b ${round}.${i}`,
            tier: 'USER_OBSERVED',
          }),
        );
      }
      receipts.push(...(await Promise.all(ws)));
      checkpoints.push(await (round % 2 === 0 ? b : a).checkpoint());
    }
    const n = receipts.length;
    // Leaves 0 and 1: the two signed registrations (ADR 0033); the writes follow.
    expect(receipts.map((r) => r.leafIndex).sort((x, y) => x - y)).toEqual(
      Array.from({ length: n }, (_, i) => i + 2),
    );
    expect(await sa.logSize()).toBe(n + 2);
    // The stored tree recomputes from the leaves, and each leaf commits the entry stored at it.
    expect((await a.log.audit()).size).toBe(n + 2);
    for (const r of receipts) {
      const leaf = await sb.getLeaf(r.leafIndex);
      expect(leaf?.entryId).toBe(r.entry.id);
    }
    expect(checkpoints.map((c) => c.size)).toEqual([122, 242, 362, 482]);
    for (const r of receipts.filter((_, i) => i % 17 === 0)) {
      for (const l of [a, b]) {
        const p = await l.proveEntry(r.entry.id);
        expect(
          verifyInclusion(p.leafIndex, p.treeSize, p.leafHash, p.hashes, p.checkpoint.root),
        ).toBe(true);
        expect((await l.verifyEntry(r.entry.id)).ok).toBe(true);
      }
    }
    for (let i = 0; i < checkpoints.length; i++)
      for (let j = i + 1; j < checkpoints.length; j++) {
        const [c1, c2] = [checkpoints[i]!, checkpoints[j]!];
        const proof = await (i % 2 === 0 ? a : b).log.consistencyProof(c1.size, c2.size);
        expect(verifyConsistency(c1.size, c2.size, proof, c1.root, c2.root)).toBe(true);
      }
    await a.drain();
    await b.drain();
  });

  it('an append at a stale start is a conflict that changes nothing', async () => {
    const s = await backend();
    const size = await s.logSize();
    const leaf = (i: number) => ({
      index: i,
      data: new Uint8Array([1, 2, 3]),
      hash: new Uint8Array(32).fill(i % 251),
      entryId: `stale-${i}`,
      kind: 'entry' as const,
    });
    for (const start of [size - 1, size + 1]) {
      const err = await s.appendLeaves(start, [leaf(start)], []).catch((e: unknown) => e);
      expect(isMemwardenError(err, 'STORAGE_CONFLICT')).toBe(true);
    }
    expect(await s.logSize()).toBe(size);
    expect(await s.getLeaf(size + 1)).toBeUndefined();
  });
});
