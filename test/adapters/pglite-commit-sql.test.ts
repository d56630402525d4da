/**
 * The SQL a group commit costs on the embedded backend: one PGlite transaction per batch once
 * the committed-state hint is warm (no empty transaction around a read of nothing), and no
 * key-record read per writer while no key changed (`registryVersion`, exact on an exclusive
 * store) — a key change made by ANY caller of the store, not only through the ledger, is seen
 * by the very next write.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import { systemRandom } from '../../src/adapters/system/index.js';
import { isMemwardenError } from '../../src/core/errors.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import { VerifierRegistry } from '../../src/memory/identity/registry.js';
import type { StoredEntry } from '../../src/ports/storage.js';
import { ManualClock, MemoryKeySource } from '../../src/testing/doubles.js';
import { resetPglite } from './helpers-pglite.js';
import { outcome } from '../helpers/outcome.js';
import { committerOf } from '../../src/memory/log/commit.js';
import { tokenize } from '../../src/core/text/index.js';

describe('PGlite group commit: SQL transactions', () => {
  let db: PGlite;
  let txs = 0;
  beforeAll(async () => {
    db = await PGlite.create({ extensions: { vector } });
    await PgliteBackend.open({ instance: db }); // migrate
    const orig = db.transaction.bind(db);
    db.transaction = ((fn: Parameters<PGlite['transaction']>[0]) => {
      txs++;
      return orig(fn);
    }) as PGlite['transaction'];
  }, 120_000);
  afterAll(async () => {
    await db.close();
  });
  beforeEach(async () => {
    await resetPglite(db);
  });

  async function setup(keys = new MemoryKeySource()) {
    const storage = await PgliteBackend.open({ instance: db, vectorIndex: { auto: false } });
    const clock = new ManualClock();
    const ledger = await Ledger.open({
      storage,
      keys,
      clock,
      random: systemRandom,
    });
    const u = await ledger.registerPrincipal('user', 'u');
    const w = (content: string) =>
      committerOf(ledger).write(
        { writer: u.id, content, tier: 'USER_OBSERVED' },
        { quota: { dayKey: '2025-03-01', limit: 1000 } },
      );
    return { storage, clock, ledger, u, w };
  }

  it(
    'one transaction per batch; no key read while no key changed',
    { timeout: 60_000 },
    async () => {
      const { clock, ledger, w } = await setup();
      await Promise.all([w('warm-1'), w('warm-2')]); // writer resolved, hint warm
      await ledger.drain();
      for (let round = 0; round < 3; round++) {
        clock.advance(10_000_000_000n); // far past any time-bounded cache
        txs = 0;
        const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => w(`r${round}-${i}`)));
        const leaves = rs.map((r) => r.leafIndex).sort((a, b) => a - b);
        expect(leaves.at(-1)! - leaves[0]! + 1).toBe(20);
        // Queued in one turn, so one batch: its commit is the only transaction — no read of
        // quota counts the hint holds (an empty transaction), no re-read of the writer's keys.
        expect(txs).toBe(1);
      }
      for (const r of await Promise.all([w('v')]))
        expect((await ledger.verifyEntry(r.entry.id)).ok).toBe(true);
    },
  );

  it(
    'a revocation by another ledger on the same store takes effect on the next write; one made past the log (the keys table only) changes nothing',
    { timeout: 60_000 },
    async () => {
      const keys = new MemoryKeySource();
      const { storage, clock, ledger, u, w } = await setup(keys);
      await w('before');
      // Only the table: not a signed statement in the log, so not a revocation (ADR 0033).
      const table = new VerifierRegistry(storage, clock);
      await table.revoke(u.kid, 'forged', {
        atNs: clock.nowNs(),
        logSize: await storage.logSize(),
      });
      expect((await w('still')).entry.kid).toBe(u.kid);
      // Another ledger revokes through the log: `ledger` is not told, its next commit reads it.
      const other = await Ledger.open({ storage, keys, clock, random: systemRandom });
      await expect(other.revokeKey(u.kid, 'stolen')).resolves.toBeTypeOf('number');
      // No time passes: a time-bounded cache would still sign with the revoked key.
      await expect(w('after')).rejects.toSatisfy(
        (e: unknown) => isMemwardenError(e) && e.code === 'KEY_REVOKED',
      );
      await ledger.drain();
      await other.drain();
    },
  );

  it(
    'a rotation by another ledger on the same store is used by the next write',
    { timeout: 60_000 },
    async () => {
      const keys = new MemoryKeySource();
      const { storage, clock, ledger, u, w } = await setup(keys);
      await w('before');
      const other = await Ledger.open({ storage, keys, clock, random: systemRandom });
      const rotated = await other.rotatePrincipalKey(u.id); // `ledger` is not told
      expect((await w('after')).entry.kid).toBe(rotated); // no time has passed
      await ledger.drain();
      await other.drain();
    },
  );

  /** Every kind of value the binary commit path binds, at its edges. */
  function edgeEntries(): StoredEntry[] {
    const emb = new Float32Array(384);
    for (let i = 0; i < 384; i++)
      emb[i] =
        i === 0 ? -0 : i % 7 === 0 ? 3.4e38 : i % 5 === 0 ? 1.4e-45 : Math.fround(i / 1000 - 0.2);
    return [
      {
        id: 'e-full',
        owner: 'user:a',
        tier: 'USER_OBSERVED',
        bytes: Uint8Array.from([0, 255, 0, 1, 0]),
        leafIndex: 0,
        macKid: 'mk',
        mac: new Uint8Array(32).fill(0),
        writer: 'user:a',
        kind: 'fact',
        createdAtNs: 9_007_199_254_740_993_123n,
        expiresAtNs: -5n,
        content: "naïve café — 日本語 🙂 \\x00 'quoted' $1",
        uri: 'chat:s1:turn-4',
        srcHash: 'ab'.repeat(32),
        embedding: emb,
      },
      {
        id: 'e-bare',
        owner: 'user:a',
        tier: 'EXTERNAL_WEB',
        bytes: new Uint8Array(0),
        leafIndex: 1,
        macKid: '',
        mac: new Uint8Array(0),
      },
    ];
  }

  it(
    'binds every value exactly: text, bytea, int8 edges, NULLs, float4 bit patterns',
    { timeout: 60_000 },
    async () => {
      const storage = await PgliteBackend.open({ instance: db, vectorIndex: { auto: false } });
      const es = edgeEntries();
      await storage.transaction(async (tx) => {
        await tx.putEntries!(es);
      });
      const got = await storage.listEntries();
      expect(got).toHaveLength(2);
      const full = got.find((e) => e.id === 'e-full')!;
      const { embedding, ...rest } = full;
      const { embedding: want, ...wantRest } = es[0]!;
      // The adapter stores (and reads back) the content's BM25 length for the statistics.
      expect(rest).toEqual({
        ...wantRest,
        deleted: false,
        lexLen: tokenize(wantRest.content ?? '').length,
      });
      expect(new Uint32Array(embedding!.buffer, embedding!.byteOffset, 384)).toEqual(
        new Uint32Array(want!.buffer, want!.byteOffset, 384),
      );
      expect(got.find((e) => e.id === 'e-bare')).toEqual({ ...es[1], deleted: false });
    },
  );

  it(
    'a value the database refuses fails the whole commit with a coded error, nothing written',
    { timeout: 60_000 },
    async () => {
      const storage = await PgliteBackend.open({ instance: db, vectorIndex: { auto: false } });
      const [ok] = edgeEntries();
      const bad = { ...ok!, id: 'e-nul', leafIndex: 1, content: 'a\u0000b' };
      await expect(
        storage.transaction(async (tx) => {
          await tx.appendLeaves(
            0,
            [
              {
                index: 0,
                data: new Uint8Array([1]),
                hash: new Uint8Array(32),
                entryId: 'e-full',
                kind: 'entry',
              },
            ],
            [],
          );
          await tx.putEntries!([ok!, bad]);
        }),
      ).rejects.toSatisfy((e: unknown) => isMemwardenError(e) && e.code === 'INPUT_INVALID');
      expect(await storage.listEntries()).toEqual([]);
      expect(await storage.logSize()).toBe(0);
      // A principal's transaction may not insert another owner's row: RLS WITH CHECK on the
      // binary INSERT, the whole commit refused.
      const A = storage.asPrincipal('user:b');
      await expect(
        A.transaction(async (tx) => {
          await tx.putEntries!([{ ...ok!, owner: 'user:b', id: 'mine' }, ok!]);
        }),
      ).rejects.toSatisfy((e: unknown) => isMemwardenError(e) && e.code === 'STORAGE_FAILED');
      expect(await storage.listEntries()).toEqual([]);
    },
  );

  it(
    'out-of-range integers are refused as the text path refuses them, never wrapped',
    { timeout: 60_000 },
    async () => {
      const storage = await PgliteBackend.open({ instance: db, vectorIndex: { auto: false } });
      const [ok] = edgeEntries();
      const code = (p: Promise<unknown>): Promise<string> => outcome(p);
      const huge = { ...ok!, createdAtNs: 2n ** 63n };
      // The shared text path (a direct write) and the binary commit path agree.
      const direct = await code(storage.putEntries([huge]));
      expect(direct).not.toBe('OK');
      expect(await code(storage.transaction(async (tx) => tx.putEntries!([huge])))).toBe(direct);
      const demand = {
        principal: 'user:a',
        tier: 'USER_OBSERVED' as const,
        dayKey: 'd',
        limit: 2 ** 31,
      };
      const directQ = await code(storage.consumeQuotas!([demand]));
      expect(directQ).not.toBe('OK');
      expect(await code(storage.transaction(async (tx) => tx.consumeQuotas!([demand])))).toBe(
        directQ,
      );
      expect(await storage.listEntries()).toEqual([]);
      expect(await storage.quotaUsed('user:a', 'USER_OBSERVED', 'd')).toBe(0);
      // In range at the edges: stored exactly.
      const edge = { ...ok!, createdAtNs: 2n ** 63n - 1n, expiresAtNs: -(2n ** 63n) };
      await storage.transaction(async (tx) => tx.putEntries!([edge]));
      const got = (await storage.listEntries())[0]!;
      expect([got.createdAtNs, got.expiresAtNs]).toEqual([2n ** 63n - 1n, -(2n ** 63n)]);
    },
  );
});
