/**
 * @module testing/conformance/memory-api
 * Conformance cases for the Memory API's storage rules: entry metadata and state, search,
 * listing and purge look-ups, quotas, the review queue, audit events and API keys. Runs against
 * every backend through `storageConformanceCases` (see `../storage-conformance.js`).
 */
import assert from 'node:assert/strict';
import { MemwardenError } from '../../core/errors.js';
import type { SourceTier } from '../../core/trust.js';
import {
  EMBEDDING_DIMENSIONS,
  type StorageBackend,
  type StoredEntry,
} from '../../ports/storage.js';
import type { BackendFactory, ConformanceCase } from './types.js';

export const NOW = 1_000_000n;

/** A 384-d vector pointing mostly along axis `i` (so cosine ranks by axis). */
export function vec(i: number, noise = 0.05): Float32Array {
  const v = new Float32Array(EMBEDDING_DIMENSIONS).fill(noise);
  v[i % EMBEDDING_DIMENSIONS] = 1;
  return v;
}

export function meta(
  id: string,
  leafIndex: number,
  over: { [K in keyof StoredEntry]?: StoredEntry[K] | undefined } = {},
): StoredEntry {
  const e: Record<string, unknown> = {
    id,
    owner: 'user:a',
    tier: 'USER_OBSERVED',
    bytes: new Uint8Array([leafIndex & 0xff, 7]),
    leafIndex,
    macKid: 'm1',
    mac: new Uint8Array(32).fill(9),
    writer: 'user:a',
    kind: 'fact',
    createdAtNs: 10n,
    expiresAtNs: NOW + 1000n,
    content: `entry ${id}`,
    uri: 'chat:s1',
    srcHash: 'ab'.repeat(32),
    embedding: vec(leafIndex),
    ...over,
  };
  for (const [k, v] of Object.entries(e)) if (v === undefined) delete e[k]; // absent, not undefined
  return e as unknown as StoredEntry;
}

export async function rejectsWith(
  p: Promise<unknown>,
  code: string,
  reason?: string,
): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof MemwardenError, `expected a MemwardenError, got ${String(e)}`);
    assert.equal(e.code, code);
    if (reason !== undefined) assert.equal(e.details?.reason, reason);
    return true;
  });
}

export async function withBackend(
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

export function scoped(b: StorageBackend, id: string): StorageBackend {
  assert.ok(b.asPrincipal, 'every backend offers asPrincipal');
  return b.asPrincipal(id);
}

/** The backend's `consumeQuotas` (every shipped backend has it). */
function quotas(b: StorageBackend): NonNullable<StorageBackend['consumeQuotas']> {
  const fn = b.consumeQuotas;
  assert.ok(fn, 'every backend implements consumeQuotas');
  return (ds) => fn.call(b, ds);
}

const ids = (xs: readonly { id: string }[]): string[] => xs.map((x) => x.id);
const hitIds = (xs: readonly { entry: { id: string } }[]): string[] => xs.map((x) => x.entry.id);

export const memoryApiCases: readonly ConformanceCase[] = [
  {
    name: 'entry metadata round-trips exactly; a new entry is live',
    run: (f) =>
      withBackend(f, async (b) => {
        const e = meta('a', 0, { supersededBy: 'ignored', deleted: true, expiresAtNs: 2n ** 62n });
        await b.putEntry(e);
        const back = await b.getEntry('a');
        assert.ok(back);
        assert.equal(back.writer, 'user:a');
        assert.equal(back.kind, 'fact');
        assert.equal(back.createdAtNs, 10n);
        assert.equal(back.expiresAtNs, 2n ** 62n);
        assert.equal(back.content, 'entry a');
        assert.equal(back.uri, 'chat:s1');
        assert.equal(back.srcHash, 'ab'.repeat(32));
        assert.deepEqual(back.embedding, e.embedding);
        assert.equal(back.deleted, false);
        assert.equal(back.supersededBy, undefined);
        await b.putEntry({
          id: 'bare',
          owner: 'user:a',
          tier: 'USER_OBSERVED',
          bytes: new Uint8Array([1]),
          leafIndex: 1,
          macKid: 'm',
          mac: new Uint8Array(1),
        });
        const bare = await b.getEntry('bare');
        assert.equal(bare?.content, undefined);
        assert.equal(bare?.embedding, undefined);
        assert.equal(bare?.expiresAtNs, undefined);
        const odd = vec(5);
        odd[7] = -2.5e-39; // a subnormal float4 survives exactly
        odd[8] = -0.1;
        await b.putEntry(meta('odd', 2, { embedding: odd }));
        assert.deepEqual((await b.getEntry('odd'))?.embedding, odd);
        await rejectsWith(
          b.putEntry(meta('short', 3, { embedding: new Float32Array(3) })),
          'INPUT_INVALID',
        );
      }),
  },
  {
    name: 'deletion is idempotent, supersession is set once, expiry only moves forward',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.putEntry(meta('a', 0));
        await b.putEntry(meta('forever', 1, { expiresAtNs: undefined }));
        await b.markDeleted('a');
        await b.markDeleted('a');
        assert.equal((await b.getEntry('a'))?.deleted, true);
        await b.markSuperseded('a', 'a2');
        await rejectsWith(b.markSuperseded('a', 'a3'), 'STORAGE_CONFLICT');
        assert.equal((await b.getEntry('a'))?.supersededBy, 'a2');
        assert.equal(await b.extendExpiry('a', NOW + 5000n), NOW + 5000n);
        assert.equal(await b.extendExpiry('a', NOW), NOW + 5000n, 'never moves back');
        assert.equal((await b.getEntry('a'))?.expiresAtNs, NOW + 5000n);
        assert.equal(await b.extendExpiry('forever', NOW), undefined);
        assert.equal((await b.getEntry('forever'))?.expiresAtNs, undefined);
        await rejectsWith(b.markDeleted('nope'), 'STORAGE_NOT_FOUND');
        await rejectsWith(b.markSuperseded('nope', 'x'), 'STORAGE_NOT_FOUND');
        await rejectsWith(b.extendExpiry('nope', 1n), 'STORAGE_NOT_FOUND');
      }),
  },
  {
    name: 'vector search ranks by cosine and leaves out deleted, superseded and expired rows',
    run: (f) =>
      withBackend(f, async (b) => {
        for (let i = 0; i < 6; i++) await b.putEntry(meta(`e${i}`, i));
        await b.putEntry(meta('noemb', 6, { embedding: undefined }));
        await b.markDeleted('e1');
        await b.markSuperseded('e2', 'e9');
        await b.putEntry(meta('old', 7, { embedding: vec(3), expiresAtNs: NOW }));
        const hits = await b.searchEntries({ embedding: vec(3), nowNs: NOW, limit: 10 });
        assert.deepEqual(hitIds(hits).slice(0, 1), ['e3']);
        assert.deepEqual(hitIds(hits).sort(), ['e0', 'e3', 'e4', 'e5']);
        assert.ok(hits[0]!.vectorScore! > 0.9 && hits[0]!.vectorScore! <= 1 + 1e-6);
        for (let i = 1; i < hits.length; i++)
          assert.ok(hits[i - 1]!.vectorScore! >= hits[i]!.vectorScore!);
        assert.equal(hits[0]!.lexicalScore, undefined);
        assert.equal(
          (await b.searchEntries({ embedding: vec(3), nowNs: NOW, limit: 2 })).length,
          2,
        );
        assert.ok(
          hitIds(await b.searchEntries({ embedding: vec(3), nowNs: NOW - 1n, limit: 10 })).includes(
            'old',
          ),
        );
        await rejectsWith(b.searchEntries({ nowNs: NOW, limit: 1 }), 'INPUT_INVALID');
        await rejectsWith(
          b.searchEntries({ embedding: vec(1), nowNs: NOW, limit: 0 }),
          'INPUT_INVALID',
        );
      }),
  },
  {
    name: 'search filters by tier, kind and source URI',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.putEntry(meta('u', 0, { tier: 'USER_VERIFIED' }));
        await b.putEntry(meta('w', 1, { tier: 'EXTERNAL_WEB', kind: 'page', uri: 'https://x' }));
        await b.putEntry(meta('t', 2, { tier: 'EXTERNAL_TOOL', kind: 'page' }));
        const q = { embedding: vec(0), nowNs: NOW, limit: 10 };
        const tiers: SourceTier[] = ['USER_VERIFIED', 'EXTERNAL_TOOL'];
        assert.deepEqual(hitIds(await b.searchEntries({ ...q, tiers })).sort(), ['t', 'u']);
        assert.deepEqual(hitIds(await b.searchEntries({ ...q, kinds: ['page'] })).sort(), [
          't',
          'w',
        ]);
        assert.deepEqual(hitIds(await b.searchEntries({ ...q, uri: 'https://x' })), ['w']);
        assert.deepEqual(hitIds(await b.searchEntries({ ...q, tiers: [] })), []);
      }),
  },
  {
    name: 'lexical search matches any query word and ranks fuller matches first; hybrid carries both scores',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.putEntry(meta('both', 0, { content: 'The zebra likes quantum physics' }));
        await b.putEntry(meta('one', 1, { content: 'a quantum leap' }));
        await b.putEntry(meta('none', 2, { content: 'nothing relevant here' }));
        const lex = await b.searchEntries({ text: 'zebra quantum', nowNs: NOW, limit: 10 });
        assert.deepEqual(hitIds(lex), ['both', 'one']);
        // BM25 (ADR 0050): positive and finite, not bounded by 1.
        for (const h of lex) assert.ok(h.lexicalScore! > 0 && Number.isFinite(h.lexicalScore));
        assert.ok(lex[0]!.lexicalScore! > lex[1]!.lexicalScore!);
        assert.equal(lex[0]!.vectorScore, undefined);
        assert.deepEqual(await b.searchEntries({ text: 'absent', nowNs: NOW, limit: 5 }), []);
        const hy = await b.searchEntries({
          text: 'zebra',
          embedding: vec(2),
          nowNs: NOW,
          limit: 1,
        });
        assert.deepEqual(hitIds(hy).sort(), ['both', 'none']);
        const none = hy.find((h) => h.entry.id === 'none')!;
        assert.equal(none.lexicalScore, 0);
        assert.ok(none.vectorScore! > 0.9);
        const both = hy.find((h) => h.entry.id === 'both')!;
        assert.ok(both.lexicalScore! > 0 && both.vectorScore !== undefined);
      }),
  },
  {
    name: 'listing for getAll pages in log order; purge look-ups find by source and hash; counts are per tier',
    run: (f) =>
      withBackend(f, async (b) => {
        for (let i = 0; i < 5; i++)
          await b.putEntry(
            meta(`e${i}`, i, {
              uri: i < 2 ? 'chat:bad' : 'chat:ok',
              srcHash: i === 4 ? 'cd'.repeat(32) : 'ab'.repeat(32),
            }),
          );
        await b.putEntry(
          meta('op', 5, { owner: 'operator:deploy', tier: 'OPERATOR', expiresAtNs: undefined }),
        );
        await b.markDeleted('e1');
        await b.markSuperseded('e2', 'e3');
        await b.putEntry(meta('gone', 6, { expiresAtNs: NOW }));
        assert.deepEqual(ids(await b.listEntriesFor({ limit: 10 })), [
          'e0',
          'e3',
          'e4',
          'op',
          'gone',
        ]);
        assert.deepEqual(ids(await b.listEntriesFor({ limit: 10, nowNs: NOW })), [
          'e0',
          'e3',
          'e4',
          'op',
        ]);
        assert.deepEqual(ids(await b.listEntriesFor({ limit: 2, offset: 1 })), ['e3', 'e4']);
        assert.deepEqual(
          ids(
            await b.listEntriesFor({
              limit: 10,
              includeDeleted: true,
              includeSuperseded: true,
              owner: 'user:a',
            }),
          ),
          ['e0', 'e1', 'e2', 'e3', 'e4', 'gone'],
        );
        assert.deepEqual(ids(await b.findEntriesBy({ uri: 'chat:bad' })), ['e0']);
        assert.deepEqual(ids(await b.findEntriesBy({ uri: 'chat:bad', includeDeleted: true })), [
          'e0',
          'e1',
        ]);
        assert.deepEqual(ids(await b.findEntriesBy({ srcHash: 'cd'.repeat(32) })), ['e4']);
        assert.deepEqual(ids(await b.findEntriesBy({ uri: 'chat:ok', srcHash: 'ab'.repeat(32) })), [
          'e2',
          'e3',
        ]);
        await rejectsWith(b.findEntriesBy({}), 'INPUT_INVALID');
        assert.deepEqual(await b.countEntries({ nowNs: NOW }), [
          { tier: 'OPERATOR', count: 1 },
          { tier: 'USER_OBSERVED', count: 3 },
        ]);
        assert.deepEqual(await b.countEntries(), [
          { tier: 'OPERATOR', count: 1 },
          { tier: 'USER_OBSERVED', count: 4 },
        ]);
      }),
  },
  {
    name: 'quotas are atomic: 50 concurrent consumes with limit 20 admit exactly 20',
    run: (f) =>
      withBackend(f, async (b) => {
        const a = scoped(b, 'user:a');
        const results = await Promise.all(
          Array.from({ length: 50 }, () =>
            a.consumeQuota('user:a', 'USER_OBSERVED', '2025-01-01', 20),
          ),
        );
        assert.equal(results.filter((r) => r.ok).length, 20);
        assert.deepEqual(
          [...results.filter((r) => r.ok).map((r) => r.used)].sort((x, y) => x - y),
          Array.from({ length: 20 }, (_, i) => i + 1),
        );
        for (const r of results.filter((x) => !x.ok)) assert.equal(r.used, 20);
        assert.equal(await a.quotaUsed('user:a', 'USER_OBSERVED', '2025-01-01'), 20);
        assert.deepEqual(await a.consumeQuota('user:a', 'USER_OBSERVED', '2025-01-02', 20), {
          ok: true,
          used: 1,
        });
        assert.deepEqual(await a.consumeQuota('user:a', 'USER_VERIFIED', '2025-01-01', 0), {
          ok: false,
          used: 0,
        });
        assert.equal(await b.quotaUsed('user:a', 'USER_VERIFIED', '2025-01-01'), 0);
      }),
  },
  {
    name: 'consumeQuotas admits each row’s demands in order up to its limit, other rows unaffected',
    run: (f) =>
      withBackend(f, async (b) => {
        const consume = quotas(b);
        const D = '2025-02-01';
        const d = (principal: string, limit: number, tier: SourceTier = 'USER_OBSERVED') => ({
          principal,
          tier,
          dayKey: D,
          limit,
        });
        // user:a has 3 of 5 used: of its next 4 demands the first 2 pass; user:b (limit 3,
        // fresh) passes all 3; the same principal's other tier is its own row.
        for (let i = 0; i < 3; i++) await b.consumeQuota('user:a', 'USER_OBSERVED', D, 5);
        const got = await consume([
          d('user:a', 5),
          d('user:b', 3),
          d('user:a', 5),
          d('user:a', 5, 'USER_VERIFIED'),
          d('user:a', 5),
          d('user:b', 3),
          d('user:a', 5),
          d('user:b', 3),
        ]);
        assert.deepEqual(got, [true, true, true, true, false, true, false, true]);
        assert.equal(await b.quotaUsed('user:a', 'USER_OBSERVED', D), 5);
        assert.equal(await b.quotaUsed('user:a', 'USER_VERIFIED', D), 1);
        assert.equal(await b.quotaUsed('user:b', 'USER_OBSERVED', D), 3);
        // A full row refuses everything and stays as it is; a limit below 1 admits nothing.
        assert.deepEqual(await consume([d('user:b', 3), d('user:c', 0), d('user:b', 3)]), [
          false,
          false,
          false,
        ]);
        assert.equal(await b.quotaUsed('user:b', 'USER_OBSERVED', D), 3);
        assert.equal(await b.quotaUsed('user:c', 'USER_OBSERVED', D), 0);
        // More demands than the limit on a fresh row: exactly the first `limit`.
        assert.deepEqual(await consume(Array.from({ length: 6 }, () => d('user:d', 4))), [
          true,
          true,
          true,
          true,
          false,
          false,
        ]);
        assert.equal(await b.quotaUsed('user:d', 'USER_OBSERVED', D), 4);
        // Mixed limits on one row: each demand against its own limit, in order.
        assert.deepEqual(
          await consume([d('user:e', 1), d('user:e', 1), d('user:e', 3), d('user:e', 2)]),
          [true, false, true, false],
        );
        assert.equal(await b.quotaUsed('user:e', 'USER_OBSERVED', D), 2);
        assert.deepEqual(await consume([]), []);
        // Many rows in one batch (one multi-row statement): fresh rows, then every row crossing
        // its limit at once (all settled under their locks).
        const many = Array.from({ length: 300 }, (_, i) => `user:m${i}`);
        const twice = many.flatMap((p) => [d(p, 3), d(p, 3)]);
        assert.ok((await consume(twice)).every((x) => x));
        assert.deepEqual(
          await consume(twice),
          many.flatMap(() => [true, false]),
        );
        assert.equal(await b.quotaUsed('user:m299', 'USER_OBSERVED', D), 3);
        // Bad input changes nothing.
        await rejectsWith(
          consume([d('user:f', 2), { ...d('user:f', 2), tier: 'NOPE' as SourceTier }]),
          'INPUT_INVALID',
        );
        await rejectsWith(
          consume([d('user:f', 2), { ...d('user:f', 2), limit: 1.5 }]),
          'INPUT_INVALID',
        );
        assert.equal(await b.quotaUsed('user:f', 'USER_OBSERVED', D), 0);
      }),
  },
  {
    name: 'consumeQuotas is atomic under concurrency, counts inside a transaction only on commit, and is scoped',
    run: (f) =>
      withBackend(f, async (b) => {
        const D = '2025-02-02';
        const d = (principal: string, limit: number) => ({
          principal,
          tier: 'USER_OBSERVED' as const,
          dayKey: D,
          limit,
        });
        // 8 concurrent batches of 7 demands against a limit of 20: exactly 20 admitted, and
        // within each batch the admitted ones come first (queue order).
        const results = await Promise.all(
          Array.from({ length: 8 }, () =>
            quotas(b)(Array.from({ length: 7 }, () => d('user:a', 20))),
          ),
        );
        assert.equal(results.flat().filter((x) => x).length, 20);
        for (const r of results)
          assert.deepEqual(
            r,
            [...r].sort((x, y) => Number(y) - Number(x)),
          );
        assert.equal(await b.quotaUsed('user:a', 'USER_OBSERVED', D), 20);
        // A transaction that fails counts nothing; one that commits counts what it admitted.
        await assert.rejects(
          b.transaction(async (tx) => {
            assert.deepEqual(await quotas(tx)([d('user:b', 2), d('user:b', 2), d('user:b', 2)]), [
              true,
              true,
              false,
            ]);
            assert.equal(await tx.quotaUsed('user:b', 'USER_OBSERVED', D), 2);
            throw new Error('abort');
          }),
        );
        assert.equal(await b.quotaUsed('user:b', 'USER_OBSERVED', D), 0);
        await b.transaction(async (tx) => {
          await tx.consumeQuota('user:b', 'USER_OBSERVED', D, 2);
          assert.deepEqual(await quotas(tx)([d('user:b', 2), d('user:b', 2)]), [true, false]);
        });
        assert.equal(await b.quotaUsed('user:b', 'USER_OBSERVED', D), 2);
        // A principal view consumes only its own quota; naming another changes nothing.
        const A = scoped(b, 'user:c');
        await rejectsWith(quotas(A)([d('user:c', 5), d('user:x', 5)]), 'STORAGE_FAILED', 'denied');
        assert.equal(await b.quotaUsed('user:c', 'USER_OBSERVED', D), 0);
        assert.equal(await b.quotaUsed('user:x', 'USER_OBSERVED', D), 0);
        assert.deepEqual(await quotas(A)([d('user:c', 1), d('user:c', 1)]), [true, false]);
        assert.equal(await b.quotaUsed('user:c', 'USER_OBSERVED', D), 1);
      }),
  },
  {
    name: 'review items are decided once',
    run: (f) =>
      withBackend(f, async (b) => {
        const item = {
          id: 'r1',
          principal: 'user:a',
          tier: 'USER_OBSERVED' as const,
          content: 'hold me',
          reasons: ['instruction-marker'],
          payload: new Uint8Array([1, 2, 3]),
          createdAtNs: 5n,
        };
        await scoped(b, 'user:a').enqueueReview(item);
        await b.enqueueReview({ ...item, id: 'r2', createdAtNs: 6n });
        await rejectsWith(b.enqueueReview(item), 'STORAGE_CONFLICT');
        const got = await b.getReview('r1');
        assert.deepEqual(got, { ...item, status: 'pending' });
        assert.deepEqual(ids(await b.listReviews({ status: 'pending' })), ['r1', 'r2']);
        const d = await b.decideReview('r1', {
          status: 'approved',
          decidedBy: 'operator:o',
          decidedAtNs: 9n,
          memoryId: 'm1',
        });
        assert.equal(d.status, 'approved');
        assert.equal(d.memoryId, 'm1');
        await rejectsWith(
          b.decideReview('r1', { status: 'rejected', decidedBy: 'operator:o', decidedAtNs: 10n }),
          'STORAGE_CONFLICT',
        );
        await rejectsWith(
          b.decideReview('nope', { status: 'rejected', decidedBy: 'o', decidedAtNs: 10n }),
          'STORAGE_NOT_FOUND',
        );
        assert.deepEqual(ids(await b.listReviews({ status: 'pending' })), ['r2']);
        assert.equal((await b.getReview('r1'))?.decidedAtNs, 9n);
        assert.deepEqual(ids(await b.listReviews()), ['r1', 'r2']);
      }),
  },
  {
    name: 'audit events append in batches, in order, all or nothing',
    run: (f) =>
      withBackend(f, async (b) => {
        if (b.appendAudits === undefined)
          throw new Error('appendAudits missing: every shipped backend has it');
        await b.appendAudits([]);
        const ev = (id: string, atNs: bigint, subject?: string) => ({
          id,
          atNs,
          actor: 'user:a',
          action: 'detect.query',
          ...(subject === undefined ? {} : { subject }),
          details: { v: `${id}'"\\,{}` },
        });
        await b.appendAudits([ev('b1', 5n, 's'), ev('b2', 5n), ev('b3', 6n, 's')]);
        // A reused id (or a repeated one) appends none of the batch.
        await rejectsWith(b.appendAudits([ev('b4', 7n), ev('b1', 8n)]), 'STORAGE_CONFLICT');
        await rejectsWith(b.appendAudits([ev('b5', 7n), ev('b5', 8n)]), 'STORAGE_CONFLICT');
        // Details JSON cannot carry: INPUT_INVALID, nothing appended.
        await rejectsWith(
          b.appendAudits([ev('b6', 9n), { ...ev('b7', 9n), details: { n: 1n } as never }]),
          'INPUT_INVALID',
        );
        const all = await b.listAudit({ limit: 10 });
        assert.deepEqual(ids(all), ['b1', 'b2', 'b3']);
        assert.deepEqual(all[0]!.details, { v: `b1'"\\,{}` });
        assert.equal(all[1]!.subject, undefined);
        assert.deepEqual(ids(await b.listAudit({ limit: 10, subject: 's' })), ['b1', 'b3']);
      }),
  },
  {
    name: 'audit events append once and list in time order',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.appendAudit({
          id: 'a2',
          atNs: 20n,
          actor: 'system',
          action: 'entry.dropped',
          subject: 'e1',
          details: { code: 'MAC_INVALID', n: 1 },
        });
        await b.appendAudit({
          id: 'a1',
          atNs: 10n,
          actor: 'user:a',
          action: 'purge',
          details: { nested: { z: [1, 'x', null] }, a: true },
        });
        await rejectsWith(
          b.appendAudit({ id: 'a1', atNs: 30n, actor: 'x', action: 'y', details: {} }),
          'STORAGE_CONFLICT',
        );
        const all = await b.listAudit({ limit: 10 });
        assert.deepEqual(ids(all), ['a1', 'a2']);
        assert.deepEqual(all[0]!.details, { nested: { z: [1, 'x', null] }, a: true });
        assert.equal(all[0]!.subject, undefined);
        assert.deepEqual(ids(await b.listAudit({ limit: 10, afterNs: 10n })), ['a2']);
        assert.deepEqual(ids(await b.listAudit({ limit: 10, subject: 'e1' })), ['a2']);
        assert.deepEqual(ids(await b.listAudit({ limit: 1 })), ['a1']);
        // filters by actor and by action prefix (literal: '%' and '_' are not wildcards), newest first
        await b.appendAudit({
          id: 'g1',
          atNs: 30n,
          actor: 'user:a',
          action: 'gate.deny',
          details: {},
        });
        await b.appendAudit({
          id: 'g2',
          atNs: 40n,
          actor: 'user:b',
          action: 'gate.allow',
          details: {},
        });
        await b.appendAudit({ id: 'g3', atNs: 50n, actor: 'user:a', action: 'gatex', details: {} });
        await b.appendAudit({
          id: 'g4',
          atNs: 50n,
          actor: 'user:a',
          action: 'gate.allow',
          details: {},
        });
        assert.deepEqual(ids(await b.listAudit({ limit: 10, actionPrefix: 'gate.' })), [
          'g1',
          'g2',
          'g4',
        ]);
        assert.deepEqual(ids(await b.listAudit({ limit: 10, actionPrefix: 'gate_' })), []);
        assert.deepEqual(ids(await b.listAudit({ limit: 10, actionPrefix: 'gate%' })), []);
        assert.deepEqual(
          ids(await b.listAudit({ limit: 10, actionPrefix: 'gate.', newestFirst: true })),
          ['g4', 'g2', 'g1'],
        );
        assert.deepEqual(ids(await b.listAudit({ limit: 2, actor: 'user:a', newestFirst: true })), [
          'g4',
          'g3',
        ]);
        assert.deepEqual(
          ids(await b.listAudit({ limit: 10, actor: 'user:a', actionPrefix: 'gate.' })),
          ['g1', 'g4'],
        );
      }),
  },
  {
    name: 'API keys are found by hash until revoked',
    run: (f) =>
      withBackend(f, async (b) => {
        const h = new Uint8Array(32).fill(3);
        await b.putApiKey({ principalId: 'user:a', keyHash: h, createdAtNs: 1n });
        await rejectsWith(
          b.putApiKey({ principalId: 'user:b', keyHash: h, createdAtNs: 2n }),
          'STORAGE_CONFLICT',
        );
        assert.equal(await b.findApiKey(h), 'user:a');
        assert.equal(await b.findApiKey(new Uint8Array(32)), undefined);
        await b.revokeApiKey(h);
        await b.revokeApiKey(h);
        assert.equal(await b.findApiKey(h), undefined);
        await rejectsWith(b.revokeApiKey(new Uint8Array(32).fill(1)), 'STORAGE_NOT_FOUND');
        await rejectsWith(b.findApiKey(new Uint8Array(5)), 'INPUT_INVALID');
      }),
  },
  {
    name: 'state changes in a failed transaction leave nothing behind',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.putEntry(meta('a', 0));
        await assert.rejects(
          b.transaction(async (tx) => {
            await tx.putEntry(meta('a2', 1));
            await tx.markSuperseded('a', 'a2');
            assert.equal((await tx.getEntry('a'))?.supersededBy, 'a2');
            await tx.consumeQuota('user:a', 'USER_OBSERVED', 'd', 5);
            await tx.appendAudit({ id: 'x', atNs: 1n, actor: 's', action: 'update', details: {} });
            throw new Error('abort');
          }),
        );
        assert.equal((await b.getEntry('a'))?.supersededBy, undefined);
        assert.equal(await b.getEntry('a2'), undefined);
        assert.equal(await b.quotaUsed('user:a', 'USER_OBSERVED', 'd'), 0);
        assert.deepEqual(await b.listAudit({ limit: 5 }), []);
        await b.transaction(async (tx) => {
          await tx.putEntry(meta('a2', 1));
          await tx.markSuperseded('a', 'a2');
          await tx.markDeleted('a2');
        });
        assert.equal((await b.getEntry('a'))?.supersededBy, 'a2');
        assert.equal((await b.getEntry('a2'))?.deleted, true);
      }),
  },
];
