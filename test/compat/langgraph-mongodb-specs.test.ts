/**
 * LangGraph.js's MongoDB store integration spec, re-expressed and run against LangGraph's
 * `InMemoryStore` (the control) and `MemwardenStore` over the real Memory (embedded PGlite),
 * store class swapped, through `batch` as the spec drives its store.
 *
 * SOURCE (cases re-expressed, not copied; MIT licence): langchain-ai/langgraphjs,
 * libs/checkpoint-mongodb/src/tests/store.int.test.ts @ 010210c107e695af3ee5ce2afce8a58997565944 —
 * 25 cases (put/get 3, delete 1, listNamespaces 3, batch 1, per-item index 3, search 10,
 * vector search 4). The spec's two stores (one plain, one with its hashing embedding model) are
 * two stores here too; each group seeds its own, as the spec's beforeAll does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type BaseStore,
  type GetOperation,
  InMemoryStore,
  type Item,
  type ListNamespacesOperation,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from '@langchain/langgraph-checkpoint';
import { afterAll, beforeAll, describe, expect, it as vitestIt, vi } from 'vitest';
import { MemwardenStore } from '../../src/integrations/langgraph/index.js';
import { Memory } from '../../src/open.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

let dir = '';
let mem: Memory;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mw-compat-lgmongo-'));
  mem = await Memory.open({ dataDir: dir, ephemeral: true, embedder: 'deterministic' });
});
afterAll(async () => {
  await mem?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The spec's model: ten sines of a 32-bit string hash. */
function hashVector(text: string): number[] {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  return Array.from({ length: 10 }, (_, i) => Math.sin((h + i) * 0.1));
}
const hashing = {
  embedDocuments: async (texts: string[]) => texts.map(hashVector),
  embedQuery: async (text: string) => hashVector(text),
};

let n = 0;
type Make = (withModel: boolean) => Promise<BaseStore>;
const STORES: [string, Make][] = [
  [
    'InMemoryStore (control)',
    async (withModel) =>
      withModel
        ? new InMemoryStore({ index: { dims: 10, embeddings: hashing as never } })
        : new InMemoryStore(),
  ],
  [
    'MemwardenStore',
    async (withModel) =>
      new MemwardenStore({
        memory: mem,
        principal: (await mem.createPrincipal('user', `lgm-${++n}`)).id,
        ...(withModel ? { index: { dims: 10, embeddings: hashing } } : {}),
      }),
  ],
];

const get = (namespace: string[], key: string): GetOperation => ({ namespace, key });
const list = (limit: number, offset: number): ListNamespacesOperation => ({ limit, offset });
const search = (
  namespacePrefix: string[],
  filter: Record<string, unknown>,
  extra: Partial<SearchOperation> = {},
): SearchOperation => ({ namespacePrefix, filter, limit: 100, offset: 0, ...extra });

/**
 * Cases the control fails, so they are not among "the tests InMemoryStore passes"; they run on
 * memwarden only: InMemoryStore answers a listing op without `matchConditions` with nothing (the
 * spec's `{limit, offset}` op).
 */
const CONTROL_FAILS = new Set([
  'lists every distinct namespace',
  'honours limit',
  'honours offset',
]);
/**
 * The peers disagree on what a put answers in a batch: this spec wants undefined, the Redis spec
 * and InMemoryStore null. memwarden answers null, as InMemoryStore; neither store runs this one.
 */
const PEERS_DISAGREE = new Set(['batch: two puts then a get of the first, results in order']);

describe.each(STORES)('%s', (name, make) => {
  const it = (title: string, fn: () => Promise<void>): void =>
    (PEERS_DISAGREE.has(title) || (name.startsWith('InMemoryStore') && CONTROL_FAILS.has(title))
      ? vitestIt.skip
      : vitestIt)(title, fn);
  it.fails = vitestIt.fails;
  describe('put and get', () => {
    let store: BaseStore;
    beforeAll(async () => {
      store = await make(false);
    });
    it('stores and reads back an item', async () => {
      await store.batch([
        {
          namespace: ['users', 'profiles'],
          key: 'user123',
          value: { name: 'Alice', email: 'alice@example.com' },
        },
      ]);
      const [item] = await store.batch([get(['users', 'profiles'], 'user123')]);
      expect(item?.value).toEqual({ name: 'Alice', email: 'alice@example.com' });
      expect(item?.namespace).toEqual(['users', 'profiles']);
      expect(item?.key).toBe('user123');
    });
    it('a second put updates the item', async () => {
      await store.batch([
        { namespace: ['docs'], key: 'doc1', value: { title: 'Original', version: 1 } },
      ]);
      await store.batch([
        { namespace: ['docs'], key: 'doc1', value: { title: 'Updated', version: 2 } },
      ]);
      const [item] = await store.batch([get(['docs'], 'doc1')]);
      expect(item?.value).toMatchObject({ title: 'Updated', version: 2 });
    });
    it('a missing item is null', async () => {
      expect((await store.batch([get(['nonexistent'], 'missing')]))[0]).toBeNull();
    });
    it('a put of null deletes', async () => {
      await store.batch([{ namespace: ['temp'], key: 'item1', value: { data: 'will delete' } }]);
      await store.batch([{ namespace: ['temp'], key: 'item1', value: null }]);
      expect((await store.batch([get(['temp'], 'item1')]))[0]).toBeNull();
    });
  });

  describe('listNamespaces', () => {
    let store: BaseStore;
    beforeAll(async () => {
      store = await make(false);
      const ops: PutOperation[] = [
        { namespace: ['threads'], key: 't1', value: { id: 1 } },
        { namespace: ['threads'], key: 't2', value: { id: 2 } },
        { namespace: ['threads', 'messages'], key: 'm1', value: { text: 'hi' } },
        { namespace: ['threads', 'messages'], key: 'm2', value: { text: 'bye' } },
        { namespace: ['users'], key: 'u1', value: { name: 'Alice' } },
        { namespace: ['users', 'profiles'], key: 'p1', value: { bio: '...' } },
      ];
      await store.batch(ops);
    });
    it('lists every distinct namespace', async () => {
      const [ns] = await store.batch([list(100, 0)]);
      for (const want of [['threads'], ['threads', 'messages'], ['users'], ['users', 'profiles']])
        expect(ns).toContainEqual(want);
    });
    it('honours limit', async () => {
      expect((await store.batch([list(2, 0)]))[0]!.length).toBeLessThanOrEqual(2);
    });
    it('honours offset', async () => {
      const [all] = await store.batch([list(100, 0)]);
      const [rest] = await store.batch([list(100, 2)]);
      expect(rest!.length).toBeLessThan(all!.length);
    });
  });

  it('batch: two puts then a get of the first, results in order', async () => {
    const store = await make(false);
    const r = await store.batch([
      { namespace: ['batch'], key: 'item1', value: { num: 1 } } as PutOperation,
      { namespace: ['batch'], key: 'item2', value: { num: 2 } } as PutOperation,
      get(['batch'], 'item1'),
    ]);
    expect(r[0]).toBeUndefined();
    expect(r[1]).toBeUndefined();
    expect((r[2] as Item | null)?.value).toEqual({ num: 1 });
  });

  describe('per-item index override (store with a model)', () => {
    let store: BaseStore;
    beforeAll(async () => {
      store = await make(true);
    });
    it('index: false stores the item all the same', async () => {
      await store.batch([
        {
          namespace: ['indexed'],
          key: 'doc1',
          value: { title: 'Searchable', content: 'This should be embedded' },
        },
        {
          namespace: ['indexed'],
          key: 'doc2',
          value: { title: 'NotSearchable', secret: 'This should not be embedded' },
          index: false,
        },
      ]);
      const r = await store.batch([get(['indexed'], 'doc1'), get(['indexed'], 'doc2')]);
      expect(r[0]?.value).toEqual({ title: 'Searchable', content: 'This should be embedded' });
      expect(r[1]?.value).toEqual({
        title: 'NotSearchable',
        secret: 'This should not be embedded',
      });
    });
    it('an index field list stores the whole value', async () => {
      const value = {
        title: 'Great Article',
        content: 'Long article content...',
        internalNotes: 'Editor notes - should not be searched',
      };
      await store.batch([
        { namespace: ['selective'], key: 'article1', value, index: ['title', 'content'] },
      ]);
      expect((await store.batch([get(['selective'], 'article1')]))[0]?.value).toEqual(value);
    });
    it('mixed index options in one batch', async () => {
      await store.batch([
        { namespace: ['mixed'], key: 'always', value: { searchable: 'yes' } },
        { namespace: ['mixed'], key: 'never', value: { searchable: 'no' }, index: false },
        {
          namespace: ['mixed'],
          key: 'selective',
          value: { field1: 'search me', field2: 'ignore me' },
          index: ['field1'],
        },
      ]);
      const r = await store.batch([
        get(['mixed'], 'always'),
        get(['mixed'], 'never'),
        get(['mixed'], 'selective'),
      ]);
      expect(r.map((x) => x?.value)).toEqual([
        { searchable: 'yes' },
        { searchable: 'no' },
        { field1: 'search me', field2: 'ignore me' },
      ]);
    });
  });

  describe('search with filters', () => {
    let store: BaseStore;
    const run = async (op: SearchOperation): Promise<SearchItem[]> => (await store.batch([op]))[0]!;
    beforeAll(async () => {
      store = await make(false);
      const ops: PutOperation[] = [
        {
          namespace: ['products'],
          key: 'prod1',
          value: { name: 'Budget Item', price: 29.99, category: 'electronics' },
        },
        {
          namespace: ['products'],
          key: 'prod2',
          value: { name: 'Standard Item', price: 99.99, category: 'electronics' },
        },
        {
          namespace: ['products'],
          key: 'prod3',
          value: { name: 'Premium Item', price: 299.99, category: 'electronics' },
        },
        {
          namespace: ['products'],
          key: 'prod4',
          value: { name: 'Book', price: 19.99, category: 'books' },
        },
        {
          namespace: ['users'],
          key: 'user1',
          value: { username: 'alice', status: 'active', score: 95 },
        },
        {
          namespace: ['users'],
          key: 'user2',
          value: { username: 'bob', status: 'inactive', score: 42 },
        },
        {
          namespace: ['users'],
          key: 'user3',
          value: { username: 'charlie', status: 'active', score: 87 },
        },
        {
          namespace: ['users', 'profiles'],
          key: 'profile1',
          value: { bio: 'Engineer', city: 'SF' },
        },
        {
          namespace: ['users', 'profiles'],
          key: 'profile2',
          value: { bio: 'Designer', city: 'NYC' },
        },
      ];
      await store.batch(ops);
    });
    it('exact match', async () => {
      const r = await run(search(['products'], { category: 'electronics' }));
      expect(r.length).toBeGreaterThan(0);
      expect(r.every((x) => x.value['category'] === 'electronics')).toBe(true);
    });
    it('$gt', async () => {
      const r = await run(search(['products'], { price: { $gt: 100 } }));
      expect(r.length).toBeGreaterThan(0);
      expect(r.every((x) => (x.value['price'] as number) > 100)).toBe(true);
    });
    it('$lte', async () => {
      const r = await run(search(['products'], { price: { $lte: 50 } }));
      expect(r.length).toBeGreaterThan(0);
      expect(r.every((x) => (x.value['price'] as number) <= 50)).toBe(true);
    });
    it('two conditions', async () => {
      const r = await run(search(['products'], { category: 'electronics', price: { $gte: 50 } }));
      expect(r.length).toBeGreaterThan(0);
      expect(
        r.every((x) => x.value['category'] === 'electronics' && (x.value['price'] as number) >= 50),
      ).toBe(true);
    });
    it('a deeper namespace prefix keeps only its items', async () => {
      const r = await run(search(['users', 'profiles'], {}));
      expect(r.length).toBeGreaterThan(0);
      expect(r.every((x) => JSON.stringify(x.namespace) === '["users","profiles"]')).toBe(true);
    });
    it('limit', async () => {
      expect((await run(search(['products'], {}, { limit: 2 }))).length).toBeLessThanOrEqual(2);
    });
    it('offset', async () => {
      const a = await run(search(['users'], { status: 'active' }));
      const b = await run(search(['users'], { status: 'active' }, { offset: 1 }));
      expect(b.length).toBeLessThanOrEqual(a.length);
    });
    // The control fails this case: a search's namespace is a prefix in LangGraph's BaseStore
    // contract, so ["users"] also returns ["users","profiles"] items (the MongoDB store matched
    // the namespace exactly). Not counted; kept to show the outcome on both stores.
    it.fails('an empty filter returns only the namespace’s own items (MongoDB-only)', async () => {
      const r = await run(search(['users'], {}));
      expect(r.length).toBeGreaterThan(0);
      expect(r.every((x) => JSON.stringify(x.namespace) === '["users"]')).toBe(true);
    });
    it('a filter nothing matches: empty', async () => {
      expect(await run(search(['products'], { category: 'nonexistent' }))).toEqual([]);
    });
    it('several fields with an operator', async () => {
      const r = await run(search(['users'], { status: 'active', score: { $gte: 85 } }));
      expect(r.length).toBeGreaterThan(0);
      expect(
        r.every((x) => x.value['status'] === 'active' && (x.value['score'] as number) >= 85),
      ).toBe(true);
    });
  });

  describe('vector search (store with a model)', () => {
    let store: BaseStore;
    const run = async (
      query: string,
      extra: Partial<SearchOperation> = {},
    ): Promise<SearchItem[]> =>
      (await store.batch([search(['documents'], {}, { query, ...extra })]))[0]!;
    beforeAll(async () => {
      store = await make(true);
      await store.batch([
        {
          namespace: ['documents'],
          key: 'doc1',
          value: { content: 'machine learning algorithms', topic: 'AI' },
        },
        {
          namespace: ['documents'],
          key: 'doc2',
          value: { content: 'deep neural networks', topic: 'AI' },
        },
        {
          namespace: ['documents'],
          key: 'doc3',
          value: { content: 'database indexing strategies', topic: 'databases' },
        },
        {
          namespace: ['documents'],
          key: 'doc4',
          value: { content: 'SQL query optimization', topic: 'databases' },
        },
      ]);
    });
    it('results carry a similarity score', async () => {
      const r = await run('machine learning');
      expect(r.length).toBeGreaterThan(0);
      expect(r[0]).toHaveProperty('score');
    });
    it('results are ranked by score', async () => {
      const r = await run('neural networks');
      expect(r.length).toBeGreaterThan(0);
      for (let i = 0; i < r.length - 1; i++)
        expect(r[i]!.score!).toBeGreaterThanOrEqual(r[i + 1]!.score!);
    });
    it('limit', async () => {
      expect((await run('data', { limit: 2 })).length).toBeLessThanOrEqual(2);
    });
    it('offset', async () => {
      const a = await run('network systems');
      const b = await run('network systems', { offset: 1 });
      expect(b.length).toBeLessThanOrEqual(a.length);
    });
  });
});
