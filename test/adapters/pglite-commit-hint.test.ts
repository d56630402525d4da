/**
 * The embedded backend remembers the committed log size and quota counts between its staged
 * transactions (`CommittedHint`, adapters/pglite/staged-ext.ts), so a group commit reads neither
 * back. The hint is never the decider: a direct write forgets it, and a stale one (a second
 * backend writing the same PGlite instance behind this one's back) fails exactly one commit
 * with STORAGE_CONFLICT — nothing written, nothing counted — after which the next transaction
 * reads afresh.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import type { LeafRecord, QuotaDemand, StorageBackend } from '../../src/ports/storage.js';
import { resetPglite } from './helpers-pglite.js';
import { outcome } from '../helpers/outcome.js';


const leaf = (index: number): LeafRecord => ({
  index,
  data: new Uint8Array([index & 0xff, 1]),
  hash: new Uint8Array(32).fill(index & 0xff),
  entryId: `e-${index}`,
  kind: 'entry',
});
const D = '2025-03-01';
const demand = (limit: number): QuotaDemand => ({
  principal: 'user:a',
  tier: 'USER_OBSERVED',
  dayKey: D,
  limit,
});
const quotas = (b: StorageBackend, n: number, limit: number): Promise<boolean[]> =>
  b.consumeQuotas!(Array.from({ length: n }, () => demand(limit)));

const code = (p: Promise<unknown>): Promise<string> => outcome(p);

describe('PGlite committed-state hint', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create({ extensions: { vector } });
  }, 120_000);
  afterAll(async () => {
    await db.close();
  });

  it(
    'a direct write between transactions is seen by the next one',
    { timeout: 60_000 },
    async () => {
      const b = await PgliteBackend.open({ instance: db });
      await resetPglite(db);
      await b.transaction(async (tx) => {
        expect(await tx.logSize()).toBe(0);
        await tx.appendLeaves(0, [leaf(0), leaf(1)], []);
        expect(await quotas(tx, 2, 5)).toEqual([true, true]);
      });
      // Both values are now held by the hint; change them directly.
      await b.appendLeaves(2, [leaf(2)], []);
      expect((await b.consumeQuota('user:a', 'USER_OBSERVED', D, 5)).ok).toBe(true);
      await b.transaction(async (tx) => {
        expect(await tx.logSize()).toBe(3);
        await tx.appendLeaves(3, [leaf(3)], []);
        // 3 of 5 used: two more fit.
        expect(await quotas(tx, 3, 5)).toEqual([true, true, false]);
      });
      expect(await b.logSize()).toBe(4);
      expect(await b.quotaUsed('user:a', 'USER_OBSERVED', D)).toBe(5);
    },
  );

  it(
    'a stale hint fails one commit with nothing written, and the next transaction is right',
    { timeout: 60_000 },
    async () => {
      const a = await PgliteBackend.open({ instance: db });
      await resetPglite(db);
      const other = await PgliteBackend.open({ instance: db }); // its own mutex and hint
      await a.transaction(async (tx) => {
        await tx.appendLeaves(0, [leaf(0)], []);
        expect(await quotas(tx, 1, 3)).toEqual([true]);
      });
      // Behind a's back: the log grows and the quota fills.
      await other.appendLeaves(1, [leaf(1)], []);
      expect(await quotas(other, 2, 3)).toEqual([true, true]);

      // a still believes size 1: its append is staged at 1 and refused by the database.
      expect(
        await code(
          a.transaction(async (tx) => {
            const n = await tx.logSize();
            expect(n).toBe(1);
            await tx.appendLeaves(n, [leaf(n)], []);
          }),
        ),
      ).toBe('STORAGE_CONFLICT');
      expect(await a.logSize()).toBe(2);
      expect(await a.getLeaf(2)).toBeUndefined();
      await a.transaction(async (tx) => {
        expect(await tx.logSize()).toBe(2);
        await tx.appendLeaves(2, [leaf(2)], []);
      });
      expect(await a.logSize()).toBe(3);

      // Stale quota count: a's hint learns user:q at 1 of 3; other fills it behind a's back.
      const q = (n: number): QuotaDemand[] =>
        Array.from({ length: n }, () => ({ ...demand(3), principal: 'user:q' }));
      await a.transaction(async (tx) => {
        expect(await tx.consumeQuotas!(q(1))).toEqual([true]);
      });
      expect(await other.consumeQuotas!(q(2))).toEqual([true, true]);
      // a's staged verdicts (on the stale count) differ from the database's at commit: refused
      // as a whole, nothing counted, nothing appended.
      expect(
        await code(
          a.transaction(async (tx) => {
            expect(await tx.consumeQuotas!(q(2))).toEqual([true, true]); // the stale count
            await tx.appendLeaves(3, [leaf(3)], []);
          }),
        ),
      ).toBe('STORAGE_CONFLICT');
      expect(await a.quotaUsed('user:q', 'USER_OBSERVED', D)).toBe(3);
      expect(await a.logSize()).toBe(3);
      await a.transaction(async (tx) => {
        expect(await tx.consumeQuotas!(q(2))).toEqual([false, false]);
      });
      expect(await a.quotaUsed('user:q', 'USER_OBSERVED', D)).toBe(3);
    },
  );
});
