/**
 * @module testing/conformance/scan
 * Conformance cases for `scanEntries` (the read model's partition loader, ADR 0018): in every
 * scope it returns exactly the rows `listEntries` returns there that are live (not deleted,
 * not superseded) and carry an embedding — same order, same fields, the embedding's float4
 * bit patterns unchanged — in keyset pages; a principal view never returns another
 * principal's rows; bad arguments are `INPUT_INVALID`.
 */
import assert from 'node:assert/strict';
import type { StorageBackend, StoredEntry } from '../../ports/storage.js';
import { NOW, meta, rejectsWith, scoped, vec, withBackend } from './memory-api.js';
import type { ConformanceCase } from './types.js';

type Scan = NonNullable<StorageBackend['scanEntries']>;

function scanOf(b: StorageBackend): Scan {
  assert.ok(b.scanEntries, 'every shipped backend implements scanEntries');
  return b.scanEntries.bind(b);
}

/** Every page of a scan with page size `limit`, checking each page's keyset bound. */
async function scanAll(b: StorageBackend, limit: number): Promise<StoredEntry[]> {
  const scan = scanOf(b);
  const out: StoredEntry[] = [];
  let after = -1;
  for (;;) {
    const page = await scan({ afterLeafIndex: after, limit });
    assert.ok(page.length <= limit, 'a page holds at most limit rows');
    for (const e of page) assert.ok(e.leafIndex > after, 'rows come after the keyset bound');
    out.push(...page);
    if (page.length < limit) return out;
    after = page[page.length - 1]!.leafIndex;
  }
}

const isLiveEmbedded = (e: StoredEntry): boolean =>
  e.deleted !== true && e.supersededBy === undefined && e.embedding !== undefined;

/** The embedding's float4 bit patterns (so -0 and subnormals are compared exactly). */
const bits = (v: Float32Array | undefined): number[] =>
  v === undefined ? [] : Array.from(new Uint32Array(v.buffer, v.byteOffset, v.length));

/** An embedding with awkward float4 values: -0, subnormals, extremes, odd mantissas. */
function oddVector(seed: number): Float32Array {
  const v = vec(seed, 0.013);
  v[1] = -0;
  v[2] = 1.4e-45; // smallest subnormal
  v[3] = -2.5e-39;
  v[4] = 3.4028234663852886e38; // largest float4
  v[5] = -1.1754943508222875e-38; // smallest normal
  v[6] = 0.1; // not exact in binary
  v[7] = Math.fround(Math.PI) * (seed + 1);
  return v;
}

async function seed(b: StorageBackend): Promise<void> {
  const A = scoped(b, 'user:a');
  const B = scoped(b, 'user:b');
  let leaf = 0;
  for (let i = 0; i < 12; i++) {
    await A.putEntry(meta(`a${i}`, leaf++, { embedding: oddVector(i) }));
    if (i % 3 === 0) await B.putEntry(meta(`b${i}`, leaf++, { owner: 'user:b', writer: 'user:b' }));
  }
  await b.putEntry(
    meta('op1', leaf++, {
      owner: 'operator:deploy',
      writer: 'operator:deploy',
      tier: 'OPERATOR',
      expiresAtNs: undefined,
      uri: undefined,
      kind: undefined,
      srcHash: undefined,
    }),
  );
  // Not scanned: deleted, superseded, no embedding.
  await A.putEntry(meta('a-del', leaf++));
  await A.markDeleted('a-del');
  await A.putEntry(meta('a-old', leaf++));
  await A.putEntry(meta('a-new', leaf++));
  await A.markSuperseded('a-old', 'a-new');
  await A.putEntry(meta('a-bare', leaf++, { embedding: undefined, content: undefined }));
  // Scanned although expired (a renewal may revive it) and although it has no optional fields.
  await A.putEntry(meta('a-expired', leaf++, { expiresAtNs: NOW - 1n }));
  await A.putEntry(
    meta('a-min', leaf++, {
      writer: undefined,
      kind: undefined,
      createdAtNs: undefined,
      expiresAtNs: undefined,
      content: undefined,
      uri: undefined,
      srcHash: undefined,
    }),
  );
  await b.putEntry(meta('op-del', leaf++, { owner: 'operator:deploy', tier: 'OPERATOR' }));
  await b.markDeleted('op-del');
  await B.putEntry(meta('b-last', leaf++, { owner: 'user:b', writer: 'user:b' }));
}

export const scanCases: readonly ConformanceCase[] = [
  {
    name: 'scanEntries returns the live embedded rows of listEntries in every scope, exactly, in pages',
    run: (f) =>
      withBackend(f, async (b) => {
        await seed(b);
        for (const view of [b, scoped(b, 'user:a'), scoped(b, 'user:b'), scoped(b, 'user:c')]) {
          const expected = (await view.listEntries()).filter(isLiveEmbedded);
          for (const limit of [1, 4, 1000]) {
            const got = await scanAll(view, limit);
            assert.deepEqual(got, expected);
            assert.deepEqual(
              got.map((e) => bits(e.embedding)),
              expected.map((e) => bits(e.embedding)),
            );
          }
        }
        const ids = async (v: StorageBackend): Promise<string[]> =>
          (await scanAll(v, 5)).map((e) => e.id);
        const aIds = [
          ...Array.from({ length: 12 }, (_, i) => `a${i}`),
          'a-new',
          'a-expired',
          'a-min',
        ];
        assert.deepEqual(
          (await ids(scoped(b, 'user:a'))).sort(),
          [...aIds, 'op1'].sort(),
          'own live rows plus OPERATOR rows',
        );
        assert.deepEqual(
          await ids(scoped(b, 'user:b')),
          ['b0', 'b3', 'b6', 'b9', 'op1', 'b-last'],
          'B never gets A’s rows',
        );
        assert.deepEqual(await ids(scoped(b, 'user:c')), ['op1'], 'a principal with no rows');
        assert.equal((await ids(b)).length, aIds.length + 6, 'the system scope sees every owner');
      }),
  },
  {
    name: 'scanEntries keeps every float4 bit pattern and field as written',
    run: (f) =>
      withBackend(f, async (b) => {
        await seed(b);
        const got = new Map((await scanAll(scoped(b, 'user:a'), 3)).map((e) => [e.id, e]));
        for (let i = 0; i < 12; i++) {
          const e = got.get(`a${i}`);
          assert.ok(e);
          assert.deepEqual(bits(e.embedding), bits(oddVector(i)), `a${i} embedding`);
          assert.deepEqual(e.bytes, new Uint8Array([e.leafIndex & 0xff, 7]));
          assert.equal(e.owner, 'user:a');
          assert.equal(e.tier, 'USER_OBSERVED');
          assert.equal(e.macKid, 'm1');
          assert.deepEqual(e.mac, new Uint8Array(32).fill(9));
          assert.equal(e.writer, 'user:a');
          assert.equal(e.kind, 'fact');
          assert.equal(e.createdAtNs, 10n);
          assert.equal(e.expiresAtNs, NOW + 1000n);
          assert.equal(e.content, `entry a${i}`);
          assert.equal(e.uri, 'chat:s1');
          assert.equal(e.srcHash, 'ab'.repeat(32));
          assert.equal(e.deleted, false);
          assert.equal(e.supersededBy, undefined);
        }
        const min = got.get('a-min');
        assert.ok(min);
        for (const k of [
          'writer',
          'kind',
          'createdAtNs',
          'expiresAtNs',
          'content',
          'uri',
          'srcHash',
        ])
          assert.equal(k in min, false, `${k} absent, not undefined`);
        assert.equal(got.get('a-expired')?.expiresAtNs, NOW - 1n);
        // Returned arrays are the caller's: changing them changes nothing stored.
        const first = got.get('a0')!;
        first.embedding![0] = 42;
        first.bytes[0] = 42;
        const again = (await scanOf(scoped(b, 'user:a'))({ limit: 1 }))[0]!;
        assert.deepEqual(bits(again.embedding), bits(oddVector(0)));
        assert.notEqual(again.bytes[0], 42);
      }),
  },
  {
    name: 'scanEntries pages by leaf index: after the last row is empty, a large page crosses no row',
    run: (f) =>
      withBackend(f, async (b) => {
        const A = scoped(b, 'user:a');
        assert.deepEqual(await scanOf(A)({ limit: 10 }), [], 'an empty store');
        const n = 700; // large enough that a backend's response arrives in several chunks
        assert.ok(b.putEntries);
        await b.putEntries(
          Array.from({ length: n }, (_, i) =>
            meta(`r${i}`, i, { embedding: vec(i, 0.001 * (i % 97)) }),
          ),
        );
        const all = await scanOf(A)({ limit: 10_000 });
        assert.equal(all.length, n);
        assert.deepEqual(
          all.map((e) => e.leafIndex),
          Array.from({ length: n }, (_, i) => i),
        );
        for (const e of all)
          assert.deepEqual(bits(e.embedding), bits(vec(e.leafIndex, 0.001 * (e.leafIndex % 97))));
        const tail = await scanOf(A)({ afterLeafIndex: n - 3, limit: 10 });
        assert.deepEqual(
          tail.map((e) => e.id),
          [`r${n - 2}`, `r${n - 1}`],
        );
        assert.deepEqual(await scanOf(A)({ afterLeafIndex: n - 1, limit: 10 }), []);
        assert.deepEqual(await scanOf(A)({ afterLeafIndex: 10 ** 12, limit: 10 }), []);
      }),
  },
  {
    name: 'scanEntries refuses bad arguments with INPUT_INVALID',
    run: (f) =>
      withBackend(f, async (b) => {
        await b.putEntry(meta('a0', 0));
        for (const view of [b, scoped(b, 'user:a')]) {
          const scan = scanOf(view);
          for (const limit of [0, -1, 10_001, 1.5, Number.NaN])
            await rejectsWith(scan({ limit }), 'INPUT_INVALID');
          for (const afterLeafIndex of [-2, 0.5, Number.NaN, 2 ** 53])
            await rejectsWith(scan({ afterLeafIndex, limit: 10 }), 'INPUT_INVALID');
          assert.equal((await scan({ limit: 10 })).length, 1);
        }
      }),
  },
];
