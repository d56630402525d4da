/**
 * @module testing/conformance/isolation
 * Isolation by principal (article Pattern 4) as every backend must keep it — PostgreSQL and
 * PGlite through row-level security, the in-memory backend in code: B never sees, marks,
 * extends or supersedes A's rows; OPERATOR rows are readable by all and writable by none of
 * them; review items, audit events and quotas are per principal; API keys and review decisions
 * belong to the system scope.
 */
import assert from 'node:assert/strict';
import { NOW, meta, rejectsWith, scoped, vec, withBackend } from './memory-api.js';
import type { ConformanceCase } from './types.js';

const ids = (xs: readonly { id: string }[]): string[] => xs.map((x) => x.id);

export const isolationCases: readonly ConformanceCase[] = [
  {
    name: 'isolation: B cannot see A’s entries by id, list, search or purge look-up',
    run: (f) =>
      withBackend(f, async (b) => {
        await scoped(b, 'user:a').putEntry(meta('a1', 0, { content: 'secret zebra' }));
        await b.putEntry(
          meta('op', 1, {
            owner: 'operator:deploy',
            tier: 'OPERATOR',
            content: 'policy zebra',
            expiresAtNs: undefined,
          }),
        );
        const B = scoped(b, 'user:b');
        await B.putEntry(meta('b1', 2, { owner: 'user:b', content: 'mine zebra' }));
        assert.equal(await B.getEntry('a1'), undefined);
        assert.deepEqual(ids(await B.listEntries()), ['op', 'b1']);
        assert.deepEqual(ids(await B.listEntriesFor({ limit: 10 })), ['op', 'b1']);
        assert.deepEqual(ids(await B.listEntriesFor({ limit: 10, owner: 'user:b' })), ['b1']);
        assert.deepEqual(ids(await B.listEntriesFor({ limit: 10, owner: 'user:a' })), []);
        const hits = await B.searchEntries({
          embedding: vec(0),
          text: 'zebra',
          nowNs: NOW,
          limit: 10,
        });
        assert.deepEqual(hits.map((h) => h.entry.id).sort(), ['b1', 'op']);
        assert.deepEqual(ids(await B.findEntriesBy({ uri: 'chat:s1' })), ['op', 'b1']);
        assert.deepEqual(await B.countEntries(), [
          { tier: 'OPERATOR', count: 1 },
          { tier: 'USER_OBSERVED', count: 1 },
        ]);
        assert.equal(await B.findLeafIndex('a1'), undefined);
        assert.deepEqual(
          ids(await b.listEntries()),
          ['a1', 'op', 'b1'],
          'the system scope sees all',
        );
      }),
  },
  {
    name: 'isolation: B cannot mark, supersede or extend A’s rows; no agent changes OPERATOR rows',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.putEntry(meta('a1', 0));
        await b.putEntry(
          meta('op', 1, { owner: 'operator:deploy', tier: 'OPERATOR', expiresAtNs: NOW + 5n }),
        );
        const B = scoped(b, 'user:b');
        await rejectsWith(B.markDeleted('a1'), 'STORAGE_NOT_FOUND');
        await rejectsWith(B.markSuperseded('a1', 'b9'), 'STORAGE_NOT_FOUND');
        await rejectsWith(B.extendExpiry('a1', NOW + 10_000n), 'STORAGE_NOT_FOUND');
        const a1 = await b.getEntry('a1');
        assert.equal(a1?.deleted, false);
        assert.equal(a1?.supersededBy, undefined);
        assert.equal(a1?.expiresAtNs, NOW + 1000n);
        for (const who of ['user:a', 'user:b']) {
          const s = scoped(b, who);
          await rejectsWith(s.markDeleted('op'), 'STORAGE_FAILED', 'denied');
          await rejectsWith(s.markSuperseded('op', 'x'), 'STORAGE_FAILED', 'denied');
          await rejectsWith(s.extendExpiry('op', NOW + 10_000n), 'STORAGE_FAILED', 'denied');
          await rejectsWith(
            s.putEntry(meta(`${who}-op`, 7, { owner: who, tier: 'OPERATOR' })),
            'STORAGE_FAILED',
            'denied',
          );
          await rejectsWith(
            s.putEntry(meta(`${who}-x`, 8, { owner: 'user:c' })),
            'STORAGE_FAILED',
            'denied',
          );
        }
        const op = await b.getEntry('op');
        assert.equal(op?.deleted, false);
        assert.equal(op?.expiresAtNs, NOW + 5n);
        const A = scoped(b, 'user:a');
        assert.equal(await A.extendExpiry('a1', NOW + 9000n), NOW + 9000n, 'the owner may renew');
        await A.markDeleted('a1');
        assert.throws(() => (A.asPrincipal as (id: string) => unknown)('user:b'), {
          code: 'INPUT_INVALID',
        });
      }),
  },
  {
    name: 'isolation: review items, audit events and quotas are per principal; keys and decisions are system-only',
    run: (f) =>
      withBackend(f, async (b) => {
        const A = scoped(b, 'user:a');
        const B = scoped(b, 'user:b');
        const item = {
          id: 'ra',
          principal: 'user:a',
          tier: 'USER_OBSERVED' as const,
          content: 'c',
          reasons: [],
          payload: new Uint8Array([1]),
          createdAtNs: 1n,
        };
        await A.enqueueReview(item);
        await rejectsWith(B.enqueueReview({ ...item, id: 'rb' }), 'STORAGE_FAILED', 'denied');
        assert.equal(await B.getReview('ra'), undefined);
        assert.deepEqual(await B.listReviews(), []);
        assert.deepEqual(ids(await A.listReviews()), ['ra']);
        await rejectsWith(
          A.decideReview('ra', { status: 'approved', decidedBy: 'user:a', decidedAtNs: 2n }),
          'STORAGE_FAILED',
          'denied',
        );
        assert.equal((await b.getReview('ra'))?.status, 'pending');

        await A.appendAudit({ id: 'ea', atNs: 1n, actor: 'user:a', action: 'add', details: {} });
        await b.appendAudit({ id: 'es', atNs: 2n, actor: 'system', action: 'boot', details: {} });
        assert.deepEqual(ids(await A.listAudit({ limit: 10 })), ['ea']);
        assert.deepEqual(await B.listAudit({ limit: 10 }), []);
        assert.deepEqual(ids(await b.listAudit({ limit: 10 })), ['ea', 'es']);

        await rejectsWith(
          B.consumeQuota('user:a', 'USER_OBSERVED', 'd', 5),
          'STORAGE_FAILED',
          'denied',
        );
        assert.deepEqual(await A.consumeQuota('user:a', 'USER_OBSERVED', 'd', 5), {
          ok: true,
          used: 1,
        });
        assert.equal(await B.quotaUsed('user:a', 'USER_OBSERVED', 'd'), 0);

        const h = new Uint8Array(32).fill(4);
        await rejectsWith(
          A.putApiKey({ principalId: 'user:a', keyHash: h, createdAtNs: 1n }),
          'STORAGE_FAILED',
          'denied',
        );
        await b.putApiKey({ principalId: 'user:a', keyHash: h, createdAtNs: 1n });
        await rejectsWith(A.findApiKey(h), 'STORAGE_FAILED', 'denied');
        await rejectsWith(A.revokeApiKey(h), 'STORAGE_FAILED', 'denied');
        assert.equal(await b.findApiKey(h), 'user:a');
      }),
  },
];
