/**
 * LangGraph.js's store specs for query ranking with the caller's embedding model, re-expressed
 * and run against two stores through one adapter: LangGraph's `InMemoryStore` (the control) and
 * `MemwardenStore` over the real Memory (embedded PGlite). Both get the same embedding model,
 * as each spec gives its store; memwarden ranks with it as LangGraph's stores do (ADR 0072), while
 * every put still passes the Memory's write path.
 *
 * SOURCE (cases re-expressed, not copied; MIT licence), langchain-ai/langgraphjs:
 * - libs/checkpoint/src/tests/vector.test.ts @ 3ebdba365dc9c50061f79b855ae195430c423269 — 7 cases
 * - libs/checkpoint/src/tests/vector-pagination.test.ts @ fa2eb3524ed32218a0347e3f67c4da093adf213f — 16
 * - libs/checkpoint/src/tests/vector-delete.test.ts @ 099e8ea56d860636e2bc299d8257def93f44f349 — 5
 * - libs/checkpoint/src/tests/vector-replacement.test.ts @ 032cad1a1e41c4d796ad5737dfdcd5409e71eb99 — 13
 * - libs/checkpoint/src/tests/batched-store-index.test.ts @ 4bdaf03261eab28405e90b0280d2a1ac924df7e0 — 8
 * - libs/checkpoint/src/tests/store-delimiter.test.ts @ 0edc82530e7d4df169183a1cf63255c4271ff0a4 — 3
 *   (its third case is about InMemoryStore's ':' path separator, which memwarden does not have;
 *   re-expressed as the hierarchical search it also checks)
 * - libs/checkpoint-postgres/src/tests/store/vector-search.int.test.ts and hybrid-search.int.test.ts
 *   @ 116fc467ff384ecedab7fbc0337a593e318f6ba8 — the 3 cases that use only `search` (the rest call
 *   PostgresStore-only methods: vectorSearch, hybridSearch, getStats).
 *
 * The control is the installed @langchain/langgraph-checkpoint; cases written against a newer
 * InMemoryStore than the one installed, which the installed control fails, run on memwarden only
 * (`CONTROL_FAILS`, each with the reason). docs/compatibility.md counts them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  AsyncBatchedStore,
  type BaseStore,
  InMemoryStore,
  InvalidNamespaceError,
} from '@langchain/langgraph-checkpoint';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MemwardenStore } from '../../src/integrations/langgraph/index.js';
import { Memory } from '../../src/open.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

let dir = '';
let mem: Memory;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mw-compat-lgvec-'));
  mem = await Memory.open({ dataDir: dir, ephemeral: true, embedder: 'deterministic' });
});
afterAll(async () => {
  await mem?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The embedding side of a LangChain `Embeddings`, as the specs hand their stores one. */
abstract class TestEmbeddings {
  abstract embedQuery(text: string): Promise<number[]>;
  async embedDocuments(texts: string[]): Promise<number[][]> {
    return Promise.all(texts.map((t) => this.embedQuery(t)));
  }
}
/** vector.test.ts's model: a normalised histogram of character codes. */
class CharacterEmbeddings extends TestEmbeddings {
  constructor(readonly dims = 500) {
    super();
  }
  async embedQuery(text: string): Promise<number[]> {
    const v = new Array<number>(this.dims).fill(0);
    for (let i = 0; i < text.length && i < this.dims; i++) v[text.charCodeAt(i) % this.dims]! += 1;
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  }
}
/** The two-dimensional model of the pagination/delete/replacement specs: one word is [1,0]. */
class OneWord extends TestEmbeddings {
  constructor(
    private readonly word: string,
    private readonly queryAlways = false,
  ) {
    super();
  }
  async embedQuery(text: string): Promise<number[]> {
    return this.queryAlways || text === this.word ? [1, 0] : [0, 1];
  }
  override async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map((t) => (t === this.word ? [1, 0] : [0, 1]));
  }
}

interface IndexOpts {
  readonly dims: number;
  readonly embeddings: TestEmbeddings;
  readonly fields?: string[];
}
let n = 0;
type Make = (index?: IndexOpts) => Promise<BaseStore>;
const STORES: [string, Make][] = [
  [
    'InMemoryStore (control)',
    async (index) =>
      index === undefined ? new InMemoryStore() : new InMemoryStore({ index: index as never }),
  ],
  [
    'MemwardenStore',
    async (index) =>
      new MemwardenStore({
        memory: mem,
        principal: (await mem.createPrincipal('user', `lgv-${++n}`)).id,
        ...(index === undefined ? {} : { index }),
      }),
  ],
];

/**
 * Cases the installed InMemoryStore (@langchain/langgraph-checkpoint 1.2.2) fails: the specs were
 * written against a newer InMemoryStore (a re-put replaces an item's vectors and a delete removes
 * them; an offset runs across scored and then unscored items). They run on memwarden only.
 */
const CONTROL_FAILS = new Set<string>([
  ...[3, 4, 5, 6, 8].map((o) => `pages scored then unscored items at offset ${o}`),
  'applies the offset when every match is unindexed',
  'filters before counting scored and unscored items',
  'an item with several vectors counts once when skipping',
  "a deleted item's vectors are not reused when it is put again with index: false",
  "a deleted item's vectors are not reused when it is put again with a missing indexed field",
  'every vector of a deleted item is gone before it is indexed again',
  'batch deletes clean their own vectors only',
  ...[
    'disabled indexing',
    'an empty index list',
    'a missing indexed field',
    'a different indexed field',
  ].map((w) => `a re-put replaces the previous vectors: ${w}`),
  'array vectors replaced: ["banana","apple"] → ["banana"]',
  'array vectors replaced: ["banana","banana","apple"] → ["banana","banana"]',
  'array vectors replaced: ["apple"] → ["banana","banana"]',
  'array vectors replaced: ["banana","apple"] → []',
  'a batch embeds each distinct text once and maps vectors to their items',
  'only the last put of an item in a batch counts',
  'a failed embedding (missing embedding) leaves every value and vector as it was',
]);
/**
 * Cases neither store can run with the installed LangGraph: its `AsyncBatchedStore` (1.2.2)
 * drops a put's `index` argument (`put(namespace, key, value)`), which is what they test.
 */
const QUEUE_DROPS_INDEX = new Set<string>([
  ...['disabled', 'no fields', 'selected field', 'wildcard fields', 'missing field'].map(
    (w) => `the put's index option (${w}) survives the queue`,
  ),
  'concurrent puts with their own index options share one batch and one embedding call',
  'an unindexed put never calls a failing embedding provider',
]);
const only = (name: string, title: string): boolean =>
  QUEUE_DROPS_INDEX.has(title) || (name.startsWith('InMemoryStore') && CONTROL_FAILS.has(title));

const scores = (r: { key: string; score?: number }[]): Record<string, number | undefined> =>
  Object.fromEntries(r.map(({ key, score }) => [key, score]));

describe.each(STORES)('%s', (name, make) => {
  const t = (title: string, fn: () => Promise<void>): void =>
    (only(name, title) ? it.skip : it)(title, fn);

  // ---- vector.test.ts ---------------------------------------------------------------------------
  describe('vector.test.ts', () => {
    const emb = new CharacterEmbeddings(500);
    const mk = (fields?: string[]): Promise<BaseStore> =>
      make({ dims: 500, embeddings: emb, ...(fields === undefined ? {} : { fields }) });

    t('exposes the index configuration it was given', async () => {
      const store = (await mk()) as BaseStore & { indexConfig?: IndexOpts };
      expect(store.indexConfig?.dims).toBe(500);
      expect(store.indexConfig?.embeddings).toBe(emb);
    });

    t('embeds documents on put and finds the longer texts for "long text"', async () => {
      const store = await mk();
      const docs: [string, Record<string, string>][] = [
        ['doc1', { text: 'short text' }],
        ['doc2', { text: 'longer text document' }],
        ['doc3', { text: 'longest text document here' }],
        ['doc4', { description: 'text in description field' }],
        ['doc5', { content: 'text in content field' }],
        ['doc6', { body: 'text in body field' }],
      ];
      for (const [k, v] of docs) await store.put(['test'], k, v);
      const keys = (await store.search(['test'], { query: 'long text' })).map((r) => r.key);
      expect(keys).toContain('doc2');
      expect(keys).toContain('doc3');
    });

    t('re-embeds a document when it is updated', async () => {
      const store = await mk();
      await store.put(['test'], 'doc1', { text: 'zany zebra Xerxes' });
      await store.put(['test'], 'doc2', { text: 'something about dogs' });
      await store.put(['test'], 'doc3', { text: 'text about birds' });
      const first = await store.search(['test'], { query: 'Zany Xerxes' });
      expect(first[0]?.key).toBe('doc1');
      const before = first[0]!.score!;
      expect(before).toBeTypeOf('number');
      await store.put(['test'], 'doc1', { text: 'new text about dogs' });
      const after =
        (await store.search(['test'], { query: 'Zany Xerxes' })).find((r) => r.key === 'doc1')
          ?.score ?? 0;
      expect(after).toBeLessThan(before);
      const fresh = (await store.search(['test'], { query: 'new text about dogs' })).find(
        (r) => r.key === 'doc1',
      )?.score;
      expect(fresh).toBeGreaterThan(after);
    });

    t('lists a document put with index: false beside the indexed one', async () => {
      const store = await mk();
      await store.put(['test'], 'doc1', { text: 'new text about dogs' });
      await store.put(['test'], 'doc2', { text: 'new text about dogs' }, false);
      const keys = (await store.search(['test'], { query: 'new text about dogs', limit: 3 })).map(
        (r) => r.key,
      );
      expect(keys).toEqual(expect.arrayContaining(['doc1', 'doc2']));
    });

    t('combines ranking with equality and comparison filters', async () => {
      const store = await mk();
      const docs: [string, Record<string, unknown>][] = [
        ['doc1', { text: 'red apple', color: 'red', score: 4.5 }],
        ['doc2', { text: 'red car', color: 'red', score: 3.0 }],
        ['doc3', { text: 'green apple', color: 'green', score: 4.0 }],
        ['doc4', { text: 'blue car', color: 'blue', score: 3.5 }],
      ];
      for (const [k, v] of docs) await store.put(['test'], k, v);
      let r = await store.search(['test'], { query: 'apple', filter: { color: 'red' } });
      expect(r.map((x) => x.key)).toHaveLength(2);
      expect(r[0]!.key).toBe('doc1');
      r = await store.search(['test'], { query: 'car', filter: { color: 'red' } });
      expect(r).toHaveLength(2);
      expect(r[0]!.key).toBe('doc2');
      r = await store.search(['test'], { query: 'bbbbluuu', filter: { score: { $gt: 3.2 } } });
      expect(r).toHaveLength(3);
      expect(r[0]!.key).toBe('doc4');
      r = await store.search(['test'], {
        query: 'apple',
        filter: { score: { $gte: 4.0 }, color: 'green' },
      });
      expect(r.map((x) => x.key)).toEqual(['doc3']);
    });

    t('store-level fields: only those fields are ranked', async () => {
      const store = await mk(['key0', 'key1', 'key3']);
      await store.put(['test'], 'doc1', { key1: 'xxx', key2: 'yyy', key3: 'zzz' });
      await store.put(['test'], 'doc2', { key0: 'uuu', key1: 'vvv', key2: 'www', key3: 'xxx' });
      const r1 = await store.search(['test'], { query: 'xxx' });
      expect(r1).toHaveLength(2);
      expect(r1[0]!.key).not.toBe(r1[1]!.key);
      expect(r1[0]!.score).toBe(r1[1]!.score);
      const base = r1[0]!.score!;
      const r2 = await store.search(['test'], { query: 'uuu' });
      expect(r2[0]!.key).toBe('doc2');
      expect(r2[0]!.score).toBeGreaterThan(r2[1]!.score!);
      expect(r2[0]!.score).toBeCloseTo(base, 5);
      const r3 = await store.search(['test'], { query: 'www' }); // key2 is not indexed
      expect(r3).toHaveLength(2);
      for (const x of r3) expect(x.score).toBeLessThan(base);
    });

    t('per-put fields override the store’s; index: false is listed unscored', async () => {
      const store = await mk(['key17']);
      await store.put(['test'], 'doc3', { key0: 'aaa', key1: 'bbb', key2: 'ccc', key3: 'ddd' }, [
        'key0',
        'key1',
      ]);
      await store.put(['test'], 'doc4', { key0: 'eee', key1: 'bbb', key2: 'fff', key3: 'ggg' }, [
        'key1',
        'key3',
      ]);
      const r1 = await store.search(['test'], { query: 'aaa' });
      expect(r1[0]!.key).toBe('doc3');
      expect(r1[0]!.score).toBeGreaterThan(r1[1]!.score!);
      const r2 = await store.search(['test'], { query: 'ggg' });
      expect(r2[0]!.key).toBe('doc4');
      expect(r2[0]!.score).toBeGreaterThan(r2[1]!.score!);
      const r3 = await store.search(['test'], { query: 'bbb' });
      expect(r3[0]!.score).toBe(r3[1]!.score);
      const r4 = await store.search(['test'], { query: 'ccc' });
      expect(r4.every((r) => r.score! < r1[0]!.score!)).toBe(true);
      await store.put(['test'], 'doc5', { key0: 'hhh', key1: 'iii' }, false);
      const r5 = await store.search(['test'], { query: 'hhh' });
      expect(r5).toHaveLength(3);
      expect(r5.find((r) => r.key === 'doc5')!.score).toBeUndefined();
    });
  });

  // ---- vector-pagination.test.ts ----------------------------------------------------------------
  describe('vector-pagination.test.ts', () => {
    const mk = (fields = ['text']): Promise<BaseStore> =>
      make({ dims: 2, embeddings: new OneWord('match', true), fields });
    const mixed = async (): Promise<BaseStore> => {
      const store = await mk();
      for (const [key, text, index] of [
        ['unindexed-1', 'match', false],
        ['indexed-1', 'match', undefined],
        ['unindexed-2', 'match', false],
        ['indexed-2', 'other', undefined],
        ['unindexed-3', 'match', false],
        ['unindexed-4', 'match', false],
      ] as const)
        await store.put(['docs'], key, { text }, index);
      return store;
    };
    const pages: [number, string[]][] = [
      [0, ['indexed-1', 'indexed-2']],
      [1, ['indexed-2', 'unindexed-1']],
      [2, ['unindexed-1', 'unindexed-2']],
      [3, ['unindexed-2', 'unindexed-3']],
      [4, ['unindexed-3', 'unindexed-4']],
      [5, ['unindexed-4']],
      [6, []],
      [8, []],
    ];
    for (const [offset, keys] of pages)
      t(`pages scored then unscored items at offset ${offset}`, async () => {
        const r = await (await mixed()).search(['docs'], { query: 'match', offset, limit: 2 });
        expect(r.map((x) => x.key)).toEqual(keys);
        for (const x of r)
          expect(x.score).toBe(
            x.key.startsWith('unindexed') ? undefined : x.key === 'indexed-1' ? 1 : 0,
          );
      });
    t('applies the offset when every match is unindexed', async () => {
      const store = await mk();
      for (const key of ['first', 'second', 'third'])
        await store.put(['docs'], key, { text: 'match' }, false);
      const r = await store.search(['docs'], { query: 'match', offset: 1, limit: 1 });
      expect(r.map((x) => x.key)).toEqual(['second']);
      expect(r[0]!.score).toBeUndefined();
      expect(await store.search(['docs'], { query: 'match', offset: 3, limit: 1 })).toEqual([]);
    });
    for (const offset of [0, 1, 3, 8])
      t(`limit 0 returns nothing at offset ${offset}`, async () => {
        expect(
          await (await mixed()).search(['docs'], { query: 'match', offset, limit: 0 }),
        ).toEqual([]);
      });
    t('filters before counting scored and unscored items', async () => {
      const store = await mk();
      await store.put(['docs'], 'excluded', { text: 'match', visible: false });
      await store.put(['docs'], 'indexed', { text: 'match', visible: true });
      for (const key of ['unindexed-1', 'unindexed-2'])
        await store.put(['docs'], key, { text: 'match', visible: true }, false);
      const r = await store.search(['docs'], {
        query: 'match',
        filter: { visible: true },
        offset: 2,
        limit: 1,
      });
      expect(r.map((x) => x.key)).toEqual(['unindexed-2']);
      expect(r[0]!.score).toBeUndefined();
    });
    t('an item with several vectors counts once when skipping', async () => {
      const store = await mk(['texts[*]']);
      await store.put(['docs'], 'indexed', { texts: ['match', 'other', 'match'] });
      for (const key of ['unindexed-1', 'unindexed-2', 'unindexed-3'])
        await store.put(['docs'], key, { texts: ['match'] }, false);
      const r = await store.search(['docs'], { query: 'match', offset: 2, limit: 2 });
      expect(r.map((x) => x.key)).toEqual(['unindexed-2', 'unindexed-3']);
      expect(r.every((x) => x.score === undefined)).toBe(true);
    });
    t('pages scored items by relevance', async () => {
      const store = await mk();
      await store.put(['docs'], 'lower-score', { text: 'other' });
      await store.put(['docs'], 'higher-score', { text: 'match' });
      const r = await store.search(['docs'], { query: 'match', offset: 1, limit: 1 });
      expect(r.map((x) => x.key)).toEqual(['lower-score']);
      expect(r[0]!.score).toBe(0);
    });
  });

  // ---- vector-delete.test.ts --------------------------------------------------------------------
  describe('vector-delete.test.ts', () => {
    const mk = (fields = ['text']): Promise<BaseStore> =>
      make({ dims: 2, embeddings: new OneWord('apple'), fields });
    for (const [what, value, index] of [
      ['index: false', { text: 'banana' }, false],
      ['a missing indexed field', { other: 'banana' }, undefined],
    ] as const)
      t(`a deleted item's vectors are not reused when it is put again with ${what}`, async () => {
        const store = await mk();
        await store.put(['docs'], 'doc', { text: 'apple' });
        expect(await store.search(['docs'], { query: 'apple' })).toMatchObject([
          { key: 'doc', score: 1 },
        ]);
        await store.delete(['docs'], 'doc');
        expect(await store.get(['docs'], 'doc')).toBeNull();
        await store.put(['docs'], 'doc', value, index);
        expect((await store.get(['docs'], 'doc'))?.value).toEqual(value);
        const r = await store.search(['docs'], { query: 'apple' });
        expect(r).toHaveLength(1);
        expect(r[0]!.score).toBeUndefined();
      });
    t('every vector of a deleted item is gone before it is indexed again', async () => {
      const store = await mk(['texts[*]']);
      await store.put(['docs'], 'doc', { texts: ['banana', 'apple'] });
      await store.delete(['docs'], 'doc');
      await store.put(['docs'], 'doc', { texts: ['banana'] });
      const old = await store.search(['docs'], { query: 'apple' });
      expect(old).toHaveLength(1);
      expect(old[0]).toMatchObject({ value: { texts: ['banana'] }, score: 0 });
      expect(await store.search(['docs'], { query: 'banana' })).toMatchObject([
        { key: 'doc', score: 1 },
      ]);
    });
    t('batch deletes clean their own vectors only', async () => {
      const store = await mk();
      await store.batch([
        { namespace: ['docs'], key: 'first', value: { text: 'apple' } },
        { namespace: ['docs'], key: 'second', value: { text: 'apple' } },
        { namespace: ['docs'], key: 'kept', value: { text: 'apple' } },
        { namespace: ['other'], key: 'first', value: { text: 'apple' } },
      ]);
      await store.batch([
        { namespace: ['docs'], key: 'first', value: null },
        { namespace: ['docs'], key: 'second', value: null },
        { namespace: ['docs'], key: 'new', value: { text: 'banana' } },
      ]);
      expect(await store.get(['docs'], 'first')).toBeNull();
      expect(await store.get(['docs'], 'second')).toBeNull();
      await store.batch([
        { namespace: ['docs'], key: 'first', value: { text: 'banana' }, index: false },
        { namespace: ['docs'], key: 'second', value: { text: 'banana' }, index: false },
      ]);
      expect(scores(await store.search(['docs'], { query: 'apple' }))).toEqual({
        kept: 1,
        new: 0,
        first: undefined,
        second: undefined,
      });
      expect(await store.search(['other'], { query: 'apple' })).toMatchObject([
        { key: 'first', score: 1 },
      ]);
    });
    t('deleting an item without vectors is idempotent (index configured)', async () => {
      const store = await mk();
      await store.put(['docs'], 'kept', { text: 'apple' });
      await store.put(['docs'], 'unindexed', { text: 'banana' }, false);
      await store.delete(['docs'], 'unindexed');
      await store.delete(['docs'], 'unindexed');
      await store.delete(['docs'], 'missing');
      await store.delete(['missing'], 'missing');
      expect(await store.get(['docs'], 'unindexed')).toBeNull();
      expect(await store.get(['docs'], 'missing')).toBeNull();
      expect(await store.get(['missing'], 'missing')).toBeNull();
      expect(await store.search(['docs'], { query: 'apple' })).toMatchObject([
        { key: 'kept', score: 1 },
      ]);
    });
    t('deleting an item without vectors is idempotent (no index configured)', async () => {
      const store = await make();
      await store.put(['docs'], 'kept', { text: 'apple' });
      await store.put(['docs'], 'unindexed', { text: 'banana' }, false);
      await store.delete(['docs'], 'unindexed');
      await store.delete(['docs'], 'unindexed');
      await store.delete(['docs'], 'missing');
      await store.delete(['missing'], 'missing');
      expect(await store.get(['docs'], 'unindexed')).toBeNull();
      expect(await store.get(['missing'], 'missing')).toBeNull();
      const r = await store.search(['docs'], { query: 'apple' });
      expect(r.map((x) => x.key)).toEqual(['kept']);
      // Departure: without an index config LangGraph's stores do not rank (no score); memwarden
      // always has an embedder, and ranks with its own (docs/compatibility.md).
      if (name.startsWith('InMemoryStore')) expect(r[0]!.score).toBeUndefined();
      else expect(r[0]!.score).toBeTypeOf('number');
    });
  });

  // ---- vector-replacement.test.ts ---------------------------------------------------------------
  describe('vector-replacement.test.ts', () => {
    const setup = async (
      fields = ['text'],
    ): Promise<{ store: BaseStore; embeddings: TestEmbeddings }> => {
      const embeddings = new OneWord('apple');
      return { store: await make({ dims: 2, embeddings, fields }), embeddings };
    };
    for (const [what, value, index, score] of [
      ['disabled indexing', { text: 'banana' }, false, undefined],
      ['an empty index list', { text: 'banana' }, [], undefined],
      ['a missing indexed field', { other: 'banana' }, undefined, undefined],
      ['a different indexed field', { text: 'apple', other: 'banana' }, ['other'], 0],
    ] as const)
      t(`a re-put replaces the previous vectors: ${what}`, async () => {
        const { store } = await setup();
        await store.put(['docs'], 'doc', { text: 'apple' });
        await store.put(['docs'], 'doc', value, index as false | string[] | undefined);
        expect((await store.get(['docs'], 'doc'))?.value).toEqual(value);
        const r = await store.search(['docs'], { query: 'apple' });
        expect(r).toHaveLength(1);
        expect(r[0]!.score).toBe(score);
      });
    for (const [before, after, score] of [
      [['banana', 'apple'], ['banana'], 0],
      [['banana', 'banana', 'apple'], ['banana', 'banana'], 0],
      [['apple'], ['banana', 'banana'], 0],
      [['banana', 'apple'], [], undefined],
    ] as const)
      t(
        `array vectors replaced: ${JSON.stringify(before)} → ${JSON.stringify(after)}`,
        async () => {
          const { store } = await setup(['texts[*]']);
          await store.put(['docs'], 'doc', { texts: [...before] });
          await store.put(['docs'], 'doc', { texts: [...after] });
          expect((await store.get(['docs'], 'doc'))?.value).toEqual({ texts: after });
          const r = await store.search(['docs'], { query: 'apple' });
          expect(r).toHaveLength(1);
          expect(r[0]!.score).toBe(score);
        },
      );
    t('a re-put on the same field path replaces its vector', async () => {
      const { store } = await setup();
      await store.put(['docs'], 'doc', { text: 'apple' });
      await store.put(['docs'], 'doc', { text: 'banana' });
      expect(await store.search(['docs'], { query: 'apple' })).toMatchObject([
        { value: { text: 'banana' }, score: 0 },
      ]);
      expect(await store.search(['docs'], { query: 'banana' })).toMatchObject([
        { key: 'doc', score: 1 },
      ]);
    });
    t('a batch embeds each distinct text once and maps vectors to their items', async () => {
      const { store, embeddings } = await setup(['texts[*]']);
      for (const key of ['first', 'second', 'kept', 'unindexed'])
        await store.put(['docs'], key, { texts: ['apple'] });
      await store.put(['other'], 'first', { texts: ['apple'] });
      const embed = vi.spyOn(embeddings, 'embedDocuments');
      await store.batch([
        { namespace: ['docs'], key: 'first', value: { texts: ['banana', 'banana'] } },
        { namespace: ['docs'], key: 'second', value: { texts: ['banana'] } },
        { namespace: ['new'], key: 'first', value: { texts: ['apple'] } },
        { namespace: ['docs'], key: 'unindexed', value: { texts: ['apple'] }, index: false },
      ]);
      expect(embed).toHaveBeenCalledExactlyOnceWith(['banana', 'apple']);
      expect(scores(await store.search(['docs'], { query: 'apple' }))).toEqual({
        first: 0,
        second: 0,
        kept: 1,
        unindexed: undefined,
      });
      for (const ns of [['other'], ['new']])
        expect(await store.search(ns, { query: 'apple' })).toMatchObject([
          { key: 'first', score: 1 },
        ]);
    });
    t('only the last put of an item in a batch counts', async () => {
      const { store, embeddings } = await setup();
      await store.put(['docs'], 'doc', { text: 'apple' });
      const embed = vi.spyOn(embeddings, 'embedDocuments');
      await store.batch([
        { namespace: ['docs'], key: 'doc', value: { text: 'banana' } },
        { namespace: ['docs'], key: 'doc', value: { text: 'final' }, index: false },
      ]);
      expect(embed).not.toHaveBeenCalled();
      expect((await store.get(['docs'], 'doc'))?.value).toEqual({ text: 'final' });
      const r = await store.search(['docs'], { query: 'apple' });
      expect(r).toHaveLength(1);
      expect(r[0]!.score).toBeUndefined();
    });
    for (const failure of ['provider rejection', 'missing embedding'])
      t(`a failed embedding (${failure}) leaves every value and vector as it was`, async () => {
        const { store, embeddings } = await setup();
        for (const key of ['first', 'second', 'unindexed'])
          await store.put(['docs'], key, { text: 'apple' });
        const embed = vi.spyOn(embeddings, 'embedDocuments');
        if (failure === 'provider rejection')
          embed.mockRejectedValueOnce(new Error('Embedding provider failed'));
        else embed.mockResolvedValueOnce([[0, 1]]);
        await expect(
          store.batch([
            { namespace: ['docs'], key: 'unindexed', value: { text: 'banana' }, index: false },
            { namespace: ['docs'], key: 'first', value: { text: 'banana' } },
            { namespace: ['docs'], key: 'second', value: { text: 'cherry' } },
            { namespace: ['docs'], key: 'new', value: { text: 'banana' } },
          ]),
        ).rejects.toThrow(
          failure === 'provider rejection'
            ? 'Embedding provider failed'
            : 'No embedding found for text: cherry',
        );
        for (const key of ['first', 'second', 'unindexed'])
          expect((await store.get(['docs'], key))?.value).toEqual({ text: 'apple' });
        expect(await store.get(['docs'], 'new')).toBeNull();
        const r = await store.search(['docs'], { query: 'apple' });
        expect(r).toHaveLength(3);
        expect(r.every((x) => x.score === 1)).toBe(true);
      });
  });

  // ---- batched-store-index.test.ts (through LangGraph's AsyncBatchedStore) ----------------------
  describe('batched-store-index.test.ts', () => {
    const queued = async (): Promise<{
      store: BaseStore;
      underlying: BaseStore;
      embeddings: TestEmbeddings;
      stop: () => Promise<void>;
    }> => {
      const embeddings = new OneWord('target');
      const underlying = await make({ dims: 2, embeddings, fields: ['text'] });
      const queue = new AsyncBatchedStore(underlying);
      queue.start();
      return { store: queue, underlying, embeddings, stop: () => queue.stop() };
    };
    for (const [what, index, texts, score] of [
      ['disabled', false, [], undefined],
      ['no fields', [], [], undefined],
      ['default fields', undefined, ['default'], 0],
      ['selected field', ['alternate'], ['target'], 1],
      ['wildcard fields', ['chapters[*].content'], ['target', 'other'], 1],
      ['missing field', ['missing'], [], undefined],
    ] as const)
      t(`the put's index option (${what}) survives the queue`, async () => {
        const { store, embeddings, stop } = await queued();
        try {
          const embed = vi.spyOn(embeddings, 'embedDocuments');
          const value = {
            text: 'default',
            alternate: 'target',
            chapters: [{ content: 'target' }, { content: 'other' }],
          };
          await store.put(['docs'], 'item', value, index as false | string[] | undefined);
          expect((await store.get(['docs'], 'item'))?.value).toEqual(value);
          if (texts.length > 0) expect(embed).toHaveBeenCalledExactlyOnceWith([...texts]);
          else expect(embed).not.toHaveBeenCalled();
          const r = await store.search(['docs'], { query: 'target' });
          expect(r).toHaveLength(1);
          expect(r[0]!.score).toBe(score);
        } finally {
          await stop();
        }
      });
    t(
      'concurrent puts with their own index options share one batch and one embedding call',
      async () => {
        const { store, underlying, embeddings, stop } = await queued();
        try {
          const batch = vi.spyOn(underlying, 'batch');
          const embed = vi.spyOn(embeddings, 'embedDocuments');
          const value = { text: 'default', alternate: 'target' };
          await Promise.all([
            store.put(['docs'], 'disabled', value, false),
            store.put(['docs'], 'selected', value, ['alternate']),
            store.put(['docs'], 'default', value),
          ]);
          expect(batch).toHaveBeenCalledTimes(1);
          expect(batch.mock.calls[0]![0]).toHaveLength(3);
          expect(embed).toHaveBeenCalledTimes(1);
          expect([...embed.mock.calls[0]![0]].sort()).toEqual(['default', 'target']);
          expect(scores(await store.search(['docs'], { query: 'target' }))).toEqual({
            selected: 1,
            default: 0,
            disabled: undefined,
          });
        } finally {
          await stop();
        }
      },
    );
    t('an unindexed put never calls a failing embedding provider', async () => {
      const { store, embeddings, stop } = await queued();
      try {
        const embed = vi
          .spyOn(embeddings, 'embedDocuments')
          .mockRejectedValue(new Error('Embedding unavailable'));
        await store.put(['docs'], 'item', { text: 'local only' }, false);
        expect((await store.get(['docs'], 'item'))?.value).toEqual({ text: 'local only' });
        expect(embed).not.toHaveBeenCalled();
      } finally {
        await stop();
      }
    });
  });

  // ---- store-delimiter.test.ts ------------------------------------------------------------------
  describe('store-delimiter.test.ts', () => {
    for (const batched of [false, true])
      t(`a dotted label is refused before dispatch (batched: ${batched})`, async () => {
        const underlying = await make();
        const queue = batched ? new AsyncBatchedStore(underlying) : undefined;
        queue?.start();
        const store = queue ?? underlying;
        try {
          await underlying.put(['tenant', 'alice', 'files'], 'secret', { text: 'original' });
          const batch = vi.spyOn(underlying, 'batch');
          const alias = ['tenant', 'alice.files'];
          await expect(store.get(alias, 'secret')).rejects.toThrow(InvalidNamespaceError);
          await expect(store.delete(alias, 'secret')).rejects.toThrow(InvalidNamespaceError);
          await expect(store.put(alias, 'secret', { text: 'overwrite' })).rejects.toThrow(
            InvalidNamespaceError,
          );
          await expect(store.search(alias)).rejects.toThrow(InvalidNamespaceError);
          expect(batch).not.toHaveBeenCalled();
          expect((await underlying.get(['tenant', 'alice', 'files'], 'secret'))?.value).toEqual({
            text: 'original',
          });
        } finally {
          await queue?.stop();
        }
      });
    t('a dotted listing filter is refused; wildcards and hierarchical search stay', async () => {
      const store = await make();
      await store.put(['tenant', 'alice', 'files'], 'secret', { text: 'original' });
      await expect(store.listNamespaces({ prefix: ['tenant.alice'] })).rejects.toThrow(
        InvalidNamespaceError,
      );
      await expect(store.listNamespaces({ suffix: ['alice.files'] })).rejects.toThrow(
        InvalidNamespaceError,
      );
      expect(await store.listNamespaces({ prefix: ['tenant', '*'] })).toEqual([
        ['tenant', 'alice', 'files'],
      ]);
      expect((await store.search(['tenant', 'alice']))[0]?.namespace).toEqual([
        'tenant',
        'alice',
        'files',
      ]);
      expect(await store.search([])).toHaveLength(1);
    });
  });

  // ---- checkpoint-postgres vector-search / hybrid-search: the cases that use only search() --------
  describe('vector-search.int / hybrid-search.int (search() only)', () => {
    /** The Postgres specs' embedding: a sine of character codes, 128 dims; calls recorded. */
    const sine = (): TestEmbeddings & { calls: string[][] } => {
      const e = new (class extends TestEmbeddings {
        calls: string[][] = [];
        async embedQuery(text: string): Promise<number[]> {
          return (await this.embedDocuments([text]))[0]!;
        }
        override async embedDocuments(texts: string[]): Promise<number[][]> {
          this.calls.push(texts);
          return texts.map((text, index) =>
            Array.from({ length: 128 }, (_, i) =>
              Math.sin((text.charCodeAt(i % text.length) + index) * 0.1),
            ),
          );
        }
      })();
      return e;
    };
    const docs = async (store: BaseStore): Promise<void> => {
      await store.put(['docs'], 'doc1', {
        title: 'Machine Learning Guide',
        content: 'Comprehensive guide to machine learning algorithms and techniques',
      });
      await store.put(['docs'], 'doc2', {
        title: 'Data Science Handbook',
        content: 'Statistical methods and data analysis for scientists',
      });
      await store.put(['docs'], 'doc3', {
        title: 'AI Research Paper',
        content: 'Latest research in artificial intelligence and neural networks',
      });
    };
    t('mode "vector" through search(): scored results, the model was called', async () => {
      const e = sine();
      const store = await make({ dims: 128, embeddings: e, fields: ['content', 'title'] });
      await store.put(['unified'], 'doc1', {
        title: 'Neural Networks',
        content: 'Deep learning architectures and applications',
      });
      const r = await store.search(['unified'], {
        query: 'artificial intelligence',
        mode: 'vector',
        similarityThreshold: 0.1,
      } as never);
      expect(r.length).toBeGreaterThan(0);
      expect(r[0]!.score).toBeDefined();
      expect(e.calls.length).toBeGreaterThan(0);
    });
    t('mode "auto" with a model configured embeds the query', async () => {
      const e = sine();
      const store = await make({ dims: 128, embeddings: e, fields: ['content', 'title'] });
      await store.put(['auto'], 'doc1', {
        title: 'Machine Learning',
        content: 'Algorithms for pattern recognition',
      });
      const r = await store.search(['auto'], {
        query: 'data science techniques',
        mode: 'auto',
      } as never);
      expect(Array.isArray(r)).toBe(true);
      expect(e.calls.at(-1)).toContain('data science techniques');
    });
    t('mode "hybrid" through search(): every result scored', async () => {
      const e = sine();
      const store = await make({ dims: 128, embeddings: e, fields: ['content', 'title'] });
      await docs(store);
      const r = await store.search(['docs'], {
        query: 'machine learning algorithms',
        mode: 'hybrid',
        vectorWeight: 0.7,
        limit: 10,
      } as never);
      expect(r.length).toBeGreaterThan(0);
      expect(r.every((x) => typeof x.score === 'number')).toBe(true);
      expect(e.calls.length).toBeGreaterThan(0);
    });
  });
});

describe('MemwardenStore: index.embed as PostgresStore takes it (a function of texts)', () => {
  it('ranks with the function, embeds only the fields a put names, never for index: false', async () => {
    const calls: string[][] = [];
    const embed = async (texts: string[]): Promise<number[][]> => {
      calls.push(texts);
      return texts.map((t) => (t.includes('summary') || t.includes('Summary') ? [1, 0] : [0, 1]));
    };
    const store = new MemwardenStore({
      memory: mem,
      principal: (await mem.createPrincipal('user', `lgv-${++n}`)).id,
      index: { dims: 2, embed, fields: ['content', 'title'] },
    });
    await store.put(['no-index'], 'doc1', { title: 'Not Indexed', content: 'not indexed' }, false);
    expect(calls).toHaveLength(0);
    await store.put(
      ['selective'],
      'doc1',
      {
        title: 'Selective Indexing Test',
        content: 'Main content here',
        summary: 'Summary text here',
      },
      ['title', 'summary'],
    );
    expect(calls).toEqual([['Selective Indexing Test', 'Summary text here']]);
    const r = await store.search(['selective'], { query: 'summary text' });
    expect(r).toMatchObject([{ key: 'doc1', score: 1 }]);
    expect(calls.at(-1)).toEqual(['summary text']);
  });
});
