/**
 * @module testing/conformance/bulk
 * Conformance cases for bulk entry inserts (`putEntries`, the group-commit write path): exact
 * round trips, all-or-nothing on a conflict or a refused row, and the scope rules of a single
 * insert — directly and inside a transaction (where PGlite's commit binds the rows as binary
 * arrays in one INSERT, `adapters/pglite/commit-sql.ts`).
 */
import assert from 'node:assert/strict';
import type { StorageBackend, StoredEntry } from '../../ports/storage.js';
import { meta, rejectsWith, scoped, vec, withBackend } from './memory-api.js';
import type { ConformanceCase } from './types.js';

const batch = (prefix: string, from: number, n: number, owner = 'user:a'): StoredEntry[] =>
  Array.from({ length: n }, (_, i) =>
    meta(`${prefix}${from + i}`, from + i, {
      owner,
      writer: owner,
      embedding: vec(from + i, 0.01 * i),
    }),
  );

function putAll(b: StorageBackend, es: readonly StoredEntry[]): Promise<void> {
  assert.ok(b.putEntries, 'every shipped backend implements putEntries');
  return b.putEntries(es);
}

export const bulkCases: readonly ConformanceCase[] = [
  {
    name: 'putEntries inserts every entry exactly, directly and in a transaction',
    run: (f) =>
      withBackend(f, async (b) => {
        const direct = batch('d', 0, 20);
        await putAll(b, direct);
        const inTx = batch('t', 20, 40);
        const odd = inTx[3]!.embedding!.slice();
        odd[7] = -2.5e-39; // subnormal float4 survives exactly
        inTx[3] = { ...inTx[3]!, embedding: odd, expiresAtNs: 2n ** 62n };
        const bare: StoredEntry = {
          id: 'bare',
          owner: 'user:a',
          tier: 'USER_OBSERVED',
          bytes: new Uint8Array([1]),
          leafIndex: 60,
          macKid: 'm',
          mac: new Uint8Array(1),
        };
        await b.transaction((tx) => putAll(tx, [...inTx, bare]));
        for (const e of [...direct, ...inTx]) {
          const back = await b.getEntry(e.id);
          assert.ok(back, e.id);
          assert.deepEqual(back.embedding, e.embedding);
          assert.deepEqual(back.bytes, e.bytes);
          assert.deepEqual(back.mac, e.mac);
          assert.equal(back.leafIndex, e.leafIndex);
          assert.equal(back.expiresAtNs, e.expiresAtNs);
          assert.equal(back.content, e.content);
          assert.equal(back.deleted, false);
        }
        const back = await b.getEntry('bare');
        assert.equal(back?.embedding, undefined);
        assert.equal(back?.content, undefined);
        const hits = await b.searchEntries({ embedding: vec(25), nowNs: 1n, limit: 1 });
        assert.equal(hits[0]?.entry.id, 't25');
        const lex = await b.searchEntries({ text: 'entry t30', nowNs: 1n, limit: 100 });
        assert.ok(
          lex.some((h) => h.entry.id === 't30'),
          'bulk rows are lexically indexed',
        );
      }),
  },
  {
    name: 'putEntries is all-or-nothing: a duplicate id or a refused row inserts none',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.putEntry(meta('x0', 0));
        const dup = [...batch('n', 1, 30), meta('x0', 31)];
        await rejectsWith(putAll(b, dup), 'STORAGE_CONFLICT');
        await rejectsWith(
          b.transaction((tx) => putAll(tx, dup)),
          'STORAGE_CONFLICT',
        );
        assert.equal(await b.getEntry('n1'), undefined);
        const A = scoped(b, 'user:a');
        const mixed = [...batch('m', 40, 30), ...batch('f', 70, 1, 'user:b')];
        await rejectsWith(putAll(A, mixed), 'STORAGE_FAILED', 'denied');
        await rejectsWith(
          A.transaction((tx) => putAll(tx, mixed)),
          'STORAGE_FAILED',
          'denied',
        );
        const op = [
          ...batch('o', 80, 30),
          meta('op', 110, { owner: 'operator:x', tier: 'OPERATOR' }),
        ];
        await rejectsWith(
          A.transaction((tx) => putAll(tx, op)),
          'STORAGE_FAILED',
          'denied',
        );
        assert.equal(await b.getEntry('m40'), undefined);
        assert.equal(await b.getEntry('o80'), undefined);
        assert.deepEqual(
          (await b.listEntries()).map((e) => e.id),
          ['x0'],
        );
        // A principal's own batch goes in, visible to it and not to another principal.
        await A.transaction((tx) => putAll(tx, batch('a', 200, 30)));
        assert.equal((await A.listEntriesFor({ limit: 100 })).length, 31);
        assert.equal((await scoped(b, 'user:b').listEntriesFor({ limit: 100 })).length, 0);
      }),
  },
];
