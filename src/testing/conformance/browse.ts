/**
 * @module testing/conformance/browse
 * Conformance case for `browseEntries` (the investigation listing): newest first, in every
 * state, each filter (owner, tier, kind, source, state, text, write time) agreeing with the
 * same predicate applied to the full listing, keyset pages that neither repeat nor skip a row
 * — also when rows are written between two pages — a principal view confined to its own rows
 * plus OPERATOR rows, no embeddings returned, and bad arguments refused as `INPUT_INVALID`.
 */
import assert from 'node:assert/strict';
import type { BrowseQuery, EntryStatus, StorageBackend, StoredEntry } from '../../ports/storage.js';
import { NOW, meta, rejectsWith, scoped, withBackend } from './memory-api.js';
import type { ConformanceCase } from './types.js';

type Browse = NonNullable<StorageBackend['browseEntries']>;

function browseOf(b: StorageBackend): Browse {
  assert.ok(b.browseEntries, 'every shipped backend implements browseEntries');
  return b.browseEntries.bind(b);
}

const statusOf = (e: StoredEntry): EntryStatus =>
  e.deleted === true
    ? 'deleted'
    : e.supersededBy !== undefined
      ? 'superseded'
      : e.expiresAtNs !== undefined && e.expiresAtNs <= NOW
        ? 'expired'
        : 'live';

/** Every page with page size `limit`, checking the keyset and the order of each. */
async function allPages(
  b: StorageBackend,
  q: Omit<BrowseQuery, 'limit' | 'nowNs'>,
  limit: number,
): Promise<StoredEntry[]> {
  const browse = browseOf(b);
  const out: StoredEntry[] = [];
  let before: number | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const page = await browse({
      ...q,
      nowNs: NOW,
      limit,
      ...(before === undefined ? {} : { beforeLeafIndex: before }),
    });
    assert.ok(page.length <= limit, 'a page holds at most limit rows');
    for (let i = 1; i < page.length; i++)
      assert.ok(page[i - 1]!.leafIndex > page[i]!.leafIndex, 'newest first');
    if (before !== undefined)
      for (const e of page) assert.ok(e.leafIndex < before, 'rows come before the cursor');
    out.push(...page);
    if (page.length < limit) return out;
    before = page[page.length - 1]!.leafIndex;
  }
  throw new Error('paging did not end');
}

const ids = (es: readonly StoredEntry[]): string[] => es.map((e) => e.id);

/** Two users and an OPERATOR row, in every state, with varied tiers, kinds, sources, times and text. */
async function seed(b: StorageBackend): Promise<void> {
  const A = scoped(b, 'user:a');
  const B = scoped(b, 'user:b');
  let leaf = 0;
  const tiers = ['USER_VERIFIED', 'USER_OBSERVED', 'EXTERNAL_WEB'] as const;
  for (let i = 0; i < 9; i++) {
    await A.putEntry(
      meta(`a${i}`, leaf++, {
        tier: tiers[i % 3],
        kind: i % 2 === 0 ? 'fact' : 'preference',
        uri: i % 4 === 0 ? 'https://example.test/page' : 'chat:s1',
        createdAtNs: 100n + BigInt(i) * 10n,
        expiresAtNs: i === 4 ? NOW - 1n : NOW + 1000n,
        content: i === 3 ? 'Alice met the QUARTERLY Auditor' : `alice note ${i}`,
      }),
    );
    if (i % 3 === 1)
      await B.putEntry(
        meta(`b${i}`, leaf++, {
          owner: 'user:b',
          writer: 'user:b',
          createdAtNs: 105n + BigInt(i) * 10n,
          content: i === 4 ? 'bob: quarterly auditor visit' : `bob note ${i}`,
        }),
      );
  }
  await b.putEntry(
    meta('op1', leaf++, {
      owner: 'operator:deploy',
      writer: 'operator:deploy',
      tier: 'OPERATOR',
      expiresAtNs: undefined,
      createdAtNs: undefined,
      content: 'Operator policy: quarterly review',
    }),
  );
  await A.markDeleted('a1');
  await A.markSuperseded('a2', 'a5');
}

export const browseCases: readonly ConformanceCase[] = [
  {
    name: 'browseEntries: newest first in every state, each filter pushed down, keyset pages, scoped, checked',
    run: (f) =>
      withBackend(f, async (b) => {
        await seed(b);
        const browse = browseOf(b);
        const everything = await browse({ nowNs: NOW, limit: 1000 });
        assert.deepEqual(ids(everything), [
          'op1',
          'a8',
          'b7',
          'a7',
          'a6',
          'a5',
          'b4',
          'a4',
          'a3',
          'a2',
          'b1',
          'a1',
          'a0',
        ]);
        for (const e of everything)
          assert.equal(e.embedding, undefined, 'no embedding on a browse row');
        const byId = new Map(everything.map((e) => [e.id, e]));
        assert.equal(statusOf(byId.get('a1')!), 'deleted');
        assert.equal(statusOf(byId.get('a2')!), 'superseded');
        assert.equal(statusOf(byId.get('a4')!), 'expired');
        assert.deepEqual(byId.get('a3')!.bytes, meta('a3', byId.get('a3')!.leafIndex).bytes);

        // Every filter agrees with the same predicate over the full listing, and pages (size 2)
        // concatenate to the one-page answer.
        const checks: [Omit<BrowseQuery, 'limit' | 'nowNs'>, (e: StoredEntry) => boolean][] = [
          [{}, () => true],
          [{ owner: 'user:b' }, (e) => e.owner === 'user:b'],
          [
            { tiers: ['EXTERNAL_WEB', 'OPERATOR'] },
            (e) => e.tier === 'EXTERNAL_WEB' || e.tier === 'OPERATOR',
          ],
          [{ kinds: ['preference'] }, (e) => e.kind === 'preference'],
          [{ uri: 'https://example.test/page' }, (e) => e.uri === 'https://example.test/page'],
          [{ statuses: ['live'] }, (e) => statusOf(e) === 'live'],
          [{ statuses: ['deleted', 'superseded', 'expired'] }, (e) => statusOf(e) !== 'live'],
          [{ text: 'quarterly AUDITOR' }, (e) => /quarterly auditor/i.test(e.content ?? '')],
          [{ text: 'Quarterly' }, (e) => /quarterly/i.test(e.content ?? '')],
          [
            { createdFromNs: 130n, createdBeforeNs: 160n },
            (e) => e.createdAtNs !== undefined && e.createdAtNs >= 130n && e.createdAtNs < 160n,
          ],
          [
            {
              owner: 'user:a',
              statuses: ['live', 'expired'],
              kinds: ['fact'],
              createdFromNs: 100n,
            },
            (e) =>
              e.owner === 'user:a' &&
              ['live', 'expired'].includes(statusOf(e)) &&
              e.kind === 'fact',
          ],
        ];
        for (const [q, pred] of checks) {
          const want = ids(everything.filter(pred));
          assert.deepEqual(
            ids(await browse({ ...q, nowNs: NOW, limit: 1000 })),
            want,
            JSON.stringify(q, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)),
          );
          assert.deepEqual(ids(await allPages(b, q, 2)), want);
        }
        assert.ok((await browse({ text: 'quarterly', nowNs: NOW, limit: 1000 })).length === 3);
        assert.deepEqual(ids(await browse({ text: 'no such words', nowNs: NOW, limit: 10 })), []);

        // Keyset: a row written between two pages shifts nothing.
        const first = await browse({ nowNs: NOW, limit: 4 });
        await scoped(b, 'user:a').putEntry(meta('a-late', 100));
        const second = await browse({
          nowNs: NOW,
          limit: 4,
          beforeLeafIndex: first[first.length - 1]!.leafIndex,
        });
        assert.deepEqual([...ids(first), ...ids(second)], ids(everything).slice(0, 8));
        assert.equal((await browse({ nowNs: NOW, limit: 1 }))[0]!.id, 'a-late');

        // A principal view: its own rows plus OPERATOR rows, whatever the filters ask.
        const A = browseOf(scoped(b, 'user:a'));
        const seenByA = await A({ nowNs: NOW, limit: 1000 });
        assert.ok(seenByA.every((e) => e.owner === 'user:a' || e.tier === 'OPERATOR'));
        assert.ok(seenByA.some((e) => e.id === 'op1'));
        assert.deepEqual(ids(await A({ owner: 'user:b', nowNs: NOW, limit: 1000 })), []);
        assert.deepEqual(ids(await A({ text: 'bob', nowNs: NOW, limit: 1000 })), []);

        // Bad arguments: coded, and nothing runs.
        for (const bad of [
          { limit: 0 },
          { limit: 1001 },
          { limit: 1.5 },
          { beforeLeafIndex: -1 },
          { text: '' },
          { text: 'a\0b' },
          { text: 'x'.repeat(513) },
          { owner: '' },
          { uri: 'chat:\0' },
          { kinds: ['fact\0'] },
          { tiers: ['ROOT'] },
          { statuses: ['gone'] },
          { createdFromNs: 2n ** 63n },
        ] as Partial<BrowseQuery>[]) {
          await rejectsWith(
            browse({ nowNs: NOW, limit: 10, ...bad } as BrowseQuery),
            'INPUT_INVALID',
          );
        }
      }),
  },
];
