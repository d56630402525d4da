/**
 * @module testing/storage-conformance
 * One conformance suite for every storage backend (CONVENTIONS: LangGraph's
 * `specTest(initializer)`). It is runner-agnostic: a list of named async cases using
 * `node:assert`, which a test file hands to its runner, e.g.
 *
 * ```ts
 * for (const c of storageConformanceCases) it(c.name, () => c.run(factory));
 * ```
 */
import assert from 'node:assert/strict';
import { MemwardenError } from '../core/errors.js';
import { browseCases } from './conformance/browse.js';
import { bulkCases } from './conformance/bulk.js';
import { isolationCases } from './conformance/isolation.js';
import { memoryApiCases } from './conformance/memory-api.js';
import { scanCases } from './conformance/scan.js';
import type { BackendFactory, ConformanceCase } from './conformance/types.js';
import type {
  KeyRecord,
  LeafRecord,
  PrincipalRecord,
  StorageBackend,
  StoredEntry,
} from '../ports/storage.js';

export type { BackendFactory, ConformanceCase };

const h = (n: number): Uint8Array => new Uint8Array(32).fill(n & 0xff);

function leaf(index: number, kind: 'entry' | 'tombstone' = 'entry'): LeafRecord {
  return {
    index,
    data: new Uint8Array([1, 2, index & 0xff]),
    hash: h(index),
    entryId: `e-${index}`,
    kind,
  };
}

function principal(id: string): PrincipalRecord {
  return { id, kind: 'user', name: 'alice', createdAtNs: 1n };
}

function key(kid: string, principalId: string): KeyRecord {
  return { kid, principalId, alg: 'ed25519', publicKey: h(7), validFromNs: 1n };
}

function entry(id: string, leafIndex: number): StoredEntry {
  return {
    id,
    owner: 'user:a',
    tier: 'USER_OBSERVED',
    bytes: new Uint8Array([leafIndex, 1, 2]),
    leafIndex,
    macKid: 'm1',
    mac: h(9),
  };
}

async function rejectsWith(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof MemwardenError && e.code === code);
}

async function withBackend(
  f: BackendFactory,
  fn: (b: StorageBackend) => Promise<void>,
): Promise<void> {
  const b = await f.open();
  try {
    await fn(b);
  } finally {
    await b.close();
  }
}

const foundationCases: readonly ConformanceCase[] = [
  {
    name: 'a new backend is empty',
    run: (f) =>
      withBackend(f, async (b) => {
        assert.equal(await b.logSize(), 0);
        assert.equal(await b.getLeaf(0), undefined);
        assert.equal(await b.latestCheckpoint(), undefined);
        assert.deepEqual(await b.listPrincipals(), []);
        assert.deepEqual(await b.listEntries(), []);
      }),
  },
  {
    name: 'log appends are sequenced and a stale append is a conflict that changes nothing',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.appendLeaves(0, [leaf(0), leaf(1)], [{ level: 1, index: 0, hash: h(100) }]);
        assert.equal(await b.logSize(), 2);
        await rejectsWith(b.appendLeaves(1, [leaf(1)], []), 'STORAGE_CONFLICT');
        await rejectsWith(b.appendLeaves(3, [leaf(3)], []), 'STORAGE_CONFLICT');
        assert.equal(await b.logSize(), 2);
        const [n] = await b.getNodes([{ level: 1, index: 0 }]);
        assert.deepEqual(n, h(100));
      }),
  },
  {
    name: 'an append whose node already exists is rejected whole',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.appendLeaves(0, [leaf(0), leaf(1)], [{ level: 1, index: 0, hash: h(100) }]);
        await rejectsWith(
          b.appendLeaves(2, [leaf(2)], [{ level: 1, index: 0, hash: h(5) }]),
          'STORAGE_CONFLICT',
        );
        assert.equal(await b.logSize(), 2);
        assert.equal(await b.getLeaf(2), undefined);
      }),
  },
  {
    name: 'leaves, nodes and entry leaf indices read back exactly',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.appendLeaves(
          0,
          [leaf(0), leaf(1), leaf(2, 'tombstone')],
          [{ level: 1, index: 0, hash: h(50) }],
        );
        const l1 = await b.getLeaf(1);
        assert.ok(l1);
        assert.deepEqual(l1.data, leaf(1).data);
        assert.deepEqual(l1.hash, h(1));
        assert.equal(l1.kind, 'entry');
        assert.deepEqual(
          (await b.getLeaves(1, 10)).map((l) => l.index),
          [1, 2],
        );
        assert.deepEqual(
          await b.getNodes([
            { level: 0, index: 5 },
            { level: 1, index: 0 },
          ]),
          [undefined, h(50)],
        );
        assert.equal(await b.findLeafIndex('e-1'), 1);
        assert.equal(
          await b.findLeafIndex('e-2'),
          undefined,
          'a tombstone leaf is not the entry leaf',
        );
        assert.equal(await b.findLeafIndex('nope'), undefined);
      }),
  },
  {
    name: 'leaf hashes of a range read back concatenated in index order, scoped like leaves',
    run: (f) =>
      withBackend(f, async (b) => {
        assert.ok(b.getLeafHashes, 'every shipped backend reads leaf hashes in one call');
        await b.appendLeaves(0, [leaf(0), leaf(1), leaf(2, 'tombstone')], []);
        const cat = (...ns: number[]): Uint8Array => {
          const out = new Uint8Array(32 * ns.length);
          ns.forEach((n, i) => out.set(h(n), 32 * i));
          return out;
        };
        assert.deepEqual(await b.getLeafHashes(0, 3), cat(0, 1, 2));
        assert.deepEqual(await b.getLeafHashes(1, 10), cat(1, 2));
        assert.deepEqual(await b.getLeafHashes(2, 2), cat());
        assert.deepEqual(await b.getLeafHashes(5, 9), cat());
        // Leaves appended by the system scope belong to no principal: a view sees none of them.
        const view = b.asPrincipal?.('user:a');
        if (view?.getLeafHashes !== undefined)
          assert.deepEqual(await view.getLeafHashes(0, 3), cat());
      }),
  },
  {
    name: 'stored bytes are not aliased to the caller',
    run: (f) =>
      withBackend(f, async (b) => {
        const l = leaf(0);
        await b.appendLeaves(0, [l], []);
        l.data[0] = 99;
        l.hash[0] = 99;
        const back = await b.getLeaf(0);
        assert.equal(back?.data[0], 1);
        assert.equal(back?.hash[0], 0);
      }),
  },
  {
    name: 'checkpoints are stored once each and the latest is the largest',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.appendLeaves(0, [leaf(0), leaf(1), leaf(2)], []);
        await b.putCheckpoint({ size: 2, root: h(2), note: 'n2', createdAtNs: 5n });
        await b.putCheckpoint({ size: 3, root: h(3), note: 'n3', createdAtNs: 6n });
        await b.putCheckpoint({ size: 1, root: h(1), note: 'n1', createdAtNs: 7n });
        assert.equal((await b.latestCheckpoint())?.size, 3);
        assert.equal((await b.getCheckpoint(2))?.note, 'n2');
        assert.equal((await b.getCheckpoint(2))?.createdAtNs, 5n);
        await rejectsWith(
          b.putCheckpoint({ size: 2, root: h(9), note: 'x', createdAtNs: 8n }),
          'STORAGE_CONFLICT',
        );
        await rejectsWith(
          b.putCheckpoint({ size: 9, root: h(9), note: 'x', createdAtNs: 8n }),
          'LOG_SIZE_INVALID',
        );
        assert.deepEqual((await b.getCheckpoint(2))?.root, h(2));
      }),
  },
  {
    name: 'registering an existing principal is a conflict, never an overwrite',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.insertPrincipal(principal('user:a'), key('k1', 'user:a'));
        await rejectsWith(
          b.insertPrincipal({ ...principal('user:a'), name: 'mallory' }, key('k2', 'user:a')),
          'STORAGE_CONFLICT',
        );
        assert.equal((await b.getPrincipal('user:a'))?.name, 'alice');
        assert.equal(
          await b.getKey('k2'),
          undefined,
          'the rejected registration left no key behind',
        );
        assert.deepEqual(
          (await b.keysOf('user:a')).map((k) => k.kid),
          ['k1'],
        );
      }),
  },
  {
    name: 'keys are inserted once and their validity only ever narrows',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.insertPrincipal(principal('user:a'), key('k1', 'user:a'));
        await b.insertKey({ ...key('k2', 'user:a'), validFromNs: 10n });
        await rejectsWith(b.insertKey(key('k2', 'user:a')), 'STORAGE_CONFLICT');
        await b.closeKey('k1', { validUntilNs: 10n });
        assert.equal((await b.getKey('k1'))?.validUntilNs, 10n);
        await rejectsWith(b.closeKey('k1', { validUntilNs: 20n }), 'STORAGE_CONFLICT');
        await b.closeKey('k1', { revokedAtNs: 15n, revokedAtLogSize: 4, revocationReason: 'lost' });
        const k1 = await b.getKey('k1');
        assert.equal(k1?.validUntilNs, 10n);
        assert.equal(k1?.revokedAtNs, 15n);
        assert.equal(k1?.revokedAtLogSize, 4);
        assert.equal(k1?.revocationReason, 'lost');
        await rejectsWith(b.closeKey('nope', { revokedAtNs: 1n }), 'STORAGE_NOT_FOUND');
        assert.deepEqual((await b.keysOf('user:a')).map((k) => k.kid).sort(), ['k1', 'k2']);
      }),
  },
  {
    name: 'entries are written once and listed in log order',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.putEntry(entry('b', 1));
        await b.putEntry(entry('a', 0));
        await b.putEntry(entry('c', 2));
        await rejectsWith(b.putEntry(entry('a', 5)), 'STORAGE_CONFLICT');
        assert.deepEqual((await b.getEntry('a'))?.bytes, new Uint8Array([0, 1, 2]));
        assert.equal(await b.getEntry('zz'), undefined);
        assert.deepEqual(
          (await b.listEntries()).map((e) => e.id),
          ['a', 'b', 'c'],
        );
        assert.deepEqual(
          (await b.listEntries({ afterLeafIndex: 0, limit: 1 })).map((e) => e.id),
          ['b'],
        );
      }),
  },
  {
    name: 'a transaction is all-or-nothing and invisible until it commits',
    run: (f) =>
      withBackend(f, async (b) => {
        let seenInside = -1;
        let seenOutside = -1;
        await assert.rejects(
          b.transaction(async (tx) => {
            await tx.appendLeaves(0, [leaf(0)], []);
            await tx.putEntry(entry('x', 0));
            seenInside = await tx.logSize();
            seenOutside = await b.logSize();
            throw new Error('abort');
          }),
        );
        assert.equal(seenInside, 1);
        assert.equal(seenOutside, 0);
        assert.equal(await b.logSize(), 0);
        assert.equal(await b.getEntry('x'), undefined);
        await b.transaction(async (tx) => {
          await tx.appendLeaves(0, [leaf(0)], []);
          await tx.putEntry(entry('x', 0));
        });
        assert.equal(await b.logSize(), 1);
        assert.ok(await b.getEntry('x'));
      }),
  },
  {
    name: 'concurrent writers cannot fork the log',
    run: (f) =>
      withBackend(f, async (b) => {
        const attempts = Array.from({ length: 8 }, (_, i) =>
          b.transaction(async (tx) => {
            const n = await tx.logSize();
            await new Promise((r) => setTimeout(r, i % 3));
            await tx.appendLeaves(n, [{ ...leaf(n), entryId: `w-${i}` }], []);
            return n;
          }),
        );
        const results = await Promise.allSettled(attempts);
        const ok = results
          .filter((r) => r.status === 'fulfilled')
          .map((r) => (r as PromiseFulfilledResult<number>).value);
        for (const r of results) {
          if (r.status === 'rejected')
            assert.ok(r.reason instanceof MemwardenError && r.reason.code === 'STORAGE_CONFLICT');
        }
        assert.equal(await b.logSize(), ok.length);
        assert.deepEqual(
          [...ok].sort((x, y) => x - y),
          ok.map((_, i) => i),
        );
      }),
  },
  {
    name: 'data survives close and reopen',
    run: async (f) => {
      if (f.reopen === undefined) return;
      const b = await f.open();
      await b.insertPrincipal(principal('user:a'), key('k1', 'user:a'));
      await b.appendLeaves(0, [leaf(0), leaf(1)], [{ level: 1, index: 0, hash: h(77) }]);
      await b.putCheckpoint({ size: 2, root: h(77), note: 'note', createdAtNs: 3n });
      await b.putEntry(entry('a', 0));
      await b.closeKey('k1', { revokedAtNs: 9n });
      await b.close();
      const r = await f.reopen();
      try {
        assert.equal(await r.logSize(), 2);
        assert.deepEqual((await r.getNodes([{ level: 1, index: 0 }]))[0], h(77));
        assert.equal((await r.latestCheckpoint())?.createdAtNs, 3n);
        assert.deepEqual((await r.getEntry('a'))?.mac, h(9));
        assert.equal((await r.getKey('k1'))?.revokedAtNs, 9n);
        assert.equal((await r.getPrincipal('user:a'))?.createdAtNs, 1n);
      } finally {
        await r.close();
      }
    },
  },
];

/** Every case: the foundation's log/registry/entry rules, the Memory API's, and isolation. */
export const storageConformanceCases: readonly ConformanceCase[] = [
  ...foundationCases,
  ...memoryApiCases,
  ...isolationCases,
  ...bulkCases,
  ...scanCases,
  ...browseCases,
];
